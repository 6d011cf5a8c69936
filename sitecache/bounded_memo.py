"""`BoundedMemo`: the one bounded memo of sitecache, a dict that never grows past a limit.

Results worked out from values (a request path's routes, a host's context, a user built from
a row) are kept so the next request with the same value reuses them. Clients choose those
values, so every such memo needs a bound. The rule is "empty it when full": no order to keep
up on a hit (a hit is a plain ``dict`` lookup), and a flood of distinct values costs one
refill of the useful entries. Each memo lives on the object that owns it (a server, a store),
never in a module global.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["BoundedMemo"]

K = TypeVar("K")
V = TypeVar("V")


class BoundedMemo(dict[K, V]):
    """A ``dict`` of at most ``limit`` entries, filled through `keep`.

    Reading is a ``dict``'s (``get``, ``in``, ``[]``), as fast. Only `keep` enforces the limit:
    assigning an item directly does not.

    Args:
        limit: how many entries it holds at most (1 or more).

    Raises:
        ValueError: ``limit`` is below 1.
    """

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a bounded memo holds at least one entry, not {limit}")
        super().__init__()
        self.limit = limit

    def keep(self, key: K, value: V) -> V:
        """Keep ``value`` under ``key`` and return it; a new key in a full memo empties the
        memo first, so it never holds more than ``limit`` entries."""
        if len(self) >= self.limit and key not in self:
            self.clear()
        self[key] = value
        return value

    def __repr__(self) -> str:
        return f"BoundedMemo(limit={self.limit}, entries={len(self)})"
