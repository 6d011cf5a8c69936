"""The plain WSGI example (``examples/pagecache_app.py``) under gunicorn (2 sync workers), on
disk and on Redis, configured only from the environment: a miss, hits from both workers, and
a purge by tag from another process (a `Purger` on the same storage) that every worker sees."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from sitecache.cache import Purger
from tests.cache.conftest import REDIS_URL, redis_or_skip
from tests.examples.server import ExampleServer, gunicorn, serving


@pytest.fixture(params=["disk", "redis"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ExampleServer, Purger]]:
    backend = str(request.param)
    if backend == "redis":
        redis_or_skip()
    root = tmp_path_factory.mktemp(f"pagecache-{backend}")
    namespace = f"example-{uuid.uuid4().hex}"
    environment = {
        "PAGECACHE_BACKEND": backend,
        "PAGECACHE_DIR": str(root / "cache"),
        "PAGECACHE_REDIS_URL": REDIS_URL,
        "PAGECACHE_NAMESPACE": namespace,
    }
    example = ExampleServer(
        gunicorn("examples.pagecache_app:app"),
        root / "server.log",
        environment=environment,
        ready_path="/?ready",  # a query string: never stored
    )
    purger = Purger.open(backend, path=root / "cache", redis_url=REDIS_URL, namespace=namespace)
    try:
        with serving(example, request):
            yield example, purger
    finally:
        if backend == "redis":
            purger.engine.storage.clear_namespace()  # type: ignore[attr-defined]
        purger.close()


def test_a_tag_purge_from_another_process_reaches_every_worker(
    server: tuple[ExampleServer, Purger],
) -> None:
    example, purger = server
    assert "stored" in example.cache_status("/")
    for _ in range(4):
        assert "; hit" in example.cache_status("/")
    assert purger.purge_tags(["home"]).deleted == 1
    assert "miss" in example.cache_status("/")
    for _ in range(4):
        assert "; hit" in example.cache_status("/")
    assert purger.purge_url("/").deleted == 1
    assert "miss" in example.cache_status("/")


def test_a_host_it_was_not_told_about_bypasses(server: tuple[ExampleServer, Purger]) -> None:
    example, _ = server
    answer = example.request("GET", "/", headers={"Host": "example.org"})
    assert answer.status == 200
    assert "bypass" in answer.headers["cache-status"]
