"""The Redis purge generation: read on every request over its own connection, which must
survive Redis dropping it (a restart, an idle timeout) without failing a request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cache.conftest import make_storage


@pytest.fixture
def redis_storage(tmp_path: Path) -> Iterator[Any]:
    store = make_storage("redis", tmp_path)  # skips the test when Redis is missing
    from sitecache.cache.storage.redis import RedisStorage

    assert isinstance(store, RedisStorage)
    yield store
    store.clear_namespace()
    store.close()


def test_a_bump_is_seen_by_another_client_on_its_next_read(redis_storage: Any) -> None:
    from sitecache.cache.storage.redis import RedisStorage

    other = RedisStorage(redis_storage.location, redis_storage.prefix.split(":")[1])
    try:
        before = other.generation()
        redis_storage.bump_generation()
        assert other.generation() != before
    finally:
        other.close()


def test_the_generation_is_read_again_after_redis_drops_the_connection(
    redis_storage: Any,
) -> None:
    first = redis_storage.generation()
    connection = redis_storage._commands.connection()
    connection.send_command("CLIENT", "ID")
    redis_storage.client.client_kill_filter(_id=connection.read_response())
    redis_storage.bump_generation()
    assert redis_storage.generation() != first
    token = redis_storage.generation()
    assert token.generation == redis_storage.client.get(redis_storage.prefix + "gen")
    assert token.epoch == redis_storage.client.get(redis_storage.prefix + "ep")


def test_closing_the_storage_closes_the_generation_connection(redis_storage: Any) -> None:
    redis_storage.generation()
    connection = redis_storage._commands.connection()
    redis_storage.close()
    assert connection._sock is None


# ---------------------------------------------------------------------- a miss's commands
def entry_bytes(key: str) -> tuple[bytes, Any]:
    from sitecache.cache import CacheEntry
    from sitecache.cache.entry import encode_entry

    page = CacheEntry(
        url="http://example.org/a", host="example.org", path="/a", variant="", status=200,
        headers=(("Content-Type", "text/html"),), body=b"<p>a</p>", gzip_body=b"",
        created=1000.0, expires=0.0, tags=("home",), etag='"e"',
    )  # fmt: skip
    return encode_entry(page), page.info(key)


def test_a_miss_stores_and_locks_after_redis_forgot_its_scripts(redis_storage: Any) -> None:
    data, info = entry_bytes("k" * 32)
    redis_storage.client.script_flush()  # a restarted Redis knows no script
    assert redis_storage.acquire_lock("fill:k", "me", 30)
    assert redis_storage.put("k" * 32, data, info, None, generation=redis_storage.generation())
    redis_storage.release_lock("fill:k", "me")
    assert redis_storage.get("k" * 32) == data
    assert redis_storage.lock_owner("fill:k") is None
    assert redis_storage.keys_for("tag", ["home"]) == {"k" * 32}


def test_a_miss_stores_after_redis_dropped_the_connection(redis_storage: Any) -> None:
    data, info = entry_bytes("k" * 32)
    generation = redis_storage.generation()
    connection = redis_storage._commands.connection()
    connection.send_command("CLIENT", "ID")
    redis_storage.client.client_kill_filter(_id=connection.read_response())
    assert redis_storage.put("k" * 32, data, info, None, generation=generation)
    assert redis_storage.get("k" * 32) == data
