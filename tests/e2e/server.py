"""A real gunicorn serving sitecache on a free loopback port, for end-to-end tests, with the
settings ``sitecache serve`` uses (`sitecache.serving.gunicorn_argv`); and `ServerProcess`,
what every server process these tests start shares (`LiveServer`, `tests.e2e.deployment`'s
``Deployment``, `tests.examples.server`'s ``ExampleServer``)."""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from sitecache.serving import DEFAULT_THREADS, DEFAULT_TIMEOUT, gunicorn_argv

REPOSITORY = Path(__file__).resolve().parents[2]

#: How often `LiveServer.start` tries.
START_ATTEMPTS = 3
#: What gunicorn logs when the port it was given is taken.
PORT = "Connection in use"
#: Start failures that are the test's circumstances, not the server's behaviour: a port taken
#: between `free_port` and gunicorn's bind (tests run in parallel). (Workers creating a fresh
#: data directory at once are the server's business: `sitecache.sqlite_wal` makes that work.)
RETRIED_FAILURES = (PORT,)
#: gunicorn configuration: each worker drops a file named after it once the app is loaded.
READY_HOOK = """
import os
import pathlib


def post_worker_init(worker):
    pathlib.Path({directory!r}, str(os.getpid())).touch()
"""


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServerProcess:
    """A server process on a loopback port: starting it, stopping it, its log, requests to it.

    The subclasses are dataclasses holding ``port``, ``process``, ``log_path`` and (for
    ``admin`` requests) ``credentials``, ``login:password``.
    """

    port: int
    process: subprocess.Popen[bytes] | None
    #: the file the server writes to (``None``: not started yet)
    log_path: Path | None
    credentials: str = ""
    #: how long a request waits for each step, unless the call says otherwise
    request_timeout: float = 30

    def stop_timeout(self) -> float:
        """How long `stop` waits after SIGTERM before SIGKILL."""
        return 20

    def launch(
        self,
        command: Sequence[str],
        *,
        environment: Mapping[str, str],
        cwd: Path,
        ready_path: str,
        timeout: float,
        what: str,
    ) -> None:
        """Run ``command`` (its output appended to `log_path`) and wait until ``ready_path``
        answers.

        Raises:
            RuntimeError: it exited or did not answer within ``timeout`` seconds (then it is
                stopped), with its log and ``what`` it was.
        """
        assert self.log_path is not None
        with self.log_path.open("ab") as log:  # the child keeps its own copy of the handle
            self.process = subprocess.Popen(
                command, env=environment, cwd=cwd, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{what} exited early:\n{self.log()}")
            try:
                self.request("GET", ready_path)
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{what} did not answer within {timeout} s:\n{self.log()}")

    def stop(self) -> None:
        """SIGTERM, then wait (SIGKILL if it does not stop in `stop_timeout`)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=self.stop_timeout())
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log(self) -> str:
        """What the server wrote so far."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        *,
        admin: bool = False,
        timeout: float | None = None,
    ) -> Response:
        """One request over a fresh connection (``admin``: HTTP Basic with ``credentials``;
        a ``bytes`` or ``str`` body is sent as it is, any other as JSON; ``timeout`` seconds
        for each step, `request_timeout` by default)."""
        sent = dict(headers or {})
        if admin:
            token = base64.b64encode(self.credentials.encode()).decode()
            sent["Authorization"] = f"Basic {token}"
        payload: bytes | None = None
        if isinstance(body, bytes | str):
            payload = body.encode() if isinstance(body, str) else body
        elif body is not None:
            payload = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        connection = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=self.request_timeout if timeout is None else timeout
        )
        try:
            connection.request(method, path, body=payload, headers=sent)
            raw = connection.getresponse()
            data = raw.read()
            return Response(raw.status, {k.lower(): v for k, v in raw.getheaders()}, data,
                            raw.getheaders())  # fmt: skip
        finally:
            connection.close()


Server = TypeVar("Server", bound=ServerProcess)


@contextmanager
def stopped_after(
    server: Server, request: pytest.FixtureRequest, name: str = "server"
) -> Iterator[Server]:
    """Yield the started ``server``; then stop it, and print its log (headed ``name``) when a
    test failed meanwhile."""
    failed_before = request.session.testsfailed
    try:
        yield server
    finally:
        server.stop()
        if request.session.testsfailed > failed_before:
            print(f"\n----- {name} log ({server.log_path}) -----\n{server.log()}")


