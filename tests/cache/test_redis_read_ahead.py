"""A request's first read of the storage: the purge generation with the entry of its key, and
on Redis, when nothing is stored there, the fill lock of the key, in one round trip
(`Storage.generation_for`). A miss then asks Redis twice (that read, the put that frees the
lock), a hit the memory tier does not hold once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.cache import PageCache, Storage
from sitecache.cache.fills import FillCoordinator
from sitecache.cache.locks import Locks
from tests.cache.conftest import make_storage
from tests.cache.test_redis_generation import entry_bytes


@pytest.fixture
def redis_storage(tmp_path: Path) -> Iterator[Any]:
    store: Any = make_storage("redis", tmp_path)  # skips the test when Redis is missing
    yield store
    store.clear_namespace()
    store.close()


def counting(storage: Any) -> list[tuple[Any, ...]]:
    """Every command `storage` sends on its request path from now on, recorded."""
    sent: list[tuple[Any, ...]] = []
    command = storage._commands.command

    def record(*args: Any) -> Any:
        sent.append(args)
        return command(*args)

    storage._commands.command = record
    return sent


def page(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/html"), ("Cache-Tag", "home")])
    return [b"<p>a page</p>"]


def request(cache: PageCache, path: str) -> str:
    answer = Client(cache).get(path, base_url="http://127.0.0.1")
    return str(answer.headers["Cache-Status"])


def test_a_miss_asks_redis_twice_and_a_hit_of_another_process_once(redis_storage: Any) -> None:
    from sitecache.cache.storage.redis import RedisStorage

    cache = PageCache(page, redis_storage)
    sent = counting(redis_storage)
    assert request(cache, "/a/") == "sitecache; fwd=uri-miss; stored"
    # the generation, the entry and the fill lock; then the put, which frees the lock
    assert len(sent) == 2, sent
    (key,) = redis_storage.keys_for("host", None)
    assert redis_storage.lock_owner(f"fill:{key}") is None
    other = RedisStorage(redis_storage.location, redis_storage.prefix.split(":")[1])
    try:
        elsewhere = PageCache(page, other)  # another process: its memory tier is empty
        sent = counting(other)
        assert request(elsewhere, "/a/").startswith("sitecache; hit")
        assert len(sent) == 1, sent
    finally:
        other.close()


def test_the_read_ahead_takes_the_lock_only_where_nothing_is_stored(redis_storage: Any) -> None:
    data, info = entry_bytes("k" * 32)
    assert redis_storage.put("k" * 32, data, info, None)
    token = redis_storage.generation_for("k" * 32, ("fill:k", "me", 30.0))
    assert token == redis_storage.generation()
    assert redis_storage.lock_owner("fill:k") is None  # a hit takes no lock
    assert redis_storage.get("k" * 32, token) == data
    token = redis_storage.generation_for("m" * 32, ("fill:m", "me", 30.0))
    assert redis_storage.lock_owner("fill:m") == "me"
    assert redis_storage.get("m" * 32, token) is None
    assert redis_storage.acquire_lock("fill:m", "me", 30.0)  # answered from the read


def test_a_lock_held_by_another_is_reported_held_by_the_read_ahead(redis_storage: Any) -> None:
    assert redis_storage.acquire_lock("fill:m", "another", 30.0)
    redis_storage.generation_for("m" * 32, ("fill:m", "me", 30.0))
    assert redis_storage.lock_owner("fill:m") == "another"
    assert not redis_storage.acquire_lock("fill:m", "me", 30.0)
    redis_storage.release_lock("fill:m", "another")
    assert redis_storage.acquire_lock("fill:m", "me", 30.0)  # asked again: free now


def test_what_the_read_ahead_read_answers_one_get_of_that_token_only(redis_storage: Any) -> None:
    data, info = entry_bytes("k" * 32)
    token = redis_storage.generation_for("k" * 32)
    assert redis_storage.put("k" * 32, data, info, None)
    assert redis_storage.get("k" * 32, redis_storage.generation()) == data  # another token
    assert redis_storage.get("k" * 32, token) is None  # read before the put
    assert redis_storage.get("k" * 32, token) == data  # read again


def test_the_read_ahead_reads_the_current_epoch(redis_storage: Any) -> None:
    data, info = entry_bytes("k" * 32)
    assert redis_storage.put("k" * 32, data, info, None)
    redis_storage.invalidate_all()
    token = redis_storage.generation_for("k" * 32, ("fill:k", "me", 30.0))
    assert token.epoch == b"1"
    assert redis_storage.get("k" * 32, token) is None
    assert redis_storage.lock_owner("fill:k") == "me"


def test_a_lock_key_of_another_type_is_repaired_by_the_lock_itself(redis_storage: Any) -> None:
    redis_storage.client.hset(redis_storage.prefix + "l:fill:m", "x", "y")
    token = redis_storage.generation_for("m" * 32, ("fill:m", "me", 30.0))
    assert redis_storage.get("m" * 32, token) is None
    assert redis_storage.acquire_lock("fill:m", "me", 30.0)
    assert redis_storage.lock_owner("fill:m") == "me"


def test_every_backend_gives_the_generation_and_the_entry(storage: Storage) -> None:
    data, info = entry_bytes("k" * 32)
    assert storage.put("k" * 32, data, info, None)
    token = storage.generation_for("k" * 32, ("fill:k", "me", 30.0))
    assert token == storage.generation()
    assert storage.get("k" * 32, token) == data
    token = storage.generation_for("m" * 32, ("fill:m", "me", 30.0))
    assert storage.get("m" * 32, token) is None
    assert storage.acquire_lock("fill:m", "me", 30.0)
    assert not storage.acquire_lock("fill:m", "another", 30.0)


def in_thread(work: Callable[[], Any]) -> Any:
    """``work()`` run on a thread of its own (a lock owner token names its thread)."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(work()))
    thread.start()
    thread.join(10)
    return result[0]


