"""Regular expressions written for PCRE (schema ``pattern``, ``patternProperties``, route regexes).

Schema patterns are matched as WordPress matches them: ``preg_match('#' . $escaped . '#u',
$value)``, every ``#`` escaped first. `compile_schema_pattern` reads them with the `regex`
package (Unicode properties ``\\p{L}``, possessive quantifiers, atomic groups, ``\\h``, ``\\R``
...) after `translate_pcre_u` has rewritten what PCRE2 spells differently (``\\x{00e9}``,
``\\Z``, ``\\s``, ``\\v``, ``\\Q…\\E``, ``\\e``, ``\\cX``, ``\\k<name>``, ``\\p{L&}``,
``\\p{Xan}`` and PCRE's other own properties, POSIX classes under Unicode rules) and refused
what PCRE2 refuses (``\\u00e9``, ``\\U``, ``\\L``, ``\\l``, ``\\N{name}``, ``[\\w-.]``, a
``\\#`` that ends the pattern at the delimiter): such a pattern matches nothing.
Matching is unanchored, case-sensitive and Unicode-aware (PHP sets ``PCRE2_UCP`` with ``/u``).

Route regexes (``@^route$@i``, no ``/u``) keep Python's `re`: `translate_pcre` rewrites the few
constructs that differ (``(?<name>…)`` groups, ``\\z``/``\\Z`` anchors, ``\\h``, POSIX
classes such as ``[[:alpha:]]``) and `compile_pcre` caches the compiled result.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

import regex

from sitecache.schema import php

__all__ = [
    "compile_pcre",
    "compile_schema_pattern",
    "pattern_matches",
    "translate_pcre",
    "translate_pcre_u",
]

_POSIX_CLASSES: Final = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": "!-\\/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\x0b\\x0c",
    "upper": "A-Z",
    "word": "\\w",
    "xdigit": "0-9A-Fa-f",
}
_POSIX_CLASS = re.compile(r"\[:(\^?)([a-z]+):\]")


def translate_pcre(pattern: str) -> str:
    """Rewrite the PCRE-only constructs of ``pattern`` into Python `re` syntax."""
    out: list[str] = []
    index, length = 0, len(pattern)
    in_class = False
    while index < length:
        char = pattern[index]
        if char == "\\" and index + 1 < length:
            escaped = pattern[index + 1]
            if not in_class and escaped == "z":
                out.append("\\Z")
            elif not in_class and escaped == "Z":
                out.append("(?=\\n?\\Z)")
            elif escaped == "h":
                out.append(" \\t" if in_class else "[ \\t]")
            else:
                out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            posix = _POSIX_CLASS.match(pattern, index)
            if posix and not posix.group(1) and posix.group(2) in _POSIX_CLASSES:
                out.append(_POSIX_CLASSES[posix.group(2)])
                index = posix.end()
                continue
            if char == "]":
                in_class = False
            elif char == "[" or (char in "&~|" and pattern[index + 1 : index + 2] == char):
                # Escaped so that Python neither reads a nested set nor warns about one.
                out.append("\\" + char)
                index += 1
                continue
            elif char == "-" and pattern[index + 1 : index + 2] == "-":
                out.append("-\\-")
                index += 2
                continue
        elif char == "[":
            in_class = True
            out.append(char)
            index += 1
            # A ']' right after '[' or '[^' is a literal member of the class.
            if index < length and pattern[index] == "^":
                out.append("^")
                index += 1
            if index < length and pattern[index] == "]":
                out.append("\\]")
                index += 1
            continue
        elif pattern.startswith("(?<", index) and pattern[index + 3 : index + 4] not in ("=", "!"):
            out.append("(?P<")
            index += 3
            continue
        out.append(char)
        index += 1
    return "".join(out)


@lru_cache(maxsize=2048)
def compile_pcre(pattern: str, flags: int = 0) -> re.Pattern[str] | None:
    """The compiled form of a PCRE ``pattern``, or ``None`` when it does not compile."""
    try:
        return re.compile(translate_pcre(pattern), flags)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None


def pattern_matches(pattern: object, value: object) -> bool | None:
    """Whether ``pattern`` matches anywhere in ``value`` as WordPress's
    ``rest_validate_json_schema_pattern``; ``None`` when PCRE would refuse the pattern."""
    text = pattern if isinstance(pattern, str) else _as_text(pattern)
    compiled = compile_schema_pattern(text)
    if compiled is None:
        return None
    return compiled.search(value if isinstance(value, str) else _as_text(value)) is not None


def _as_text(value: object) -> str:
    """PHP's string conversion for scalars (``true`` is ``"1"``); ``str()`` for anything else."""
    return php.to_php_string(value) if php.is_scalar(value) else str(value)