@dataclass
class LiveServer(ServerProcess):
    """A gunicorn process and how to reach it."""

    data_dir: Path
    config_lines: list[str] = field(default_factory=list)
    workers: int = 2
    threads: int = DEFAULT_THREADS
    timeout: int = DEFAULT_TIMEOUT
    graceful_timeout: int = 5
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    #: suffixes the config and log files beside the data directory (two nodes may share one)
    name: str = ""
    #: more environment variables for the server
    environment: dict[str, str] = field(default_factory=dict)
    _ready_dir: Path = field(default=Path(), repr=False)
    request_timeout = 10

    def stop_timeout(self) -> float:
        """gunicorn's graceful stop and a margin."""
        return self.graceful_timeout + 5

    @property
    def _suffix(self) -> str:
        return f"-{self.name}" if self.name else ""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        """Start gunicorn and wait until every worker has loaded the application and it answers.

        On a free port of its choosing, a start that fails because that port was taken in the
        meantime (by a parallel test, see `RETRIED_FAILURES`) is tried again; any other failure
        raises `RuntimeError` with gunicorn's log.
        """
        chosen = not self.port
        for attempt in range(1, START_ATTEMPTS + 1):
            self.port = free_port() if chosen else self.port
            self._launch()
            failure = self._wait_until_ready(time.monotonic() + timeout)
            if failure is None:
                return
            retried = [line for line in RETRIED_FAILURES if line in self.log()]
            if attempt == START_ATTEMPTS or not retried or (not chosen and PORT in retried):
                raise RuntimeError(f"{failure}:\n{self.log()}")
            print(f"gunicorn start {attempt} failed ({retried[0]}), starting it again")

    def _launch(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config_file = self.data_dir.parent / f"sitecache{self._suffix}.toml"
        config_file.write_text("\n".join(self.config_lines) + "\n", encoding="utf-8")
        self.log_path = self.data_dir.parent / f"gunicorn{self._suffix}.log"
        # Every worker says when it has loaded the application (gunicorn's post_worker_init).
        self._ready_dir = self.data_dir.parent / f"ready{self._suffix}"
        shutil.rmtree(self._ready_dir, ignore_errors=True)
        self._ready_dir.mkdir()
        hooks = self.data_dir.parent / f"gunicorn{self._suffix}.conf.py"
        hooks.write_text(READY_HOOK.format(directory=str(self._ready_dir)), encoding="utf-8")
        environment = {
            **os.environ,
            "SITECACHE_CONFIG": str(config_file),
            "SITECACHE_DATA_DIR": str(self.data_dir),
            "PYTHONPATH": str(REPOSITORY),
            **self.environment,
        }
        # The settings of `sitecache serve` (sitecache.serving), with a short graceful stop.
        command = [
            sys.executable, "-m", "gunicorn",
            "--chdir", str(REPOSITORY),
            "--config", str(hooks),
            *gunicorn_argv(
                f"127.0.0.1:{self.port}",
                self.workers,
                threads=self.threads,
                timeout=self.timeout,
                graceful_timeout=self.graceful_timeout,
            ),
        ]  # fmt: skip
        with self.log_path.open("wb") as log:  # the child keeps its own copy of the handle
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=environment, cwd=REPOSITORY
            )

    def _wait_until_ready(self, deadline: float) -> str | None:
        """``None`` once every worker has loaded the application and it answers; else why not
        (gunicorn stopped, or ``deadline`` passed)."""
        assert self.process is not None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return "gunicorn exited early"
            if len(list(self._ready_dir.iterdir())) >= self.workers:
                try:
                    self.request("GET", "/site-json/")
                    return None
                except OSError:
                    pass
            time.sleep(0.05)
        self.stop()
        return f"gunicorn was not ready within the time allowed on port {self.port}"


@dataclass
class Response:
    """What came back: status, headers (lower-cased names), body."""

    status: int
    headers: dict[str, str]
    body: bytes
    header_list: list[tuple[str, str]]

    def json(self) -> object:
        return json.loads(self.body)

    def header_values(self, name: str) -> list[str]:
        """Every value of a header that may be sent several times (Set-Cookie)."""
        return [value for key, value in self.header_list if key.lower() == name.lower()]
