"""The engine's parts (#17): counters, the one poller of named values, the one purge path,
settings seeding, and the domain exceptions the REST boundary maps."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.cache import (
    CacheEngine,
    CacheEntry,
    CacheRules,
    DiskStorage,
    MemoryStorage,
    PageCache,
)
from sitecache.cache.api import CacheApi
from sitecache.cache.counters import SINCE_NAME, Counters
from sitecache.cache.named_values import NamedValues
from sitecache.cache.purging import PurgeResult
from sitecache.cache.settings import CacheSettings
from sitecache.cache.storage import StorageError
from sitecache.cache.storage.memory import ENTRY_OVERHEAD
from sitecache.cache.storage_log import RateLimitedLog
from sitecache.cache.tier import MemoryTier
from sitecache.cache.timeseries import PREFIX, read_series
from sitecache.domain_errors import InvalidSettings, InvalidURL
from sitecache.hooks import Hooks
from sitecache.rest.error_handlers import ErrorHandlers
from tests.cache.conftest import FakeClock, PageApp

SITE = "http://example.org"


class FlakyStorage(MemoryStorage):
    """A memory store whose chosen methods fail while ``failing`` names them; counts reads."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: set[str] = set()
        self.reads: list[str] = []

    def add_counters(self, deltas: Any) -> None:
        if "add_counters" in self.failing:
            raise StorageError("disk full")
        super().add_counters(deltas)

    def get_value(self, name: str) -> bytes | None:
        self.reads.append(name)
        if "get_value" in self.failing:
            raise StorageError("Redis: Timeout reading from socket")
        return super().get_value(name)


def counters_on(storage: MemoryStorage, clock: FakeClock) -> Counters:
    values = NamedValues(storage, interval=1.0, warn=RateLimitedLog())
    return Counters(storage, values, clock=clock, interval=1.0, warn=RateLimitedLog())


# ---------------------------------------------------------------------- counters
def totals(storage: Any) -> dict[str, int]:
    """The storage's counters less the per-minute series (`sitecache.cache.timeseries`)."""
    return {
        name: value for name, value in storage.counters().items() if not name.startswith(PREFIX)
    }


def test_counts_reach_the_storage_at_most_once_per_interval(clock: FakeClock) -> None:
    storage = MemoryStorage()
    counters = counters_on(storage, clock)
    counters.count("hit")
    counters.maybe_flush(clock())
    clock.advance(0.5)
    counters.count("hit")
    counters.maybe_flush(clock())
    assert totals(storage) == {}
    clock.advance(0.5)
    counters.maybe_flush(clock())
    assert totals(storage) == {"hit": 2}
    assert read_series(storage.counters(), clock())["hit"][-1] == 2  # in the same write
    assert storage.get_value(SINCE_NAME) == str(int(clock())).encode()


def test_counts_a_failing_storage_refused_are_kept_for_the_next_flush(clock: FakeClock) -> None:
    storage = FlakyStorage()
    counters = counters_on(storage, clock)
    counters.count("miss", 3)
    storage.failing.add("add_counters")
    counters.flush()
    assert counters.pending() == {"miss": 3}
    counters.count("miss")
    storage.failing.clear()
    counters.flush()
    assert counters.pending() == {}
    assert totals(storage) == {"miss": 4}


def test_counting_as_a_label_keeps_those_counts_apart(clock: FakeClock) -> None:
    storage = MemoryStorage()
    counters = counters_on(storage, clock)
    with counters.counting_as("preload"):
        counters.count("hit")
    counters.count("hit")
    counters.flush()
    assert totals(storage) == {"preload:hit": 1, "hit": 1}


# ---------------------------------------------------------------------- the poller
def test_the_poller_tells_each_subscriber_once_per_change(clock: FakeClock) -> None:
    storage = MemoryStorage()
    values = NamedValues(storage, interval=1.0, warn=RateLimitedLog())
    told: list[tuple[str, bytes | None]] = []
    values.watch("plugins", lambda raw: told.append(("first", raw)))
    values.watch("plugins", lambda raw: told.append(("second", raw)))
    values.poll(clock())
    assert told == [("first", None), ("second", None)]
    storage.set_value("plugins", b'{"a": true}')  # another process writes
    values.poll(clock() + 0.5)  # within the interval: not read yet
    assert len(told) == 2
    for step in (1.0, 2.0, 3.0):
        values.poll(clock() + step)
    assert told[2:] == [("first", b'{"a": true}'), ("second", b'{"a": true}')]


def test_one_poll_round_reads_each_watched_value_once_per_interval(clock: FakeClock) -> None:
    storage = FlakyStorage()
    values = NamedValues(storage, interval=1.0, warn=RateLimitedLog())
    values.watch("settings", lambda raw: None)
    values.watch("plugins", lambda raw: None)
    for tick in range(20):
        values.poll(clock() + tick * 0.1)  # two seconds of requests
    assert sorted(storage.reads) == ["plugins", "plugins", "settings", "settings"]


