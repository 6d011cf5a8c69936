"""An example application served by a real WSGI server on a free loopback port.

The examples name no host or port: the server is told where to listen (gunicorn's ``--bind``),
the rest comes from the environment the test gives. The server's log is printed when a test
fails (`serving`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.server import REPOSITORY, ServerProcess, free_port, stopped_after

#: How long a server may take to answer its first request.
START_TIMEOUT = 60.0


@dataclass
class ExampleServer(ServerProcess):
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
        self.launch(
            command,
            environment={**os.environ, "PYTHONPATH": str(REPOSITORY), **self.environment},
            cwd=self.cwd,
            ready_path=self.ready_path,
            timeout=START_TIMEOUT,
            what=str(command),
        )

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
    with stopped_after(server, request):
        yield server
