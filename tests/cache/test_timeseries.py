"""The per-minute series of requests by outcome (`sitecache.cache.timeseries`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitecache.cache.timeseries import SLOTS, WINDOW, prune_deltas, read_series, series_deltas

NOW = 1_800_000_000.0


def apply(counters: dict[str, int], deltas: dict[str, int]) -> None:
    for name, value in deltas.items():
        counters[name] = counters.get(name, 0) + value


def test_flushes_land_in_their_minute_and_are_read_back_oldest_first() -> None:
    counters: dict[str, int] = {}
    apply(counters, series_deltas({"hit": 3, "miss": 1, "bypass:query_string": 9}, NOW - 120))
    apply(counters, series_deltas({"hit": 2, "stale": 1}, NOW))
    apply(counters, series_deltas({"hit": 1}, NOW))  # another worker, same minute
    series = read_series(counters, NOW)
    assert series["interval"] == 60
    assert len(series["hit"]) == WINDOW
    assert series["start"] == (int(NOW // 60) - WINDOW + 1) * 60
    assert series["hit"][-1] == 3
    assert series["hit"][-3] == 3
    assert series["miss"][-3] == 1
    assert series["stale"][-1] == 1
    assert sum(series["bypass"]) == 0  # reasons are not outcomes
    assert not any(name.startswith("series:") and "query_string" in name for name in counters)


def test_pruning_clears_what_left_the_window_and_keeps_the_rest() -> None:
    counters: dict[str, int] = {}
    apply(counters, series_deltas({"hit": 5}, NOW - WINDOW * 60 - 60))  # a day and a minute ago
    apply(counters, series_deltas({"hit": 7}, NOW - 60))
    apply(counters, prune_deltas(counters, NOW))
    assert sum(read_series(counters, NOW)["hit"]) == 7
    assert sum(value for value in counters.values()) == 7
    # a day later the old minute's slot is used again, from zero
    later = NOW - 60 + SLOTS * 60
    apply(counters, prune_deltas(counters, later - 3600))
    apply(counters, series_deltas({"hit": 1}, later))
    assert read_series(counters, later)["hit"][-1] == 1


@given(st.lists(st.tuples(st.integers(0, 3 * SLOTS), st.integers(1, 50)), max_size=40))
def test_never_more_than_the_ring_of_counters(flushes: list[tuple[int, int]]) -> None:
    counters: dict[str, int] = {}
    for minute, hits in sorted(flushes):
        now = NOW + minute * 60
        apply(counters, series_deltas({"hit": hits}, now))
        apply(counters, prune_deltas(counters, now))
        assert len([name for name, value in counters.items() if value]) <= WINDOW + 3
        assert all(value >= 0 for value in counters.values())
