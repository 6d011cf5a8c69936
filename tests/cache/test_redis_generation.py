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
    store = make_storage("redis", tmp_path)
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
    connection = redis_storage._generation_connection()
    connection.send_command("CLIENT", "ID")
    redis_storage.client.client_kill_filter(_id=connection.read_response())
    redis_storage.bump_generation()
    assert redis_storage.generation() != first
    token = redis_storage.generation()
    assert token.generation == redis_storage.client.get(redis_storage.prefix + "gen")
    assert token.epoch == redis_storage.client.get(redis_storage.prefix + "ep")


def test_closing_the_storage_closes_the_generation_connection(redis_storage: Any) -> None:
    redis_storage.generation()
    connection = redis_storage._generation_connection()
    redis_storage.close()
    assert connection._sock is None
