"""Regular expressions written for PCRE (schema ``pattern``, ``patternProperties``, route regexes).

Schemas and routes carry patterns written for PHP's PCRE. Python's `re` reads nearly all of them
the same way; `translate_pcre` rewrites the few constructs that differ (``(?<name>…)`` groups,
``\\z``/``\\Z`` anchors, ``\\h``, POSIX classes such as ``[[:alpha:]]``) and `compile_pcre`
caches the compiled result. Matching is unanchored, case-sensitive and Unicode-aware, like
WordPress's ``#pattern#u``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

__all__ = ["compile_pcre", "pattern_matches", "translate_pcre"]

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
    """Whether ``pattern`` matches anywhere in ``value``; ``None`` when the pattern is invalid."""
    compiled = compile_pcre(pattern if isinstance(pattern, str) else str(pattern))
    if compiled is None:
        return None
    return compiled.search(value if isinstance(value, str) else str(value)) is not None
