"""Requests by outcome over the last 24 hours, per minute, kept in the storage's counters.

Each counter flush (`sitecache.cache.counters.Counters.flush`) adds the visitors' ``hit``,
``stale``, ``miss`` and ``bypass`` counts to the counters ``series:<slot>:<outcome>`` in the
same write, where ``slot`` is the Unix minute modulo `SLOTS`: every worker and node adds to the
same shared, atomically incremented counters, so the series is the whole site's. The ring holds
two days of slots: the last `WINDOW` minutes are shown, the other half is set back to zero by
the timers' holder (one process at a time, `prune_deltas`), long after anyone wrote to it, so
the storage never holds more than ``SLOTS x 4`` such counters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["OUTCOMES", "PREFIX", "SLOTS", "WINDOW", "prune_deltas", "read_series", "series_deltas"]

OUTCOMES: Final = ("hit", "stale", "miss", "bypass")
PREFIX: Final = "series:"
#: minutes shown
WINDOW: Final = 1440
#: slots in the ring (twice the window: the half not shown is cleared in the background)
SLOTS: Final = 2 * WINDOW
#: minutes after the current one that are never cleared (clocks of nodes differ a little)
_AHEAD: Final = 3


def _name(minute: int, outcome: str) -> str:
    return f"{PREFIX}{minute % SLOTS}:{outcome}"


def series_deltas(counts: Mapping[str, int], now: float) -> dict[str, int]:
    """The series counters to add for ``counts`` flushed at ``now`` (Unix time)."""
    minute = int(now // 60)
    return {_name(minute, name): value for name, value in counts.items() if name in OUTCOMES}


def read_series(counters: Mapping[str, int], now: float, window: int = WINDOW) -> dict[str, Any]:
    """The last ``window`` minutes up to ``now``: ``{interval: 60, start, <outcome>: [counts]}``
    with one count per minute, oldest first (``start`` is the first minute's Unix time)."""
    last = int(now // 60)
    first = last - min(window, WINDOW) + 1
    series: dict[str, Any] = {"interval": 60, "start": first * 60}
    for outcome in OUTCOMES:
        series[outcome] = [
            max(0, counters.get(_name(minute, outcome), 0)) for minute in range(first, last + 1)
        ]
    return series


def prune_deltas(counters: Mapping[str, int], now: float) -> dict[str, int]:
    """The deltas that set back to zero every slot outside the shown window (and not just
    ahead of the clock): for the timers' holder only, so no two processes clear one slot."""
    last = int(now // 60)
    kept = {minute % SLOTS for minute in range(last - WINDOW + 1, last + 1 + _AHEAD)}
    deltas = {}
    for name, value in counters.items():
        if not name.startswith(PREFIX) or not value:
            continue
        slot = name[len(PREFIX) :].split(":", 1)[0]
        if slot.isascii() and slot.isdigit() and int(slot) not in kept:
            deltas[name] = -value
    return deltas
