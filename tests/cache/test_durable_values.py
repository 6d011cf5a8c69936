"""The cache's durable named values (#29 point 3): the settings and the plugin switches live
in a durable store first, the cache storage holding their copy; a lost copy is rebuilt (never
read as "no settings"), a copy that differs is rewritten, a durable store that fails keeps
the last values, and an engine without one keeps today's behaviour."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path

import pytest

from sitecache.cache import PageCache
from sitecache.cache.api.plugins import PLUGINS_NAME, PluginManager
from sitecache.cache.engine import CacheEngine
from sitecache.cache.settings_store import SETTINGS_NAME
from sitecache.cache.storage import Storage
from sitecache.cache.storage.disk import DiskStorage
from sitecache.cache.storage.memory import MemoryStorage
from sitecache.cache.storage.redis import RedisStorage
from sitecache.domain_errors import UnavailableError
from tests.cache.conftest import FakeClock, PageApp, make_storage

CHOSEN = {"max_age": 7777, "rejected_uris": ["/private/"], "cache_query_strings": True}


class FakeDurable:
    """A durable store in memory, which a test can make fail."""

    def __init__(self) -> None:
        self.values: dict[str, bytes] = {}
        self.failing = False
        self.reads = 0

    def read_durable(self, names: Collection[str]) -> dict[str, bytes]:
        self.reads += 1
        if self.failing:
            raise UnavailableError("site_unavailable", "down")
        return {name: self.values[name] for name in names if name in self.values}

    def write_durable(self, name: str, data: bytes) -> None:
        if self.failing:
            raise UnavailableError("site_unavailable", "down")
        self.values[name] = data


def _engine(storage: Storage, clock: FakeClock, durable: FakeDurable | None) -> CacheEngine:
    engine = CacheEngine(storage, clock=clock)
    if durable is not None:
        engine.use_durable(durable)
    return engine


def _chosen(engine: CacheEngine, clock: FakeClock) -> bool:
    """Whether ``engine`` runs with `CHOSEN` after a poll round and a timer tick (its copies
    compared with the durable values)."""
    engine.values.durable.due = float("-inf")
    engine.sync_durable()
    clock.advance(10)  # past a poll round
    settings = engine.settings()
    return (
        settings.max_age == 7777
        and settings.cache_query_strings is True
        and engine.settings_values()["rejected_uris"] == ["/private/"]
    )


@pytest.fixture
def storage(backend: str, tmp_path: Path) -> Iterator[Storage]:
    found = make_storage(backend, tmp_path / "cache")
    yield found
    if isinstance(found, RedisStorage):
        found.clear_namespace()
    found.close()


def lose_values(storage: Storage) -> None:
    """Every named value of ``storage`` gone: a Redis restarted without persistence or
    flushed, an eviction, the disk index deleted."""
    if isinstance(storage, RedisStorage):
        storage.clear_namespace()
    elif isinstance(storage, DiskStorage):
        storage._connection().execute("DELETE FROM named_values")
    else:
        assert isinstance(storage, MemoryStorage)
        storage._values.clear()


def test_a_lost_copy_is_rebuilt_never_read_as_no_settings(
    storage: Storage, clock: FakeClock
) -> None:
    durable = FakeDurable()
    engine = _engine(storage, clock, durable)
    engine.update_settings(CHOSEN)
    assert SETTINGS_NAME in durable.values
    lose_values(storage)
    assert _chosen(engine, clock)
    assert storage.get_value(SETTINGS_NAME) == durable.values[SETTINGS_NAME]
    # A process started after the loss reads the durable value, not the defaults.
    lose_values(storage)
    assert _chosen(_engine(storage, clock, durable), clock)


def test_a_copy_that_differs_is_rewritten(storage: Storage, clock: FakeClock) -> None:
    durable = FakeDurable()
    engine = _engine(storage, clock, durable)
    engine.update_settings(CHOSEN)
    # An older copy (a Redis snapshot restored, a node that wrote only its storage).
    storage.set_value(SETTINGS_NAME, b'{"max_age": 10}')
    assert _chosen(engine, clock)
    assert storage.get_value(SETTINGS_NAME) == durable.values[SETTINGS_NAME]


def test_the_last_values_stay_while_the_durable_store_fails(
    storage: Storage, clock: FakeClock
) -> None:
    durable = FakeDurable()
    engine = _engine(storage, clock, durable)
    engine.update_settings(CHOSEN)
    durable.failing = True
    lose_values(storage)
    assert _chosen(engine, clock)  # the copy is gone and the durable store is down
    # A change is refused whole while the durable store fails: nothing half-written.
    with pytest.raises(UnavailableError):
        engine.update_settings({"max_age": 5})
    assert _chosen(engine, clock)
    durable.failing = False
    clock.advance(10)
    engine.settings()
    assert _chosen(engine, clock)
    assert storage.get_value(SETTINGS_NAME) == durable.values[SETTINGS_NAME]


def test_values_stored_before_the_durable_store_are_imported(
    storage: Storage, clock: FakeClock
) -> None:
    _engine(storage, clock, None).update_settings(CHOSEN)  # an earlier release
    durable = FakeDurable()
    engine = _engine(storage, clock, durable)
    assert _chosen(engine, clock)
    assert SETTINGS_NAME in durable.values
    lose_values(storage)
    assert _chosen(engine, clock)


def test_plugin_switches_are_durable(storage: Storage, clock: FakeClock, page_app: PageApp) -> None:
    durable = FakeDurable()
    engine = _engine(storage, clock, durable)
    plugins = PluginManager(PageCache(page_app, engine=engine))
    plugins.update({"awaiting_moderation": True})
    assert PLUGINS_NAME in durable.values
    lose_values(storage)
    clock.advance(10)
    engine.settings()  # a poll round finds the copy missing: the switches stay
    assert plugins.states()["awaiting_moderation"] is True
    assert plugins.cache.store_filters  # the plugin is still on in this process
    engine.sync_durable()  # the timers' tick that follows rebuilds the copy
    assert storage.get_value(PLUGINS_NAME) == durable.values[PLUGINS_NAME]


def test_without_a_durable_store_the_storage_holds_everything(
    storage: Storage, clock: FakeClock
) -> None:
    """An embedded PageCache without a site store: the settings live in its storage only,
    and a storage that loses them loses them (the documented behaviour)."""
    engine = _engine(storage, clock, None)
    engine.update_settings(CHOSEN)
    lose_values(storage)
    assert not _chosen(engine, clock)
    assert engine.settings().max_age == 3600
