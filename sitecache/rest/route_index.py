"""An index of routes by literal path prefix, so matching does not try every route.

A route pattern such as ``/site/v2/users/(?P<id>\\d+)`` can only match paths that start with its
literal prefix ``/site/v2/users/`` (compared ASCII case-insensitively, as routes are matched).
`RouteIndex` files each route under the whole path segments of that prefix in a trie; a path
walks the trie segment by segment and collects only the routes whose prefix it could carry. The
candidates come back in registration order, so the first match is the same route WordPress's
one-by-one loop would pick. The cost grows with the depth of the path and the number of routes
sharing its prefix, not with the number of routes registered.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from sitecache.rest.routes import Route

__all__ = ["RouteIndex", "ascii_lower", "literal_prefix"]

_ASCII_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_SPECIAL: Final = frozenset("\\()[]{}.*+?|^$#")
_QUANTIFIERS: Final = frozenset("*+?{")


def ascii_lower(text: str) -> str:
    """``text`` with ASCII letters lower-cased only (how ``re.IGNORECASE | re.ASCII`` folds)."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def literal_prefix(pattern: str) -> str:
    """The text every match of ``pattern`` (anchored at its start) begins with, ASCII-lowered.

    Conservative: it stops at the first regular-expression construct, drops a character a
    quantifier applies to, and is empty for a pattern with an alternation anywhere.
    """
    if "|" in pattern:
        return ""
    end = 0
    for position, char in enumerate(pattern):
        if char in _SPECIAL:
            break
        if pattern[position + 1 : position + 2] in _QUANTIFIERS and position + 1 < len(pattern):
            break
        end = position + 1
    return ascii_lower(pattern[:end])


@dataclass
class _Node:
    routes: list[tuple[int, str, Route]] = field(default_factory=list)
    children: dict[str, _Node] = field(default_factory=dict)


class RouteIndex:
    """Routes filed by the whole path segments of their literal prefixes.

    Args:
        routes: the routes in registration order (routes without a regex are left out: they
            never match).
    """

    def __init__(self, routes: Iterable[Route]) -> None:
        self._root = _Node()
        for order, route in enumerate(routes):
            if route.regex is None:
                continue
            prefix = literal_prefix(route.pattern)
            node = self._root
            for segment in prefix.split("/")[:-1]:  # the last piece may be a partial segment
                node = node.children.setdefault(segment, _Node())
            node.routes.append((order, prefix, route))

    def candidates(self, path: str) -> list[Route]:
        """The routes whose literal prefix ``path`` starts with, in registration order."""
        lowered = ascii_lower(path)
        found: list[tuple[int, str, Route]] = []
        node: _Node | None = self._root
        for segment in lowered.split("/"):
            if node is None:
                break
            if node.routes:
                found += [entry for entry in node.routes if lowered.startswith(entry[1])]
            node = node.children.get(segment)
        else:
            if node is not None and node.routes:
                found += [entry for entry in node.routes if lowered.startswith(entry[1])]
        if len(found) > 1:
            found.sort()  # by registration order: the orders are distinct, so only they compare
        return [entry[2] for entry in found]
