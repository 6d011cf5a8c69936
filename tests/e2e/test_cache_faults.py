"""The page cache under faults, end to end (#15 acceptance): a hung Redis, workers killed with
SIGKILL during writes and purges, and a crowd of first requests for one page.

Each runs real gunicorn nodes with the gthread workers of ``sitecache serve`` and the race
harness (`tests.e2e.race`): readers and REST edits together, every read checked against the
edits that had returned before it started.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import statistics
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitecache.cache import CacheEngine, DiskStorage
from sitecache.cache.entry import decode_entry
from tests.cache.conftest import REDIS_URL, PrivateRedis, redis_or_skip
from tests.e2e.race import HOST, Client, admin_auth, run_race, setup_site, start_nodes
from tests.e2e.server import LiveServer


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path / "redis")
    yield server
    server.close()


def stop_all(nodes: list[LiveServer]) -> None:
    for node in nodes:
        node.stop()


def show_logs(nodes: list[LiveServer]) -> None:
    for node in nodes:
        print(f"----- {node.log_path} -----\n{node.log()[-3000:]}")


# ---------------------------------------------------------------------- a hung Redis
def test_a_hung_redis_costs_no_error_no_stall_and_no_stale_page(
    tmp_path: Path, private_redis: PrivateRedis
) -> None:
    nodes = start_nodes(
        tmp_path, 1, ['cache_backend = "redis"', f'redis_url = "{private_redis.url}"']
    )
    window: dict[str, float] = {}

    def hang(duration: float) -> None:
        time.sleep(2.0)
        window["start"] = time.monotonic()
        private_redis.stop()  # SIGSTOP: connections hang, nothing is refused
        time.sleep(6.0)
        private_redis.resume()
        window["end"] = time.monotonic()

    try:
        site = setup_site(nodes[0], admin_auth(nodes[0]), HOST)
        report = run_race(nodes, site, duration=11.0, readers=12, during=hang)
        print(report.summary())
        during = report.latencies(window["start"], window["end"])
        median = statistics.median(during)
        print(f"{len(during)} reads during the 6 s hang, median {median * 1000:.0f} ms, "
              f"max {during[-1] * 1000:.0f} ms")  # fmt: skip
        if report.errors or report.stale or report.stuck or report.edit_errors:
            show_logs(nodes)
        assert not report.errors, report.summary()  # no 5xx
        assert not report.dropped, report.summary()
        assert not report.edit_errors, report.summary()  # edits during the hang succeed
        assert not report.stale, report.summary()
        assert not report.stuck, report.summary()  # every page current 1.5 s after
        assert len(during) >= 20
        assert median <= 0.5, f"median {median:.3f} s during the hang"
    finally:
        stop_all(nodes)


# ---------------------------------------------------------------------- killed workers
def workers_of(node: LiveServer) -> list[int]:
    assert node.process is not None
    found = subprocess.run(
        ["pgrep", "-P", str(node.process.pid)], capture_output=True, text=True, check=False
    )
    return [int(pid) for pid in found.stdout.split()]


def kill_workers(nodes: list[LiveServer], duration: float) -> None:
    """SIGKILL one worker of each node every second (gunicorn starts a new one)."""
    deadline = time.monotonic() + duration - 1.0
    time.sleep(1.0)
    while time.monotonic() < deadline:
        for node in nodes:
            pids = workers_of(node)
            if pids:
                os.kill(pids[int(time.monotonic() * 1000) % len(pids)], signal.SIGKILL)
        time.sleep(1.0)


@pytest.fixture(params=["disk", "redis"])
def fault_nodes(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[LiveServer]]:
    extra: list[str] = []
    if request.param == "redis":
        redis_or_skip()
        namespace = f"kill-{uuid.uuid4().hex}"
        extra = ['cache_backend = "redis"', f'redis_url = "{REDIS_URL}"',
                 f'cache_namespace = "{namespace}"']  # fmt: skip
    nodes = start_nodes(tmp_path, 1, extra)
    yield nodes
    stop_all(nodes)
    if request.param == "redis":
        from sitecache.cache.storage.redis import RedisStorage

        RedisStorage(REDIS_URL, namespace).clear_namespace()


def test_workers_killed_during_writes_and_purges_leave_nothing_stale_or_unreachable(
    fault_nodes: list[LiveServer],
) -> None:
    node = fault_nodes[0]
    site = setup_site(node, admin_auth(node), HOST)
    report = run_race(fault_nodes, site, duration=7.0, readers=12, during=lambda d: kill_workers(
        fault_nodes, d))  # fmt: skip
    print(report.summary())
    if report.errors or report.stale or report.stuck:
        show_logs(fault_nodes)
    # A killed worker drops the requests it held (clients reconnect); none gets a 5xx.
    assert not report.errors, report.summary()
    assert not report.stale, report.summary()
    assert not report.stuck, report.summary()
    config = (node.data_dir.parent / "sitecache-node0.toml").read_text()
    if "redis" not in config:
        cache_dir = node.data_dir / "cache"
        with sqlite3.connect(cache_dir / "index.sqlite3") as connection:
            orphans, missing = connection.execute(
                "SELECT (SELECT COUNT(*) FROM bodies WHERE id NOT IN (SELECT rowid FROM entries)),"
                " (SELECT COUNT(*) FROM entries WHERE rowid NOT IN (SELECT id FROM bodies))"
            ).fetchone()
        assert (orphans, missing) == (0, 0)  # no body a purge cannot reach, no torn row
        storage = DiskStorage(cache_dir)
        keys = storage.keys_for("host", None)
        assert all(decode_entry(storage.get(key)) is not None for key in keys)
        assert CacheEngine(storage).purge_all().deleted == len(keys)
        assert all(storage.get(key) is None for key in keys)
        storage.close()


# ---------------------------------------------------------------------- a crowd of first visits
@pytest.mark.parametrize("backend", ["disk", "redis"])
def test_sixty_concurrent_first_requests_render_once_per_node(tmp_path: Path, backend: str) -> None:
    extra: list[str] = []
    count = 1
    if backend == "redis":
        redis_or_skip()
        namespace = f"crowd-{uuid.uuid4().hex}"
        extra = ['cache_backend = "redis"', f'redis_url = "{REDIS_URL}"',
                 f'cache_namespace = "{namespace}"']  # fmt: skip
        count = 2
    nodes = start_nodes(tmp_path, count, extra)
    try:
        site = setup_site(nodes[0], admin_auth(nodes[0]), HOST)
        path = site.pages[0]
        barrier = threading.Barrier(60)
        statuses: list[tuple[int, int, str]] = []
        lock = threading.Lock()

        def visit(number: int) -> None:
            node = number % count
            client = Client(nodes[node].port, HOST)
            barrier.wait()
            status, headers, _ = client.request("GET", path)
            client.close()
            with lock:
                statuses.append((node, status, headers.get("cache-status", "")))

        threads = [threading.Thread(target=visit, args=(n,)) for n in range(60)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(statuses) == 60
        assert all(status == 200 for _, status, _ in statuses), statuses
        for node in range(count):
            renders = [s for n, _, s in statuses if n == node and "fwd=" in s
                       and "collapsed" not in s]  # fmt: skip
            assert len(renders) <= 1, (node, json.dumps(statuses))
        assert sum("stored" in s for _, _, s in statuses) == 1  # one render in all
    finally:
        stop_all(nodes)
        if backend == "redis":
            from sitecache.cache.storage.redis import RedisStorage

            RedisStorage(REDIS_URL, namespace).clear_namespace()
