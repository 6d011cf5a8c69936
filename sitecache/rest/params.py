"""Request parameters as WordPress sees them: bracket syntax, media types, content types.

Query strings and form bodies use PHP's bracket syntax: ``a[]=1&a[]=2`` is the list
``["1", "2"]``, ``a[b]=1`` the object ``{"b": "1"}``, and a plain repeated key keeps its last
value. `parse_pairs` builds that structure from decoded ``(key, value)`` pairs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import parse_qsl

__all__ = [
    "MAX_NESTING",
    "is_json_media_type",
    "parse_content_type",
    "parse_pairs",
    "parse_query_string",
]

MAX_NESTING: Final = 64
"""Deeper bracket nesting is kept as a literal key (PHP's ``max_input_nesting_level``)."""

_JSON_MEDIA_TYPE = re.compile(
    r"(^|\s|,)application/([\w!#$&-^.+]+\+)?json(\+oembed)?($|\s|;|,)", re.I
)
_CANONICAL_INDEX = re.compile(r"(?:0|[1-9][0-9]*)\Z")


class _Node(dict[str, Any]):
    """A PHP array under construction: remembers the next index for ``[]`` appends."""

    next_index: int = 0

    def append(self, value: Any) -> None:
        self[str(self.next_index)] = value
        self.next_index += 1

    def set(self, key: str, value: Any) -> None:
        self[key] = value
        if _CANONICAL_INDEX.match(key):
            self.next_index = max(self.next_index, int(key) + 1)


def _split_key(key: str) -> list[str] | None:
    """``a[b][]`` → ``["a", "b", ""]``; ``None`` when the key has no (valid) brackets."""
    start = key.find("[")
    if start <= 0:
        return None
    parts = [key[:start]]
    index = start
    while index < len(key):
        if key[index] != "[":
            break  # PHP ignores anything after the last closing bracket
        end = key.find("]", index)
        if end == -1:
            return None
        parts.append(key[index + 1 : end])
        index = end + 1
        if len(parts) > MAX_NESTING:
            return None
    return parts


def _finalize(value: Any) -> Any:
    if not isinstance(value, _Node):
        return value
    items = {key: _finalize(item) for key, item in value.items()}
    if list(items) == [str(index) for index in range(len(items))]:
        return list(items.values())
    return items


def parse_pairs(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Build PHP-style parameters from decoded ``(key, value)`` pairs."""
    root = _Node()
    for key, value in pairs:
        if not key.lstrip(" ").partition("[")[0]:
            continue  # PHP drops a variable without a name: "=5", "[]=5", "[a]=5"
        parts = _split_key(key)
        if parts is None:
            root.set(key, value)
            continue
        node = root
        for position, part in enumerate(parts):
            last = position == len(parts) - 1
            if last:
                if part == "":
                    node.append(value)
                else:
                    node.set(part, value)
                break
            if part == "":
                child = _Node()
                node.append(child)
            else:
                existing = node.get(part)
                child = existing if isinstance(existing, _Node) else _Node()
                node.set(part, child)
            node = child
    result = _finalize(root)
    return result if isinstance(result, dict) else {str(i): v for i, v in enumerate(result)}


def parse_query_string(query: str) -> dict[str, Any]:
    """Parse a raw query string (or urlencoded body) into PHP-style parameters."""
    if not query:
        return {}
    return parse_pairs(parse_qsl(query, keep_blank_values=True, errors="replace"))


def is_json_media_type(media_type: str) -> bool:
    """``wp_is_json_media_type``: ``application/json`` or ``application/<x>+json``, any case."""
    return _JSON_MEDIA_TYPE.search(media_type) is not None


def parse_content_type(value: str | None) -> dict[str, str] | None:
    """``{value, type, subtype, parameters}`` of a Content-Type header, or ``None``."""
    if not value:
        return None
    parameters = ""
    if value.find(";") > 0:
        value, parameters = value.split(";", 1)
    value = value.lower()
    if "/" not in value:
        return None
    main, subtype = value.split("/", 1)
    return {
        "value": value.strip(),
        "type": main.strip(),
        "subtype": subtype.strip(),
        "parameters": parameters.strip(),
    }
