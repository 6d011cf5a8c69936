"""`Outcome`: one value counts a request and renders its ``Cache-Status``; every reason the
cache can give is explained to the administrator."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from werkzeug.test import Client

from sitecache.cache import CacheEngine, CacheRules, MemoryStorage, PageCache
from sitecache.cache.api.routes import REASONS
from sitecache.cache.outcome import (
    FRESH_HIT,
    OUTCOME_REASONS,
    STALE_HIT,
    Outcome,
    OutcomeReason,
    explanations,
)
from sitecache.cache.policy import REQUEST_GUARDS, RESPONSE_GUARDS
from sitecache.cache.storage import StorageError, StorageUnusable
from tests.cache.conftest import FakeClock, PageApp

SITE = "http://example.org"

# (outcome, ttl given, Cache-Status, counters)
OUTCOME_CASES: list[tuple[Outcome, int | None, str, list[str]]] = [
    (FRESH_HIT, 3600, "sitecache; hit; ttl=3600", ["hit"]),
    (FRESH_HIT, None, "sitecache; hit", ["hit"]),
    (STALE_HIT, -5, "sitecache; hit; ttl=-5; detail=stale", ["stale"]),
    (Outcome.stored_after("uri-miss"), 60, "sitecache; fwd=uri-miss; stored", ["miss"]),
    (Outcome.stored_after("vary-miss"), None, "sitecache; fwd=vary-miss; stored", ["miss"]),
    (Outcome.stored_after("stale"), 60, "sitecache; fwd=stale; stored", ["miss"]),
    (Outcome.collapsed_into("uri-miss"), 60, "sitecache; fwd=uri-miss; collapsed", ["hit"]),
    (
        Outcome.bypass("authorization"),
        None,
        "sitecache; fwd=bypass; detail=authorization",
        ["bypass", "bypass:authorization"],
    ),
    (
        Outcome.refused("uri-miss", "set_cookie"),
        60,
        "sitecache; fwd=uri-miss; detail=set_cookie",
        ["bypass", "bypass:set_cookie"],
    ),
    (
        Outcome.failed("vary-miss", "purged"),
        60,
        "sitecache; fwd=vary-miss; detail=purged",
        ["bypass", "bypass:purged"],
    ),
    (
        Outcome.failed("bypass", "purge_pending"),
        None,
        "sitecache; fwd=bypass; detail=purge_pending",
        ["bypass", "bypass:purge_pending"],
    ),
]


@pytest.mark.parametrize(("outcome", "ttl", "header", "counters"), OUTCOME_CASES)
def test_an_outcome_renders_its_cache_status_and_counts_its_counters(
    outcome: Outcome, ttl: int | None, header: str, counters: list[str]
) -> None:
    counted: list[str] = []
    outcome.count(counted.append)
    assert outcome.header(ttl) == header
    assert counted == counters


def test_every_reason_the_cache_can_give_is_explained() -> None:
    guard_reasons = [guard.reason for guard in REQUEST_GUARDS] + [
        guard.reason for guard in RESPONSE_GUARDS
    ]
    outcome_reasons = list(get_args(OutcomeReason))
    assert len(set(guard_reasons)) == len(guard_reasons)  # one row per reason
    assert set(outcome_reasons) == set(OUTCOME_REASONS)
    assert not set(guard_reasons) & set(outcome_reasons)
    every = {*guard_reasons, *outcome_reasons}
    table = explanations()
    assert set(table) == every
    # A sentence each (an empty or missing explanation fails here).
    assert all(len(text) > 10 and text.endswith(".") for text in table.values())
    assert all(guard.explanation == table[guard.reason] for guard in REQUEST_GUARDS)
    assert all(guard.explanation == table[guard.reason] for guard in RESPONSE_GUARDS)
    assert table == REASONS


def build(app: Any, storage: MemoryStorage | None = None) -> PageCache:
    engine = CacheEngine(
        storage or MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})), clock=FakeClock()
    )
    return PageCache(app, engine=engine)


def get(cache: PageCache, path: str = "/") -> Any:
    return Client(cache, use_cookies=False).get(path, base_url=SITE)


class FailingPuts(MemoryStorage):
    """Reads work; writing a page fails (a full disk)."""

    def put(self, *args: Any, **kwargs: Any) -> bool:
        raise StorageError("disk full")


class FailingReads(MemoryStorage):
    """The purge generation cannot be read (the store is down)."""

    def generation(self) -> object:
        raise StorageError("connection refused")


class FullDisk(MemoryStorage):
    """Reads work; writing a page fails for lack of space (the backend knows it)."""

    def put(self, *args: Any, **kwargs: Any) -> bool:
        raise StorageUnusable("full", "the disk of /var/cache is full")


class DamagedStore(MemoryStorage):
    """The store was found damaged and is being started empty."""

    def generation(self) -> object:
        raise StorageUnusable("damaged", "the index was damaged; moved aside")


def storage_full_on_write(page_app: PageApp) -> PageCache:
    return build(page_app, FullDisk())


def storage_unusable_on_read(page_app: PageApp) -> PageCache:
    return build(page_app, DamagedStore())


def storage_fails_on_write(page_app: PageApp) -> PageCache:
    return build(page_app, FailingPuts())


def storage_fails_on_read(page_app: PageApp) -> PageCache:
    return build(page_app, FailingReads())


def purged_while_rendering(page_app: PageApp) -> PageCache:
    cache = build(page_app)

    def purging(environ: dict[str, Any], start_response: Any) -> Any:
        result = page_app(environ, start_response)
        cache.purge_all()  # an editor saves while the page renders
        return result

    cache.app = purging
    return cache


def purge_owed(page_app: PageApp) -> PageCache:
    cache = build(page_app)
    cache.engine.hold.engage("Redis is down")
    return cache


# (how the cache is set up, Cache-Status of a first GET /)
NO_GUARD_CASES = [
    (storage_fails_on_write, "sitecache; fwd=uri-miss; detail=storage_error"),
    (storage_fails_on_read, "sitecache; fwd=bypass; detail=storage_error"),
    (storage_full_on_write, "sitecache; fwd=uri-miss; detail=storage"),
    (storage_unusable_on_read, "sitecache; fwd=bypass; detail=storage"),
    (purged_while_rendering, "sitecache; fwd=uri-miss; detail=purged"),
    (purge_owed, "sitecache; fwd=bypass; detail=purge_pending"),
]


@pytest.mark.parametrize(("setup", "expected"), NO_GUARD_CASES)
def test_a_reason_no_guard_gives_is_labelled_counted_and_explained(
    page_app: PageApp, setup: Any, expected: str
) -> None:
    cache = setup(page_app)
    answer = get(cache)
    assert answer.status_code == 200
    assert answer.data.startswith(b"<html>")
    assert answer.headers["Cache-Status"] == expected
    reason = expected.rpartition("detail=")[2]
    assert reason in get_args(OutcomeReason)
    assert reason in OUTCOME_REASONS
    assert REASONS[reason] == OUTCOME_REASONS[reason]
    cache.engine.flush_counters()
    counters = cache.engine.storage.counters()
    assert counters.get("bypass") == 1
    assert counters.get(f"bypass:{reason}") == 1


def test_the_outcome_reasons_are_exactly_those_the_cases_above_produce() -> None:
    produced = {expected.rpartition("detail=")[2] for _, expected in NO_GUARD_CASES}
    assert produced == set(get_args(OutcomeReason))
