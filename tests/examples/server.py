"""An example application served by a real WSGI server on a free loopback port.

The examples name no host or port: the server is told where to listen (gunicorn's ``--bind``),
the rest comes from the environment the test gives. The server's log is printed when a test
fails (`serving`).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.server import REPOSITORY, Response, free_port

#: How long a server may take to answer its first request.
START_TIMEOUT = 60.0


@dataclass
class ExampleServer:
    """One server process (``command`` gets ``{bind}`` replaced by ``127.0.0.1:<port>``)."""

    command: Sequence[str]
    log_path: Path
    environment: Mapping[str, str] = field(default_factory=dict)
    cwd: Path = REPOSITORY
    ready_path: str = "/"
    port: int = 0
    credentials: str = ""
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it on a free port and wait until ``ready_path`` answers.

        Raises:
            RuntimeError: it exited or did not answer in time (with its log).
        """
        self.port = free_port()
        command = [part.replace("{bind}", f"127.0.0.1:{self.port}") for part in self.command]
        environment = {**os.environ, "PYTHONPATH": str(REPOSITORY), **self.environment}
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=self.cwd, env=environment, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{command} exited early:\n{self.log()}")
            try:
                self.request("GET", self.ready_path)
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{command} did not answer in time:\n{self.log()}")

    def stop(self) -> None:
        """SIGTERM, then wait (SIGKILL if it does not stop)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log(self) -> str:
        """What the server wrote so far."""
        if not self.log_path.exists():
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
    ) -> Response:
        """One request over a fresh connection (``admin``: HTTP Basic with ``credentials``;
        a ``dict`` body is sent as JSON, ``bytes`` or ``str`` as they are)."""
        sent = dict(headers or {})
        payload: bytes | None = None
        if isinstance(body, dict):
            payload = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        elif body is not None:
            payload = body.encode() if isinstance(body, str) else body
        if admin:
            sent["Authorization"] = "Basic " + base64.b64encode(self.credentials.encode()).decode()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, body=payload, headers=sent)
            raw = connection.getresponse()
            data = raw.read()
            return Response(raw.status, {k.lower(): v for k, v in raw.getheaders()}, data,
                            raw.getheaders())  # fmt: skip
        finally:
            connection.close()

    def cache_status(self, path: str) -> str:
        """The ``Cache-Status`` of a GET of ``path`` (200 expected)."""
        response = self.request("GET", path)
        assert response.status == 200, (path, response.status, response.body[:300])
        return response.headers["cache-status"]


def gunicorn(app: str, *, workers: int = 2, chdir: Path = REPOSITORY) -> list[str]:
    """``python -m gunicorn`` serving ``app`` (imported from ``chdir``) with sync workers on
    ``{bind}``."""
    return [sys.executable, "-m", "gunicorn", "--bind", "{bind}", "--workers", str(workers),
            "--chdir", str(chdir), "--no-control-socket", app]  # fmt: skip


@contextmanager
def serving(server: ExampleServer, request: pytest.FixtureRequest) -> Iterator[ExampleServer]:
    """Start ``server``, yield it, stop it; print its log when a test failed meanwhile."""
    server.start()
    failed_before = request.session.testsfailed
    try:
        yield server
    finally:
        server.stop()
        if request.session.testsfailed > failed_before:
            print(f"\n----- server log ({server.log_path}) -----\n{server.log()}")
