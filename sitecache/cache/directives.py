"""``Cache-Control`` (RFC 9111 §5.2) and ``CDN-Cache-Control`` (RFC 9213): the one parser every
reader of those fields in the package uses.

`DIRECTIVES` is the table of the directives the cache knows and the kind of argument each takes
(as cachecontrol's table does): none (a flag), delta-seconds, optional delta-seconds, or an
optional list of field names (``no-cache="Set-Cookie"``). `parse_cache_control` reads every
field line of a response in order:

- items are split at commas outside quoted strings (``ext="max-age=1, x"`` is one item), names
  are case-insensitive, arguments may be tokens or quoted strings (``max-age="60"`` is 60);
- when a directive appears more than once, its first occurrence counts (RFC 9111 §4.2.1);
- an argument that is not what the table says (``max-age=-1``, ``max-age=10a``,
  ``max-age='10'``) makes the directive *invalid*: it is present (`Directives.present`) but
  has no value, and a freshness directive that is invalid makes the response stale (RFC 9111
  §4.2.1 encourages that);
- delta-seconds past 2**31 read as 2**31 (RFC 9111 §1.2.2);
- an item whose name is not a token (``max-age =60``) is no directive at all.

``CDN-Cache-Control`` is a Structured Fields dictionary (RFC 9651, read with ``http-sf``):
`parse_targeted` answers ``None`` when it does not parse (the field is then ignored, RFC 9213
§2.1), and drops any directive whose value has the wrong type. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

import http_sf

__all__ = [
    "DIRECTIVES",
    "EMPTY",
    "MAX_DELTA_SECONDS",
    "DirectiveKind",
    "Directives",
    "parse_cache_control",
    "parse_targeted",
    "split_list",
]

#: What a directive's argument is: none, delta-seconds, optional delta-seconds, or an optional
#: quoted list of field names.
DirectiveKind = Literal["flag", "seconds", "optional-seconds", "fields"]

#: The directives the cache reads (requests' and responses'), and the argument each takes.
DIRECTIVES: Final[Mapping[str, DirectiveKind]] = {
    "max-age": "seconds",
    "s-maxage": "seconds",
    "stale-while-revalidate": "seconds",
    "stale-if-error": "seconds",
    "min-fresh": "seconds",
    "max-stale": "optional-seconds",
    "no-cache": "fields",
    "private": "fields",
    "no-store": "flag",
    "no-transform": "flag",
    "public": "flag",
    "must-revalidate": "flag",
    "proxy-revalidate": "flag",
    "must-understand": "flag",
    "immutable": "flag",
    "only-if-cached": "flag",
}

#: The largest delta-seconds the cache represents (RFC 9111 §1.2.2).
MAX_DELTA_SECONDS: Final = 2**31

#: A directive's value: ``True`` for a flag (or an unknown directive without argument), the
#: seconds, the field names (``()``: unqualified), or an unknown directive's argument.
Value = bool | int | tuple[str, ...] | str

_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_DIGITS: Final = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Directives:
    """The directives of a response (or request), first occurrences only.

    Attributes:
        values: each directive with a valid argument (or none needed), by lower-case name.
        invalid: the known directives whose first occurrence had an invalid argument.
    """

    values: Mapping[str, Value]
    invalid: frozenset[str] = frozenset()

    def present(self, name: str) -> bool:
        """Whether ``name`` appears at all (valid or not)."""
        return name in self.values or name in self.invalid

    def seconds(self, name: str) -> int | None:
        """The delta-seconds of ``name``, or ``None`` (absent, invalid or no argument)."""
        value = self.values.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def fields(self, name: str) -> tuple[str, ...] | None:
        """The field names ``name`` qualifies (lower case; ``()`` when unqualified), or
        ``None`` when absent."""
        if name in self.invalid:
            return ()
        value = self.values.get(name)
        if value is None:
            return None
        return value if isinstance(value, tuple) else ()


#: No directive at all.
EMPTY: Final = Directives({})


def split_list(value: str) -> list[str]:
    """The items of a comma-separated field value, commas inside quoted strings kept, each
    stripped of surrounding whitespace, empty ones dropped."""
    items: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in value:
        if escaped:
            escaped = False
        elif quoted and char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            items.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    items.append("".join(current).strip())
    return [item for item in items if item]


def _argument(text: str) -> str | None:
    """A directive's argument as text: a token as it is, a quoted string unquoted; ``None``
    for anything else (an unclosed quote, text after the closing quote, a space)."""
    if not text.startswith('"'):
        return text if _TOKEN.fullmatch(text) else None
    out: list[str] = []
    escaped = False
    for index, char in enumerate(text[1:], start=1):
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return "".join(out) if index == len(text) - 1 else None
        else:
            out.append(char)
    return None


def _value(kind: DirectiveKind | None, has_argument: bool, argument: str | None) -> Value | None:
    """The value of a directive of ``kind`` (``None`` for an unknown one) given its argument;
    ``None`` when the argument is invalid for the kind."""
    if kind is None:
        return argument if has_argument and argument is not None else True
    if kind == "flag":
        return True
    if kind == "fields":
        if not has_argument:
            return ()
        if argument is None:
            return None
        return tuple(item.lower() for item in split_list(argument))
    if not has_argument:
        return True if kind == "optional-seconds" else None
    if argument is None or not _DIGITS.fullmatch(argument):
        return None
    return min(int(argument), MAX_DELTA_SECONDS)


def parse_cache_control(lines: Iterable[str]) -> Directives:
    """The directives of every ``Cache-Control`` field line in ``lines``, in order (see the
    module docstring)."""
    values: dict[str, Value] = {}
    invalid: set[str] = set()
    for line in lines:
        for item in split_list(line):
            name, equals, raw = item.partition("=")
            if not _TOKEN.fullmatch(name):
                continue
            name = name.lower()
            if name in values or name in invalid:
                continue
            argument = _argument(raw) if equals else None
            value = _value(DIRECTIVES.get(name), bool(equals), argument)
            if value is None:
                invalid.add(name)
            else:
                values[name] = value
    return Directives(values, frozenset(invalid))


def parse_targeted(lines: Iterable[str]) -> Directives | None:
    """The directives of the ``CDN-Cache-Control`` field lines in ``lines`` (a Structured
    Fields dictionary), or ``None`` when there are none or they do not parse."""
    text = ", ".join(line for line in lines if line.strip())
    if not text:
        return None
    try:
        parsed = http_sf.parse(text.encode("latin-1"), tltype="dictionary")
    except (http_sf.StructuredFieldError, UnicodeEncodeError, ValueError):
        return None
    if not isinstance(parsed, dict):
        return None
    values: dict[str, Value] = {}
    for name, member in parsed.items():
        item = member[0] if isinstance(member, tuple) else None
        value = _targeted_value(DIRECTIVES.get(name), item)
        if value is not None:
            values[name] = value
    return Directives(values)


def _targeted_value(kind: DirectiveKind | None, item: object) -> Value | None:
    """A Structured Fields item as a directive's value, ``None`` when of the wrong type."""
    if kind is None or kind == "flag":
        return True if item is True else None
    if kind == "fields":
        if item is True:
            return ()
        return tuple(name.lower() for name in split_list(item)) if isinstance(item, str) else None
    if item is True and kind == "optional-seconds":
        return True
    if isinstance(item, int) and not isinstance(item, bool) and item >= 0:
        return min(item, MAX_DELTA_SECONDS)
    return None
