"""The request counters: aggregated in memory, written to the storage at most once a second.

Every request counts (``hit``, ``miss``, ``bypass:<reason>``, ...): a visitor's under its bare
name, the cache's own traffic under a label (``preload:hit``, ``own:miss``), so warming the
cache, testing it or administering it never moves the visitors' figures. Counting is an
addition in a dictionary of this process; a flush adds what was counted to the storage's shared
counters in one step, at most once per interval. A flush the storage refuses keeps the counts
for the next one, so a storage outage loses no count. The first flush of a store records when
counting started (``stats_since``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Final

from sitecache.cache.named_values import NamedValues
from sitecache.cache.storage import SharedState, StorageError
from sitecache.cache.storage_log import Warn
from sitecache.cache.timeseries import prune_deltas, series_deltas

__all__ = ["OWN_LABEL", "PRELOAD_LABEL", "SINCE_NAME", "Counters"]

#: The named value holding when the counters started (Unix time, decimal).
SINCE_NAME: Final = "stats_since"
#: The label of the site's own traffic (``own:<name>``): the cache test's visits and the
#: administration requests (`sitecache.cache.classify.RequestClassifier.is_own`).
OWN_LABEL: Final = "own"
#: The label of a preload's visits (``preload:<name>``).
PRELOAD_LABEL: Final = "preload"


@dataclass(eq=False, repr=False)
class Counters:
    """This process's counts and their flushes (see the module docstring).

    Args:
        storage: where the shared counters live.
        values: the storage's named values (``stats_since``).
        clock: Unix time.
        interval: seconds between two flushes on the request path.
        warn: reports storage failures (rate-limited by the caller).
    """

    storage: SharedState
    values: NamedValues
    _: KW_ONLY
    clock: Callable[[], float]
    interval: float
    warn: Warn
    #: when the last flush ran (read on every request: keep it a plain attribute)
    flushed: float = field(init=False)
    _counts: dict[str, int] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _label: _Label = field(default_factory=lambda: _Label(), init=False)  # defined below
    _since_recorded: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.flushed = self.clock()

    @contextlib.contextmanager
    def counting_as(self, label: str) -> Iterator[None]:
        """Count this thread's requests apart, as ``<label>:<name>`` (preload traffic is not
        the visitors' hits and misses)."""
        previous = self._label.value
        self._label.value = label
        try:
            yield
        finally:
            self._label.value = previous

    def count(self, name: str, amount: int = 1) -> None:
        """Add ``amount`` to the counter ``name`` of this process."""
        label = self._label.value
        if label:
            name = f"{label}:{name}"
        with self._lock:  # gthread workers count from several threads
            counts = self._counts
            counts[name] = counts.get(name, 0) + amount

    def count_all(self, amounts: tuple[tuple[str, int], ...]) -> None:
        """Add each ``(name, amount)`` of ``amounts`` (one lock for them all: the latency
        histogram's bucket and sum of each request)."""
        label = self._label.value
        with self._lock:
            counts = self._counts
            for name, amount in amounts:
                if label:
                    name = f"{label}:{name}"
                counts[name] = counts.get(name, 0) + amount

    def pending(self) -> dict[str, int]:
        """The counts not flushed yet (a copy)."""
        with self._lock:
            return dict(self._counts)

    def maybe_flush(self, now: float) -> None:
        """Flush if the interval has passed since the last flush."""
        if now - self.flushed >= self.interval:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        """Add this process's counts to the shared counters now; on a storage failure they
        are kept for the next flush (and the failure is logged)."""
        self.flushed = self.clock() if now is None else now
        with self._lock:
            counts, self._counts = self._counts, {}
        if not counts:
            return
        try:
            if not self._since_recorded:
                # When counting started, once per store (any process may be the first).
                if self.values.read(SINCE_NAME) is None:
                    self.values.write(SINCE_NAME, str(int(self.flushed)).encode())
                self._since_recorded = True
            # The per-minute series (`sitecache.cache.timeseries`) in the same write.
            self.storage.add_counters({**counts, **series_deltas(counts, self.flushed)})
        except StorageError as exc:
            self.warn("cache counters not written yet: %s", exc)
            with self._lock:  # kept for the next flush
                for name, value in counts.items():
                    self._counts[name] = self._counts.get(name, 0) + value

    def prune_series(self) -> None:
        """Clear the series slots outside the shown window (`sitecache.cache.timeseries`);
        run by the timers' holder only.

        Raises:
            StorageError: the storage failed.
        """
        deltas = prune_deltas(self.storage.counters(), self.clock())
        if deltas:
            self.storage.add_counters(deltas)

    def since(self) -> int | None:
        """When the counters started (Unix time), if known.

        Raises:
            StorageError: the storage failed.
        """
        raw = self.values.read(SINCE_NAME)
        try:
            return int(raw) if raw else None
        except ValueError:
            return None

    def reset(self) -> None:
        """Forget every count, here and in the storage, and start again from now.

        Raises:
            StorageError: the storage failed.
        """
        with self._lock:
            self._counts = {}
        self.storage.reset_counters()
        self.values.write(SINCE_NAME, str(int(self.clock())).encode())


class _Label(threading.local):
    """This thread's counting label (``""``: the visitors' own counters). A class default,
    so reading it never raises: a missing attribute of a plain `threading.local` costs an
    exception on every count."""

    value: str = ""