# ---------------------------------------------------------------------- schema patterns (/u)
_UCP_POSIX: Final = {
    # PCRE2_UCP's reading of the POSIX classes (PHP sets it with /u).
    "alpha": ("\\p{L}", "\\P{L}"),
    "digit": ("\\p{Nd}", "\\P{Nd}"),
    "lower": ("\\p{Ll}", "\\P{Ll}"),
    "upper": ("\\p{Lu}", "\\P{Lu}"),
    "cntrl": ("\\p{Cc}", "\\P{Cc}"),
    "space": ("\\s", "\\S"),
    "word": ("\\w", "\\W"),
    "blank": ("\\h", "\\H"),
    "alnum": ("\\p{L}\\p{N}", None),
    "xdigit": ("0-9A-Fa-f", None),
    "ascii": ("\\x00-\\x7f", None),
}
_VERTICAL_SPACE: Final = "\\n\\x0b\\f\\r\\x85\\u2028\\u2029"
_PCRE_SPACE: Final = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""PCRE2_UCP's ``\\s`` (``\\p{Xps}``: separators and tab to CR) as literal class members: neither
`re` (which adds U+001C-U+001F and U+0085) nor `regex` (U+0085) reads ``\\s`` so."""
_PCRE_PROPERTIES: Final = {
    # PCRE's own properties, spelled as class members `regex` knows.
    "L&": "\\p{Lu}\\p{Ll}\\p{Lt}",
    "Xan": "\\p{L}\\p{N}",
    "Xwd": "\\p{L}\\p{N}_",
    "Xsp": _PCRE_SPACE,
    "Xps": _PCRE_SPACE,
}
_REFUSED_ESCAPES: Final = frozenset("uULl")
"""PCRE2: "does not support \\F, \\L, \\l, \\N{name}, \\U, or \\u" (\\F is refused by regex too)."""
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")
_BRACED: Final = re.compile(r"\{([^}]*)\}")
_CLASS_ESCAPES: Final = frozenset("dDwWsShHvVpPRX")
_QUANTIFIER: Final = re.compile(r"\{\d+(?:,\d*)?\}")
_MAX_CODE_POINT: Final = 0x10FFFF


def _code_point(value: int) -> str | None:
    """A `regex` escape for one code point, or ``None`` beyond Unicode (PCRE refuses it)."""
    if value > _MAX_CODE_POINT:
        return None
    return f"\\U{value:08x}"


def _ends_at_delimiter(pattern: str) -> bool:
    """Whether ``#`` preceded by an odd run of backslashes closes ``#…#u`` early.

    WordPress escapes every ``#`` as ``\\#``; after ``\\`` that becomes ``\\\\#``, an escaped
    backslash and then the closing delimiter, so PCRE reads the rest as unknown modifiers.
    """
    run = 0
    for char in pattern:
        if char == "#" and run % 2 == 1:
            return True
        run = run + 1 if char == "\\" else 0
    return False


def _escape(pattern: str, index: int, in_class: bool) -> tuple[str | None, int]:
    """Translate the escape starting at ``pattern[index]`` (a backslash).

    Returns the `regex` text (``None`` when PCRE refuses it) and the index after the escape.
    """
    if index + 1 >= len(pattern):
        return None, index + 1  # a trailing backslash escapes the closing delimiter
    char = pattern[index + 1]
    after = index + 2
    if char in _REFUSED_ESCAPES:
        return None, after
    if char == "x":
        braced = _BRACED.match(pattern, after)
        if braced is not None:
            try:
                value = int(braced.group(1), 16)
            except ValueError:
                return None, braced.end()
            return _code_point(value), braced.end()
        end = after
        while end < min(after + 2, len(pattern)) and pattern[end] in _HEX_DIGITS:
            end += 1  # PCRE reads up to two hex digits; none at all is NUL
        return _code_point(int(pattern[after:end] or "0", 16)), end
    if char == "o":
        braced = _BRACED.match(pattern, after)
        if braced is None:
            return None, after
        try:
            return _code_point(int(braced.group(1), 8)), braced.end()
        except ValueError:
            return None, braced.end()
    if char == "N" and pattern.startswith("{", after) and not _QUANTIFIER.match(pattern, after):
        braced = _BRACED.match(pattern, after)
        if braced is None or not braced.group(1).startswith("U+"):
            return None, after  # \N{name} is refused; \N{U+hh} is a code point in UTF mode
        try:
            return _code_point(int(braced.group(1)[2:], 16)), braced.end()
        except ValueError:
            return None, braced.end()
    if char in "pP" and pattern.startswith("{", after):
        braced = _BRACED.match(pattern, after)
        if braced is not None:
            name = braced.group(1).replace(" ", "")
            negated = (char == "P") != name.startswith("^")
            members = _PCRE_PROPERTIES.get(name.lstrip("^"))
            if members is not None:
                if in_class:
                    return (None if negated else members), braced.end()
                return f"[{'^' if negated else ''}{members}]", braced.end()
    if char == "N" and not in_class:
        return "[^\\n]", after  # PCRE's \N: any character but a newline
    if char == "e":
        return "\\x1b", after
    if char == "c":
        if after >= len(pattern) or not pattern[after].isascii():
            return None, after + 1
        return _code_point(ord(pattern[after].upper()) ^ 0x40), after + 1
    if char == "s":
        return (_PCRE_SPACE if in_class else f"[{_PCRE_SPACE}]"), after
    if char == "S" and not in_class:
        return f"[^{_PCRE_SPACE}]", after
    if char in "vV":
        if in_class:
            return (_VERTICAL_SPACE if char == "v" else None), after
        return (f"[{'^' if char == 'V' else ''}{_VERTICAL_SPACE}]"), after
    if char == "Q":
        end = pattern.find("\\E", after)
        literal = pattern[after:] if end == -1 else pattern[after:end]
        escaped = "".join(f"\\U{ord(letter):08x}" for letter in literal)
        return escaped, len(pattern) if end == -1 else end + 2
    if char == "E":
        return "", after  # an \E without \Q is ignored
    if not in_class:
        if char == "Z":
            return "(?=\\n?\\z)", after
        if char == "k" and after < len(pattern) and pattern[after] in "<'{":
            closer = {"<": ">", "'": "'", "{": "}"}[pattern[after]]
            end = pattern.find(closer, after + 1)
            if end == -1 or not _NAME.fullmatch(pattern[after + 1 : end]):
                return None, after
            return f"(?P={pattern[after + 1 : end]})", end + 1
    return pattern[index:after], after


def _is_range_of_a_class(pattern: str, start: int, end: int) -> bool:
    """Whether the class escape ``pattern[start:end]`` is one end of a ``-`` range."""
    if pattern[start + 1] not in _CLASS_ESCAPES:
        return False
    opening = pattern[start - 2 : start - 1] in ("[", "") or pattern[start - 3 : start - 1] == "[^"
    before = pattern[start - 1 : start] == "-" and not opening
    after = pattern[end : end + 1] == "-" and pattern[end + 1 : end + 2] not in ("]", "")
    return before or after


def translate_pcre_u(pattern: str) -> str | None:
    """The `regex` (V0) form of a pattern WordPress wraps as ``#…#u``.

    ``None`` when PCRE would refuse the pattern.
    """
    if _ends_at_delimiter(pattern):
        return None
    out: list[str] = []
    index, length = 0, len(pattern)
    in_class = False
    while index < length:
        char = pattern[index]
        if char == "\\":
            start = index
            text, index = _escape(pattern, index, in_class)
            if text is None:
                return None
            if in_class and _is_range_of_a_class(pattern, start, index):
                return None  # PCRE2: "invalid range in character class" ([\w-.], [a-\d])
            out.append(text)
            continue
        if in_class:
            posix = _POSIX_CLASS.match(pattern, index)
            if posix is not None:
                positive, negative = _UCP_POSIX.get(posix.group(2), (None, None))
                replacement = negative if posix.group(1) else positive
                out.append(replacement if replacement is not None else posix.group())
                index = posix.end()
                continue
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            out.append(char)
            index += 1
            # A ']' right after '[' or '[^' is a literal member of the class.
            if index < length and pattern[index] == "^":
                out.append("^")
                index += 1
            if index < length and pattern[index] == "]":
                out.append("\\]")
                index += 1
            continue
        elif pattern.startswith("(?'", index):
            end = pattern.find("'", index + 3)
            if end == -1 or not _NAME.fullmatch(pattern[index + 3 : end]):
                return None
            out.append(f"(?P<{pattern[index + 3 : end]}>")
            index = end + 1
            continue
        out.append(char)
        index += 1
    return "".join(out)


_PLAIN_ESCAPES: Final = frozenset("dDwWbBAntrf")
_GROUP_OPENERS: Final = ("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>")


def _reads_the_same_in_re(pattern: str) -> bool:
    """Whether Python's `re` reads a translated ``pattern`` exactly as PCRE with ``/u`` does.

    True only for plain patterns: literals, classes without POSIX names, nested brackets or
    doubled ``-&~|``, the escapes ``\\d \\w \\b \\A \\n \\t \\r \\f`` (and their negations)
    or an escaped punctuation character, and the non-capturing, lookaround and atomic groups.
    """
    index, length = 0, len(pattern)
    in_class = False
    while index < length:
        char = pattern[index]
        if char == "\\":
            escaped = pattern[index + 1 : index + 2]
            if not escaped or (escaped.isalnum() and escaped not in _PLAIN_ESCAPES):
                return False
            if not escaped.isascii():
                return False
            index += 2
            continue
        if in_class:
            if char == "[" or (char in "-&~|" and pattern[index + 1 : index + 2] == char):
                return False
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            index += 1
            if pattern.startswith("^", index):
                index += 1
            if pattern.startswith("]", index):
                index += 1
            continue
        elif char == "(" and pattern.startswith("?", index + 1):
            if not pattern.startswith(_GROUP_OPENERS, index):
                return False
        elif char == "{" and pattern.startswith(",", index + 1):
            return False  # {,n} is a quantifier in re, literal text in PCRE
        index += 1
    return True


@lru_cache(maxsize=1024)
def compile_schema_pattern(pattern: str) -> re.Pattern[str] | regex.Pattern[str] | None:
    """The compiled form of a schema ``pattern`` read as PCRE with ``/u``, or ``None`` when PCRE
    would refuse it (the caller reports the misuse; the pattern then matches nothing).

    PERF: a plain pattern, which `re` reads as PCRE does, is compiled by `re` (its matching is
    several times faster than `regex`'s for short subjects); any other goes to `regex`.
    """
    translated = translate_pcre_u(pattern)
    if translated is None:
        return None
    if _reads_the_same_in_re(translated):
        try:
            return re.compile(translated)
        except (re.error, RecursionError, OverflowError, ValueError):
            pass  # `re` is stricter than PCRE here (lookbehind alternatives): ask `regex`
    try:
        return regex.compile(translated, regex.V0)
    except (regex.error, RecursionError, OverflowError, ValueError):
        return None
