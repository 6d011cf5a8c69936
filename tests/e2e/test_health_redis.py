"""``/healthz`` on the Redis storage: still 200 while Redis is stopped (the cache is disposable:
pages are served uncached), its storage check ``warn`` with ``cache_storage_unusable`` among
the warnings, and ``ok`` again once Redis is back (#19 point 5). A Redis of the test's own runs
on a free loopback port."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.server import LiveServer, free_port


class OwnRedis:
    """A ``redis-server`` that the test starts and stops (no persistence)."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        executable = shutil.which("redis-server")
        assert executable is not None
        self.process = subprocess.Popen(
            [executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        import redis

        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=0.5).ping()
                return
            except (redis.RedisError, OSError):
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.stop()


def health(server: LiveServer) -> tuple[int, dict[str, object]]:
    response = server.request("GET", "/healthz", timeout=15)
    return response.status, json.loads(response.body)


def wait_for(server: LiveServer, storage: str, seconds: float = 30) -> dict[str, object]:
    """The first ``/healthz`` body (a 200) whose storage check says ``storage``."""
    deadline = time.monotonic() + seconds
    while True:
        found, body = health(server)
        assert found == 200, body  # never out of the load balancer for its cache
        if body["checks"]["storage"]["status"] == storage:  # type: ignore[index]
            return body
        assert time.monotonic() < deadline, f"the storage check stayed: {body}"
        time.sleep(0.2)


def test_healthz_follows_redis_down_and_back(tmp_path: Path, own_redis: OwnRedis) -> None:
    server = LiveServer(
        data_dir=tmp_path / "var",
        config_lines=[
            'cache_backend = "redis"',
            f'redis_url = "redis://127.0.0.1:{own_redis.port}/0"',
            'cache_namespace = "health-e2e"',
        ],
    )
    server.start()
    try:
        body = wait_for(server, "ok")
        checks = dict(body["checks"])  # type: ignore[call-overload]
        assert checks.pop("disk")["status"] in ("ok", "warn")  # the data directory's disk
        assert checks == {
            "storage": {"status": "ok", "backend": "redis"},
            "database": {"status": "ok"},
        }
        own_redis.stop()
        body = wait_for(server, "warn")
        assert body["status"] == "warn"
        assert "failing" not in body
        assert body["checks"]["storage"]["backend"] == "redis"  # type: ignore[index]
        assert body["checks"]["database"] == {"status": "ok"}  # type: ignore[index]
        assert "cache_storage_unusable" in body["warnings"]  # type: ignore[operator]
        assert str(own_redis.port) not in json.dumps(body)  # no address, no secret
        assert server.request("GET", "/", timeout=15).status == 200  # served, uncached
        own_redis.start()
        wait_for(server, "ok")
    finally:
        server.stop()
