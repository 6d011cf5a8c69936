"""Header fields the cache treats by name: those of one connection, and entity tags.

Hop-by-hop fields (RFC 9110 §7.6.1: ``Connection``, the fields it names, ``Keep-Alive``,
``Transfer-Encoding`` and the like) belong to one connection: the cache never stores them nor
passes them on (`end_to_end`). An ``ETag`` is kept only when it is an entity tag
(`entity_tag`). Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = ["HOP_BY_HOP", "connection_named", "end_to_end", "entity_tag"]

#: Fields of one connection (RFC 9110 §7.6.1), never passed on by the cache, beside those a
#: ``Connection`` field names.
HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)


def connection_named(headers: Iterable[tuple[str, str]]) -> set[str]:
    """The lower-case field names the ``Connection`` fields of ``headers`` list (fields of
    that one connection, RFC 9110 §7.6.1)."""
    named: set[str] = set()
    for name, value in headers:
        if name.lower() == "connection":
            named.update(item.strip().lower() for item in value.split(",") if item.strip())
    return named


def end_to_end(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``headers`` without the hop-by-hop fields (`HOP_BY_HOP` and those a ``Connection``
    field names): ``headers`` itself when it has none."""
    dropped = HOP_BY_HOP | connection_named(headers)
    if not any(name.lower() in dropped for name, _ in headers):
        return headers
    return [(name, value) for name, value in headers if name.lower() not in dropped]


#: An entity tag (RFC 9110 §8.8.3): a quoted opaque tag, weak with ``W/``.
_ENTITY_TAG: Final = re.compile(r'(?:W/)?"[^"]*"')


def entity_tag(value: str) -> str:
    """An ``ETag`` field's entity tag as sent (weak ones stay weak), or ``""`` when it is
    not one (``v1`` unquoted is no validator)."""
    value = value.strip()
    return value if _ENTITY_TAG.fullmatch(value) else ""
