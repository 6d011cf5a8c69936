"""Fixtures of the page-cache tests: every storage backend, fake clocks, small WSGI apps.

Redis comes from ``REDIS_URL`` (default ``redis://127.0.0.1:6379/15``), each test under its own
namespace, cleaned afterwards. Without a Redis the Redis cases are skipped with a message, unless
``SITECACHE_REQUIRE_REDIS=1`` (set by ``.ci/run``) turns the skip into a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sitecache.cache import DiskStorage, MemoryStorage, Storage

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
BACKENDS = ("memory", "disk", "redis")


def redis_or_skip() -> None:
    """Skip (or fail in CI) when no Redis answers at ``REDIS_URL``."""
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except (redis.RedisError, OSError) as exc:
        message = (
            f"no Redis at {REDIS_URL} ({exc}); start one (`redis-server --port 6379`) or set "
            "REDIS_URL to run the Redis cases"
        )
        if os.environ.get("SITECACHE_REQUIRE_REDIS") == "1":
            pytest.fail(message)
        pytest.skip(message)


def make_storage(backend: str, directory: Path, namespace: str | None = None) -> Storage:
    """A fresh storage of ``backend`` (Redis under a unique namespace)."""
    if backend == "memory":
        return MemoryStorage()
    if backend == "disk":
        return DiskStorage(directory)
    redis_or_skip()
    from sitecache.cache.storage.redis import RedisStorage

    return RedisStorage(REDIS_URL, namespace or f"test-{uuid.uuid4().hex}")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend name in turn."""
    return str(request.param)


@pytest.fixture
def storage(backend: str, tmp_path: Path) -> Iterator[Storage]:
    """A fresh storage of each backend in turn."""
    store = make_storage(backend, tmp_path / "cache")
    yield store
    if backend == "redis":
        store.clear_namespace()  # type: ignore[attr-defined]
    store.close()


class FakeClock:
    """Unix time that moves only when told to."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


StartResponse = Callable[..., Any]


class PageApp:
    """A WSGI app answering fixed pages, counting its calls; tests change what it answers."""

    def __init__(self) -> None:
        self.calls = 0
        self.status = "200 OK"
        self.headers: list[tuple[str, str]] = [("Content-Type", "text/html; charset=utf-8")]
        self.body = b"<html><body>" + b"<p>Hello, reader.</p>" * 40 + b"</body></html>"
        self.seen: list[dict[str, Any]] = []
        self.delay = 0.0

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        import time

        self.calls += 1
        self.seen.append(dict(environ))
        if self.delay:
            time.sleep(self.delay)
        start_response(self.status, list(self.headers))
        return [self.body + f"<!-- call {self.calls} -->".encode()]


@pytest.fixture
def page_app() -> PageApp:
    return PageApp()


class PrivateRedis:
    """A redis-server of the test's own (on a free port) that the test may stop and resume."""

    def __init__(self, directory: Path) -> None:
        import shutil

        directory.mkdir(parents=True, exist_ok=True)
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        # A port found free may be taken before the server binds it (tests run in parallel):
        # then the server exits, and another port is tried.
        for _ in range(3):
            if self._start(binary, directory):
                return
        raise RuntimeError("redis-server did not start on three free ports")

    def _start(self, binary: str, directory: Path) -> bool:
        """Start the server on a free port; whether it is this server that answers there."""
        import socket
        import subprocess
        import time

        import redis

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [
                *(binary, "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(directory)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while self.process.poll() is None:
            try:
                client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
                # This server, not another one that got the port first.
                if int(client.info("server")["process_id"]) == self.process.pid:
                    return True
            except (redis.RedisError, OSError):
                if time.monotonic() > deadline:
                    self.close()
                    raise
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        """Freeze the server (SIGSTOP): it accepts nothing and answers nothing."""
        import signal

        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        import signal

        self.process.send_signal(signal.SIGCONT)

    def close(self) -> None:
        self.resume()
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    """A redis-server for this test alone (the shared one is never stopped)."""
    server = PrivateRedis(tmp_path)
    yield server
    server.close()
