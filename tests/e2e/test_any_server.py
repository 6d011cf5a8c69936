"""The cache's background work and its one identity under the servers users run (#16).

Each case initializes a site with ``sitecache init`` (no ``site_url``, no ``cache_namespace``),
serves it with ``sitecache serve`` (gunicorn, pre-forked workers with threads), gunicorn's
sync workers, ``waitress-serve --call`` (one process, threads) or uWSGI (pre-forked, threads;
#20), on disk or on Redis, then checks that:

- ``sitecache cache stats`` and ``flush`` act on exactly what the server stored (before #16,
  on Redis the command line looked under another namespace than ``serve``);
- GC runs on schedule, a preload asked for over REST and one asked for by ``sitecache cache
  preload`` both finish, and ``/status`` has no ``timers_not_running`` warning (before #16,
  nothing of it ran under waitress);
- preload visits are counted apart from the visitors' hits and misses.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitecache.cache.api.timers import GC_NAME
from sitecache.cache.deployment import IDENTITY_FILE
from sitecache.cache.storage import DiskStorage, Storage
from tests.cache.conftest import REDIS_URL, redis_or_skip
from tests.e2e.deployment import SERVER_KINDS, Deployment, wait_for, warning_codes
from tests.e2e.server import stopped_after


def open_storage(site: Deployment, backend: str) -> Storage:
    """The site's storage, opened from the test process (the Redis namespace from the
    identity ``sitecache init`` persisted)."""
    if backend == "disk":
        return DiskStorage(site.data_dir / "cache")
    from sitecache.cache.storage.redis import RedisStorage

    namespace = (site.data_dir / IDENTITY_FILE).read_text(encoding="ascii").strip()
    return RedisStorage(REDIS_URL, namespace)


#: ``(server, backend)``: every server kind on disk (#20), the two of #16 on Redis too (the
#: namespace the server and the command line agree on does not depend on the server).
CASES = [*((kind, "disk") for kind in SERVER_KINDS), ("serve", "redis"), ("waitress", "redis")]


@pytest.fixture(params=CASES, ids="-".join)
def case(request: pytest.FixtureRequest) -> tuple[str, str]:
    server, backend = request.param
    return str(server), str(backend)


@pytest.fixture
def site(
    request: pytest.FixtureRequest, tmp_path: Path, case: tuple[str, str]
) -> Iterator[Deployment]:
    server, backend = case
    lines = [f'cache_backend = "{backend}"']
    if backend == "redis":
        redis_or_skip()
        lines.append(f'redis_url = "{REDIS_URL}"')
    deployment = Deployment(tmp_path / "site", lines)
    deployment.init()
    deployment.serve(server)
    try:
        with stopped_after(deployment, request, server):
            yield deployment
    finally:
        if backend == "redis":
            storage = open_storage(deployment, backend)
            storage.clear_namespace()  # type: ignore[attr-defined]
            storage.close()


def test_the_command_line_sees_and_flushes_what_the_server_stored(
    site: Deployment, request: pytest.FixtureRequest
) -> None:
    for path in ("/", "/feed/", "/sitemap.xml"):
        assert site.request("GET", path).status == 200
        assert "; hit" in site.request("GET", path).headers["cache-status"]

    # Counters reach the storage within a second, each worker's on its own clock: wait for
    # both kinds (a worker may have flushed its hits before another flushed its miss).
    def counted() -> dict[str, Any] | None:
        stats: dict[str, Any] = site.cli_json("cache", "stats")
        requests = stats["requests"]
        return stats if requests["hit"] >= 3 and requests["miss"] >= 3 else None

    stats = wait_for(counted, 10, "the server's counters")
    assert stats["entries"]["total"] == 3
    assert (stats["requests"]["hit"], stats["requests"]["miss"]) == (3, 3)
    listed = site.cli_json("cache", "list")
    assert listed["total"] == 3
    assert sorted(row["url"] for row in listed["entries"]) == [
        f"{site.base_url}{path}" for path in ("/", "/feed/", "/sitemap.xml")
    ]
    flushed = site.cli_json("cache", "flush")
    assert flushed["deleted"] == 3
    assert site.cli_json("cache", "stats")["entries"]["total"] == 0
    # The server sees the flush on its very next request.
    assert "stored" in site.request("GET", "/").headers["cache-status"]
    text = site.cli("cache", "flush", "--url", "/").stdout
    assert "1 entry deleted" in text


def test_scheduled_work_runs_and_preloads_finish(site: Deployment, backend_of: str) -> None:
    site.request("GET", "/")  # the first request starts the timers of the process serving it
    status = wait_for(
        lambda: (s := site.api("GET", "/status"))["gc"]["next_run"] and s,
        20,
        "the timers to schedule GC",
    )
    assert "timers_not_running" not in warning_codes(status)

    # GC on schedule: make it due now; the timers' holder runs it within a few ticks.
    storage = open_storage(site, backend_of)
    try:
        storage.set_value(
            GC_NAME, json.dumps({"last_run": None, "next_run": time.time() - 1}).encode()
        )
    finally:
        storage.close()
    gc = wait_for(lambda: (g := site.api("GET", "/status")["gc"])["last_run"] and g, 20, "GC")
    assert gc["next_run"] > gc["last_run"]

    # A preload asked for over REST finishes.
    started = site.api("POST", "/preload", {"enable": True})
    assert started["total"] >= 1
    progress = wait_for(
        lambda: (p := site.api("GET", "/status")["preload"])["finished"] and not p["running"] and p,
        60,
        "the REST preload",
    )
    assert (progress["done"], progress["failed"]) == (progress["total"], 0)

    # One asked for by the command line is picked up by the server's timers and finishes.
    followed = site.cli_json("cache", "preload")
    assert (followed["done"], followed["failed"], followed["running"]) == (
        followed["total"],
        0,
        False,
    )

    # Preload visits are counted apart from the visitors' requests (one miss, above).
    visits = 2 * followed["total"]
    stats = wait_for(
        lambda: (
            (s := site.cli_json("cache", "stats"))["preload"]["hit"] + s["preload"]["miss"]
            >= visits
            and s["requests"]["miss"] >= 1  # the visitor's, flushed by its own worker
            and s
        ),
        10,
        "the preload counters",
    )
    assert stats["preload"]["hit"] + stats["preload"]["miss"] == visits
    assert (stats["requests"]["hit"], stats["requests"]["miss"]) == (0, 1)
    status = site.api("GET", "/status")
    assert "timers_not_running" not in warning_codes(status)
    assert "gc_overdue" not in warning_codes(status)


@pytest.fixture
def backend_of(site: Deployment) -> str:
    return "redis" if any("redis" in line for line in site.config_lines) else "disk"
