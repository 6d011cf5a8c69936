"""`Purger`: the embedding application's purge API, from another process than the server's,
through the storage (disk and Redis), hard and soft."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.cache import CacheEngine, CacheRules, PageCache, Purger, Storage, cache_control
from sitecache.cache.capture import StartResponse
from sitecache.domain_errors import InvalidURL
from tests.cache.conftest import REDIS_URL, make_storage
from tests.e2e.server import REPOSITORY

SITE = "http://example.org"


@cache_control(tags=["news"])
def page(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/html")])
    return [environ["PATH_INFO"].encode()]


def status(cache: PageCache, path: str) -> str:
    response = Client(cache, use_cookies=False).get(path, base_url=SITE)
    return str(response.headers["Cache-Status"])


@pytest.fixture(params=["disk", "redis"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """``(backend, disk directory, redis namespace)`` of a storage two processes open."""
    namespace = f"test-{uuid.uuid4().hex}"
    storage = make_storage(str(request.param), tmp_path / "cache", namespace)
    storage.close()
    yield str(request.param), str(tmp_path / "cache"), namespace
    if request.param == "redis":
        cleanup = make_storage("redis", tmp_path, namespace)
        cleanup.clear_namespace()  # type: ignore[attr-defined]
        cleanup.close()


def open_cache(shared: tuple[str, str, str]) -> PageCache:
    backend, directory, namespace = shared
    storage: Storage = make_storage(backend, Path(directory), namespace)
    rules = CacheRules(hosts=frozenset({"example.org"}))
    return PageCache(page, engine=CacheEngine(storage, rules))


def purge_elsewhere(shared: tuple[str, str, str], call: str) -> str:
    """Run ``purger.<call>`` in a new Python process; what it printed (``deleted``)."""
    backend, directory, namespace = shared
    script = (
        "from sitecache.cache import Purger\n"
        f"with Purger.open({backend!r}, path={directory!r}, redis_url={REDIS_URL!r},"
        f" namespace={namespace!r}, hosts=['example.org']) as purger:\n"
        f"    print(purger.{call}.deleted)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("call", "missed", "kept"),
    [
        ("purge_tags(['news'])", ["/a/", "/b/"], []),
        ("purge_url('/a/')", ["/a/"], ["/b/"]),
        ("purge_url('http://example.org/b/')", ["/b/"], ["/a/"]),
        ("purge_urls(['/a/', '/b/'])", ["/a/", "/b/"], []),
        ("purge_all()", ["/a/", "/b/"], []),
    ],
)
def test_a_purge_from_another_process_reaches_the_servers_cache(
    shared: tuple[str, str, str], call: str, missed: list[str], kept: list[str]
) -> None:
    cache = open_cache(shared)
    try:
        for path in ("/a/", "/b/"):
            status(cache, path)
            assert "; hit" in status(cache, path)
        assert purge_elsewhere(shared, call) == str(len(missed))
        for path in missed:
            assert "miss" in status(cache, path), path
        for path in kept:
            assert "; hit" in status(cache, path), path
    finally:
        cache.close()


def test_a_soft_purge_marks_pages_stale(shared: tuple[str, str, str]) -> None:
    cache = open_cache(shared)
    try:
        status(cache, "/a/")
        assert purge_elsewhere(shared, "purge_tags('news', soft=True)") == "1"
        # The stale copy is served while this request renders it again.
        assert "fwd=stale" in status(cache, "/a/")
    finally:
        cache.close()


def test_a_purge_of_a_host_the_cache_does_not_serve_is_refused(tmp_path: Path) -> None:
    with Purger.open("disk", path=tmp_path / "cache", hosts=["example.org"]) as purger:
        with pytest.raises(InvalidURL):
            purger.purge_url("http://evil.example/")
        with pytest.raises(InvalidURL):
            purger.purge_url("/../etc/")


def test_a_purger_needs_a_storage_or_an_engine_but_not_both(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not both"):
        Purger()


def test_the_caches_own_purger_leaves_its_engine_open(tmp_path: Path) -> None:
    cache = open_cache(("disk", str(tmp_path / "cache"), ""))
    try:
        status(cache, "/a/")
        with cache.purger as purger:
            assert purger.purge_tags(["news"]).deleted == 1
        status(cache, "/a/")
        assert "; hit" in status(cache, "/a/")
    finally:
        cache.close()