def test_a_thread_whose_read_took_the_lock_renders_after_another_thread_began(
    redis_storage: Any,
) -> None:
    # Thread A's read takes the lock; thread B reads (held) and begins first: B waits on the
    # lock across processes, and A, finding B in flight, renders holding the lock.
    fills = FillCoordinator(Locks(redis_storage, lambda *args: None), lambda *args: None)
    key = "m" * 32
    a_read, b_began, a_began = threading.Event(), threading.Event(), threading.Event()
    fills_seen: dict[str, Any] = {}

    def thread_a() -> None:
        redis_storage.generation_for(key, fills.lock_ahead(key))
        a_read.set()
        b_began.wait(5)
        fills_seen["a"] = fills.begin(key)
        a_began.set()

    def thread_b() -> None:
        a_read.wait(5)
        redis_storage.generation_for(key, fills.lock_ahead(key))
        fills_seen["b"] = fills.begin(key)
        b_began.set()
        a_began.wait(5)

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    lead, waiter = fills_seen["a"], fills_seen["b"]
    assert lead.lead
    assert lead.owner is not None
    assert not waiter.lead
    assert waiter.remote
    assert redis_storage.lock_owner(f"fill:{key}") == lead.owner
    fills.finish(lead, stored=True)
    assert redis_storage.lock_owner(f"fill:{key}") is None


def test_no_lock_is_offered_for_a_key_this_process_is_filling(redis_storage: Any) -> None:
    fills = FillCoordinator(Locks(redis_storage, lambda *args: None), lambda *args: None)
    lead = fills.begin("m" * 32)
    assert lead.lead
    assert in_thread(lambda: fills.lock_ahead("m" * 32)) is None
    fills.finish(lead, stored=True)
    assert in_thread(lambda: fills.lock_ahead("m" * 32)) is None  # stored a moment ago
    offered = in_thread(lambda: fills.lock_ahead("n" * 32))
    assert offered is not None
    assert offered[0] == "fill:" + "n" * 32


def test_a_lock_taken_by_a_read_the_memory_tier_then_answers_is_freed(redis_storage: Any) -> None:
    # Another thread of the process keeps the page in the memory tier between this request's
    # read (nothing stored: the lock taken) and its lookup: the tier answers, the lock goes.
    from werkzeug.test import EnvironBuilder

    cache = PageCache(page, redis_storage)
    assert request(cache, "/a/") == "sitecache; fwd=uri-miss; stored"
    (base,) = redis_storage.keys_for("host", None)
    entries = cache._entries
    kept = entries.tier.get(base, redis_storage.generation())
    assert kept is not None
    redis_storage.delete([base])
    entries.tier.forget(base)
    cache.engine.fills.forget(base)  # not "stored a moment ago": the read takes the lock
    token = entries.generation(base)
    assert redis_storage.lock_owner(f"fill:{base}") is not None
    entries.tier.put(base, kept, token)
    environ = EnvironBuilder(path="/a/", base_url="http://127.0.0.1").get_environ()
    assert entries.lookup(base, environ, cache.engine.clock(), token) == (base, kept)
    assert redis_storage.lock_owner(f"fill:{base}") is None