def test_a_value_written_here_reaches_this_process_at_once(clock: FakeClock) -> None:
    storage = FlakyStorage()
    values = NamedValues(storage, interval=1.0, warn=RateLimitedLog())
    told: list[bytes | None] = []
    values.watch("plugins", told.append)
    values.write_record("plugins", {"b": True, "a": False})
    assert told == [b'{"a": false, "b": true}']
    assert storage.reads == []  # no read was needed
    values.write_record("plugins", {"a": False, "b": True})  # the same record
    assert len(told) == 1


def test_a_failing_read_ends_the_round_and_keeps_what_was_told(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    storage = FlakyStorage()
    values = NamedValues(storage, interval=1.0, warn=RateLimitedLog())
    told: list[bytes | None] = []
    values.watch("settings", told.append, what="cache settings")
    values.watch("plugins", told.append, what="cache plugin switches")
    storage.failing.add("get_value")
    values.poll(clock())
    assert told == []
    assert storage.reads == ["settings"]  # a down store costs one read per round
    assert [r.getMessage() for r in caplog.records] == [
        "cache settings unreadable, keeping the last: Redis: Timeout reading from socket"
    ]


def test_a_failing_subscriber_does_not_keep_the_others_uninformed(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    values = NamedValues(MemoryStorage(), interval=1.0, warn=RateLimitedLog())
    told: list[bytes | None] = []

    def broken(raw: bytes | None) -> None:
        raise RuntimeError("boom")

    values.watch("plugins", broken)
    values.watch("plugins", told.append)
    with caplog.at_level(logging.ERROR, logger="sitecache.cache"):
        values.write("plugins", b"{}")
    assert told == [b"{}"]
    assert "failed" in caplog.records[0].getMessage()


def test_a_plugin_switch_made_elsewhere_is_applied_at_the_next_poll_round(
    page_app: PageApp, tmp_path: Path
) -> None:
    clock = FakeClock()
    caches = [
        PageCache(page_app, engine=CacheEngine(DiskStorage(tmp_path), clock=clock))
        for _ in range(2)
    ]
    apis = [CacheApi(cache, Hooks(), load_entry_points=False) for cache in caches]
    caches[1].engine.settings()  # a request of the second worker: its round is done
    apis[0].plugins.update({"awaiting_moderation": True})
    assert len(caches[0].store_filters) == 1  # at once where it was written
    assert caches[1].store_filters == []
    caches[1].engine.settings(clock() + 1.0)  # the second worker's next request, a second on
    assert len(caches[1].store_filters) == 1


# ---------------------------------------------------------------------- the one purge path
def stored_site(page_app: PageApp, clock: FakeClock) -> tuple[PageCache, list[PurgeResult]]:
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})), clock=clock)
    cache = PageCache(page_app, engine=engine)
    client = Client(cache, use_cookies=False)
    for path in ("/a/", "/b/", "/c/"):
        client.get(path, base_url=SITE)
    heard: list[PurgeResult] = []
    engine.purge_listeners.append(heard.append)
    return cache, heard


SCOPES = {
    "url": lambda engine: engine.purge_urls([f"{SITE}/a/"]),
    "urls": lambda engine: engine.purge_urls(["/a/", "/b/"], scope="urls"),
    "tag": lambda engine: engine.purge_tags(["nothing-carries-it"]),
    "site": lambda engine: engine.purge_site(),
    "all": lambda engine: engine.purge_all(soft=True),
    "expired": lambda engine: engine.purge_expired(),
    "evicted": lambda engine: (
        engine.update_settings({"max_entries": 1}) and engine.enforce_limits()
    ),
    "test": lambda engine: engine.remove(engine.keys_for("host", None), scope="test"),
    "keys": lambda engine: engine.remove(engine.keys_for("url", [f"{SITE}/c/"]), "keys"),
}


@pytest.mark.parametrize("scope", SCOPES)
def test_every_removal_tells_the_purge_listeners_once(
    page_app: PageApp, clock: FakeClock, scope: str
) -> None:
    cache, heard = stored_site(page_app, clock)
    if scope == "expired":
        clock.advance(10**6)  # every entry is past its stale window
    result = SCOPES[scope](cache.engine)
    assert heard == [result]
    assert result.scope == scope
    assert cache.engine.stats()["purges"][scope] == 1


def test_remove_takes_exactly_the_keys_given(page_app: PageApp, clock: FakeClock) -> None:
    cache, _ = stored_site(page_app, clock)
    engine = cache.engine
    keys = engine.keys_for("url", [f"{SITE}/a/", f"{SITE}/b/"])
    assert len(keys) == 2
    generation = engine.generation()
    result = engine.remove(keys, "test")
    assert (result.deleted, result.urls) == (2, [f"{SITE}/a/", f"{SITE}/b/"])
    assert engine.keys_for("host", None) == engine.keys_for("url", [f"{SITE}/c/"])
    assert engine.generation() != generation  # copies in memory tiers are gone too
    soft = engine.remove(engine.keys_for("path", ["/c/"]), "test", soft=True)
    assert (soft.deleted, soft.soft) == (1, True)
    assert engine.list_entries()[0][0]["status"] == "expired"


