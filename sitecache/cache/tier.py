"""The memory tier: prepared entries kept in one process, in front of the storage.

Every item is stamped with the purge generation under which it was read from or written to the
storage, and a lookup names the generation its request read first: an item stamped with any
other generation misses. So a purge (which bumps the generation after removing entries) is seen
by the very next request of every thread of every process, and a thread that read an entry just
before a purge can never put it back for later requests: its stamp is already old.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Protocol, TypeVar

__all__ = ["MemoryTier", "TierItem"]


class TierItem(Protocol):
    """What the tier keeps: anything that knows its size in bytes."""

    @property
    def weight(self) -> int:
        """Bytes it holds (bodies plus a little for headers)."""


ItemT = TypeVar("ItemT", bound=TierItem)


class MemoryTier(Generic[ItemT]):
    """A bounded map from key to ``(generation, item)``, oldest stored first out.

    Args:
        max_bytes: the bound of the summed item weights (0 turns the tier off).
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        # PERF: an OrderedDict, whose oldest item is found at once; a dict emptied from its
        # front walks past every slot freed there before it finds it (a miss evicts one).
        self._items: OrderedDict[str, tuple[object, ItemT]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self._observed: object = object()

    def get(self, key: str, generation: object) -> ItemT | None:
        """The item under ``key`` if it was stamped with ``generation``, else ``None``."""
        found = self._items.get(key)
        if found is None or found[0] != generation:
            return None
        return found[1]

    def put(self, key: str, item: ItemT, generation: object) -> None:
        """Keep ``item`` for lookups under ``generation`` (items over a quarter of the bound
        are not kept)."""
        weight = item.weight
        if weight > self.max_bytes // 4:
            return
        with self._lock:
            self._drop(key)
            while self._items and self._size + weight > self.max_bytes:
                self._drop(next(iter(self._items)))
            self._items[key] = (generation, item)
            self._size += weight

    def forget(self, key: str) -> None:
        """Drop ``key``."""
        with self._lock:
            self._drop(key)

    def clear(self) -> None:
        """Forget every item (the next lookups read the storage again)."""
        with self._lock:
            self._items.clear()
            self._size = 0

    def observe(self, generation: object) -> None:
        """Free every item when a new generation is seen (their stamps can no longer match
        the requests to come; this only gives their memory back)."""
        if generation != self._observed:
            with self._lock:
                self._items.clear()
                self._size = 0
                self._observed = generation

    def _drop(self, key: str) -> None:
        found = self._items.pop(key, None)
        if found is not None:
            self._size -= found[1].weight

    def __contains__(self, key: object) -> bool:
        """Whether an item is kept under ``key`` (of any generation)."""
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)
