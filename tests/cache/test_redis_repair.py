"""A Redis key of the wrong type in the cache's namespace is dropped (#29): the cache starts
empty instead of failing every request that meets it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from sitecache.cache import CacheEngine
from sitecache.cache.entry import CacheEntry, encode_entry
from sitecache.cache.purging import PurgeResult
from sitecache.cache.storage import StorageUnusable
from tests.cache.conftest import REDIS_URL, redis_or_skip

redis = pytest.importorskip("redis")


@pytest.fixture
def engine() -> Iterator[CacheEngine]:
    from sitecache.cache.storage.redis import RedisStorage

    redis_or_skip()
    storage = RedisStorage(REDIS_URL, f"test-{uuid.uuid4().hex}")
    built = CacheEngine(storage)
    yield built
    storage.clear_namespace()
    built.close()


def page(number: int) -> CacheEntry:
    return CacheEntry(
        url=f"http://example.org/{number}", host="example.org", path=f"/{number}", variant="",
        status=200, headers=(("Content-Type", "text/html"),), body=f"<p>{number}</p>".encode(),
        gzip_body=b"", created=1000.0, expires=0.0, tags=("home",), etag='"e"',
    )  # fmt: skip


def store(engine: CacheEngine, number: int) -> str:
    key = f"{number:032x}"
    entry = page(number)
    assert engine.storage.put(key, encode_entry(entry), entry.info(key), None)
    return key


def client(engine: CacheEngine) -> object:
    return engine.storage.client  # type: ignore[attr-defined]


def test_an_entry_key_of_another_type_empties_the_cache_once(engine: CacheEngine) -> None:
    kept = store(engine, 1)
    told: list[PurgeResult] = []
    engine.purge_listeners.append(told.append)
    before = engine.generation()
    prefix = engine.storage.prefix  # type: ignore[attr-defined]
    client(engine).hset(f"{prefix}e:{'f' * 32}", "x", "y")  # type: ignore[attr-defined]
    with pytest.raises(StorageUnusable) as raised:
        engine.load("f" * 32)
    assert raised.value.kind == "damaged"
    assert "starts empty" in str(raised.value)
    assert engine.generation() != before  # tiers forget, renders begun before are refused
    assert [result.scope for result in told] == ["all"]
    assert engine.load(kept) is None  # the cache started empty
    assert engine.load("f" * 32) is None  # and the foreign key is out of sight
    again = store(engine, 2)
    assert engine.load(again) is not None


@pytest.mark.parametrize("name", ["tot", "i", "byc"])
def test_an_index_key_of_another_type_is_dropped(engine: CacheEngine, name: str) -> None:
    store(engine, 1)
    prefix = engine.storage.prefix  # type: ignore[attr-defined]
    client(engine).delete(prefix + name)  # type: ignore[attr-defined]
    client(engine).rpush(prefix + name, "foreign")  # type: ignore[attr-defined]
    with pytest.raises(StorageUnusable):
        store(engine, 2)
    key = store(engine, 3)
    assert engine.load(key) is not None
    assert engine.stats()["entries"]["total"] == 1


def test_counters_of_another_type_are_dropped_and_the_entries_stay(engine: CacheEngine) -> None:
    key = store(engine, 1)
    prefix = engine.storage.prefix  # type: ignore[attr-defined]
    client(engine).set(prefix + "c", "foreign")  # type: ignore[attr-defined]
    with pytest.raises(StorageUnusable):
        engine.storage.add_counters({"hit": 1})
    engine.storage.add_counters({"hit": 1})
    assert engine.storage.counters() == {"hit": 1}
    assert engine.load(key) is not None


def test_a_named_value_or_a_lock_of_another_type_is_dropped_where_it_is_read(
    engine: CacheEngine,
) -> None:
    prefix = engine.storage.prefix  # type: ignore[attr-defined]
    client(engine).rpush(prefix + "v:settings", "foreign")  # type: ignore[attr-defined]
    client(engine).hset(prefix + "l:regen:x", "a", "b")  # type: ignore[attr-defined]
    assert engine.read_value("settings") is None
    assert engine.locks.lock_owner("regen:x") is None
    client(engine).hset(prefix + "l:regen:x", "a", "b")  # type: ignore[attr-defined]
    owner = engine.acquire("regen:x", 30)
    assert owner is not None
    engine.release("regen:x", owner)
    assert engine.locks.lock_owner("regen:x") is None