def test_has_expired_says_whether_gc_has_work_left(page_app: PageApp, clock: FakeClock) -> None:
    cache, _ = stored_site(page_app, clock)
    assert cache.engine.has_expired(clock()) is False
    assert cache.engine.has_expired(clock() + 10**6) is True


# ---------------------------------------------------------------------- settings
def test_seed_settings_writes_only_when_none_are_stored() -> None:
    engine = CacheEngine(MemoryStorage())
    engine.seed_settings({"max_age": 60})
    engine.seed_settings({"max_age": 90})
    assert engine.settings_values()["max_age"] == 60


def test_seed_settings_refuses_invalid_settings_with_a_value_error() -> None:
    engine = CacheEngine(MemoryStorage())
    with pytest.raises(ValueError, match=r"^invalid cache settings: Invalid parameter"):
        engine.seed_settings({"max_age": -1})
    assert engine.read_value("settings") is None


def test_seed_settings_on_a_failing_storage_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    storage = FlakyStorage()
    storage.failing.add("get_value")
    CacheEngine(storage).seed_settings({"max_age": 60})
    assert "cache settings not written" in caplog.records[0].getMessage()


def test_every_setting_read_anywhere_has_a_typed_field() -> None:
    settings = CacheSettings.from_values(
        {"lock_down": True, "gc_interval": 120, "preload_posts": 5, "static_files": True}
    )
    assert (settings.lock_down, settings.gc_interval, settings.preload_posts) == (True, 120, 5)
    assert (settings.static_files, settings.preload_taxonomies) == (True, True)
    defaults = CacheSettings.from_values(None)
    assert (defaults.preload_posts, defaults.preload_interval) == (None, 0)  # "all" posts
    assert defaults.clear_on_post_edit is False
    assert defaults.refresh_single_only_on_comments is False


def test_an_invalid_update_raises_what_the_rest_boundary_answers_with_400() -> None:
    engine = CacheEngine(MemoryStorage())
    with pytest.raises(InvalidSettings) as refused:
        engine.update_settings({"max_age": -1, "storage": "disk"})
    answer = ErrorHandlers().to_rest_error(refused.value)
    assert (answer.code, answer.status) == ("rest_invalid_param", 400)
    assert answer.message == "Invalid parameter(s): max_age, storage"
    assert answer.data["details"]["storage"] == {
        "code": "rest_invalid_param",
        "message": "storage is read-only.",
    }
    assert set(answer.data["params"]) == {"max_age", "storage"}


def test_a_url_off_the_site_raises_what_the_rest_boundary_answers_with_400() -> None:
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})))
    with pytest.raises(InvalidURL) as refused:
        engine.purge_urls(["/fine/", "http://evil.example/"])
    assert refused.value.reason == "is on a host this site does not serve (evil.example)"
    answer = ErrorHandlers().to_rest_error(refused.value)
    assert (answer.code, answer.status) == ("rest_invalid_param", 400)
    assert answer.message == "url is on a host this site does not serve (evil.example)."
    assert answer.data["params"] == {
        "url": "'http://evil.example/' is on a host this site does not serve (evil.example)"
    }
    assert engine.stats()["purges"] == {}  # nothing was purged


class _Weighed:
    """A tier item of a given weight."""

    def __init__(self, weight: int) -> None:
        self.weight = weight


def test_the_memory_tier_and_the_memory_store_evict_the_oldest_stored_first() -> None:
    # Both evict in the order items were stored, however many were evicted before (an
    # OrderedDict: the oldest is found at once, where a dict emptied from its front walks
    # past every slot freed there).
    tier: MemoryTier[_Weighed] = MemoryTier(4000)
    for number in range(5000):
        tier.put(f"k{number}", _Weighed(1000), 0)
    kept = [number for number in range(5000) if tier.get(f"k{number}", 0) is not None]
    assert kept == [4996, 4997, 4998, 4999]
    storage = MemoryStorage(max_bytes=3 * (100 + ENTRY_OVERHEAD))
    for number in range(1000):
        key = f"{number:032d}"
        page = CacheEntry(
            url=f"http://example.org/{number}", host="example.org", path=f"/{number}",
            variant="", status=200, headers=(), body=b"x" * 100, gzip_body=b"",
            created=1000.0 + number, expires=0.0,
        )  # fmt: skip
        assert storage.put_entry(key, page, None)
    assert sorted(storage.keys_for("host", None)) == [f"{n:032d}" for n in (997, 998, 999)]
