"""The request latency histogram, kept as shared counters in the cache's storage.

Each request's duration is counted in the first bucket whose upper bound holds it
(``latency_le:<bound>``, ``latency_le:+Inf`` past the last), and its microseconds are added to
``latency_us``: plain counters of the engine (`sitecache.cache.counters`), so they are flushed
with the others at most once a second and summed across every worker process and node sharing
the storage. `histogram` turns them back into Prometheus's cumulative buckets.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

__all__ = [
    "BUCKETS",
    "COUNT_PREFIX",
    "SUM_NAME",
    "Histogram",
    "LatencyRecorder",
    "histogram",
]

#: Upper bounds of the buckets, in seconds (a hit takes well under a millisecond, a miss
#: milliseconds, a slow page seconds).
BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
#: Counter name prefix of a bucket (not cumulative: one bucket per request).
COUNT_PREFIX: Final = "latency_le:"
#: Counter of the summed durations, in microseconds (counters are integers).
SUM_NAME: Final = "latency_us"
_NAMES: Final = (*(f"{COUNT_PREFIX}{bound:g}" for bound in BUCKETS), f"{COUNT_PREFIX}+Inf")

CountAll = Callable[[tuple[tuple[str, int], ...]], None]


class LatencyRecorder:
    """Counts request durations into the histogram's counters.

    Args:
        count_all: the engine's counters' `Counters.count_all` (``((name, amount), ...)``,
            under one lock).
    """

    def __init__(self, count_all: CountAll) -> None:
        self._count_all = count_all

    def observe(self, seconds: float) -> None:
        """Count one request that took ``seconds``."""
        bucket = _NAMES[bisect.bisect_left(BUCKETS, seconds)]
        self._count_all(((bucket, 1), (SUM_NAME, max(0, round(seconds * 1_000_000)))))

    def wrap(self, app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
        """``app`` (a WSGI callable) with each call's duration observed: the time until it
        returned its body iterable (the whole answer for cached pages and the site's
        responses, which are built before they are returned)."""
        observe = self.observe
        clock = time.perf_counter

        def timed(environ: Any, start_response: Any) -> Iterable[bytes]:
            started = clock()
            try:
                return app(environ, start_response)
            finally:
                observe(clock() - started)

        return timed


class Histogram:
    """A cumulative histogram read from the counters.

    Attributes:
        buckets: ``(upper bound as Prometheus writes it, requests at or under it)``, ascending,
            ending with ``+Inf``.
        count: every request counted.
        sum_seconds: their summed duration.
    """

    def __init__(self, buckets: list[tuple[str, int]], sum_seconds: float) -> None:
        self.buckets = buckets
        self.count = buckets[-1][1] if buckets else 0
        self.sum_seconds = sum_seconds


def histogram(counters: Mapping[str, int]) -> Histogram:
    """The cumulative histogram of the shared ``counters`` (every name they hold)."""
    running = 0
    buckets: list[tuple[str, int]] = []
    for name in _NAMES:
        running += counters.get(name, 0)
        buckets.append((name.removeprefix(COUNT_PREFIX), running))
    return Histogram(buckets, counters.get(SUM_NAME, 0) / 1_000_000)
