"""The page cache end to end: gunicorn with 2 workers, and two gunicorn "nodes" on one Redis."""

from __future__ import annotations

import gzip
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitecache.cache import CacheEngine, DiskStorage
from tests.cache.conftest import REDIS_URL, redis_or_skip
from tests.e2e.server import LiveServer


def hit(response: object) -> bool:
    return str(response.headers.get("cache-status", "")).startswith("sitecache; hit")  # type: ignore[attr-defined]


def test_a_miss_is_stored_and_then_served_as_a_hit(live_server: LiveServer) -> None:
    live_server.request("GET", "/")  # whatever the state, the page is now stored
    responses = [live_server.request("GET", "/") for _ in range(6)]
    assert all(hit(response) for response in responses), [r.headers for r in responses]
    assert responses[0].body == responses[-1].body
    assert b"<html" in responses[0].body.lower()


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Cookie": "sitecache_session=whatever"}, "logged_in_cookie"),
        ({"Authorization": "Basic YWRtaW46bm9wZQ=="}, "authorization"),
    ],
)
def test_a_login_cookie_or_credentials_bypass_the_cache(
    live_server: LiveServer, headers: dict[str, str], reason: str
) -> None:
    live_server.request("GET", "/")
    response = live_server.request("GET", "/", headers=headers)
    assert response.headers["cache-status"] == f"sitecache; fwd=bypass; detail={reason}"


def test_the_gzip_copy_and_304(live_server: LiveServer) -> None:
    plain = live_server.request("GET", "/")
    zipped = live_server.request("GET", "/", headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert gzip.decompress(zipped.body) == live_server.request("GET", "/").body
    etag = live_server.request("GET", "/").headers["etag"]
    not_modified = live_server.request("GET", "/", headers={"If-None-Match": etag})
    assert not_modified.status == 304
    assert not_modified.body == b""
    assert plain.status == 200


def test_an_unkeyed_forwarded_host_or_a_foreign_host_cannot_poison_a_page(
    live_server: LiveServer,
) -> None:
    forwarded = live_server.request("GET", "/", headers={"X-Forwarded-Host": "evil.example"})
    assert forwarded.headers["cache-status"] == "sitecache; fwd=bypass; detail=forwarded_host"
    foreign = live_server.request("GET", "/", headers={"Host": "evil.example"})
    assert foreign.headers["cache-status"] == "sitecache; fwd=bypass; detail=foreign_host"
    for _ in range(4):
        page = live_server.request("GET", "/")
        assert b"evil.example" not in page.body


def test_a_purge_is_seen_by_every_worker_on_its_next_request(live_server: LiveServer) -> None:
    for _ in range(8):  # both workers hold the page in their memory tier
        live_server.request("GET", "/")
    time.sleep(2.1)
    storage = DiskStorage(live_server.data_dir / "cache")
    result = CacheEngine(storage).purge_all()
    storage.close()
    assert result.deleted >= 1
    purged_at = time.monotonic()
    first = live_server.request("GET", "/")
    assert first.headers["cache-status"] == "sitecache; fwd=uri-miss; stored"
    for _ in range(8):
        since_purge = time.monotonic() - purged_at
        response = live_server.request("GET", "/")
        # A copy from before the purge is at least 2.1 s older than the time since the purge.
        assert int(response.headers["age"]) < 2 + int(since_purge), response.headers


def test_rest_and_login_paths_are_never_stored(live_server: LiveServer) -> None:
    for path in ("/site-json/", "/login"):
        response = live_server.request("GET", path)
        assert response.headers["cache-status"] == "sitecache; fwd=bypass; detail=rest_or_admin"


@pytest.fixture
def two_nodes(tmp_path: Path) -> Iterator[tuple[LiveServer, LiveServer, str]]:
    redis_or_skip()
    namespace = f"e2e-{uuid.uuid4().hex[:12]}"
    config = [
        'cache_backend = "redis"',
        f'redis_url = "{REDIS_URL}"',
        f'cache_namespace = "{namespace}"',
    ]
    nodes = [
        LiveServer(data_dir=tmp_path / name / "var", config_lines=list(config))
        for name in ("one", "two")
    ]
    for node in nodes:
        node.start()
    try:
        yield nodes[0], nodes[1], namespace
    finally:
        for node in nodes:
            node.stop()
        from sitecache.cache.storage.redis import RedisStorage

        RedisStorage(REDIS_URL, namespace).clear_namespace()


def test_two_nodes_on_one_redis_share_pages_and_purges(
    two_nodes: tuple[LiveServer, LiveServer, str],
) -> None:
    from sitecache.cache.storage.redis import RedisStorage

    one, two, namespace = two_nodes
    # Both nodes answer as 127.0.0.1 on their own port: key the page by one path on both.
    first = one.request("GET", "/", headers={"Host": "localhost"})
    assert first.headers["cache-status"] == "sitecache; fwd=uri-miss; stored"
    shared = two.request("GET", "/", headers={"Host": "localhost"})
    assert hit(shared), shared.headers
    assert shared.body == first.body
    for _ in range(4):
        assert hit(two.request("GET", "/", headers={"Host": "localhost"}))
    CacheEngine(RedisStorage(REDIS_URL, namespace)).purge_all()
    after = two.request("GET", "/", headers={"Host": "localhost"})
    assert after.headers["cache-status"] == "sitecache; fwd=uri-miss; stored"
    assert hit(one.request("GET", "/", headers={"Host": "localhost"}))
