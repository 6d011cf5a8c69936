"""A real gunicorn serving sitecache on a free loopback port, for end-to-end tests, with the
settings ``sitecache serve`` uses (`sitecache.serving.gunicorn_argv`)."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sitecache.serving import DEFAULT_THREADS, DEFAULT_TIMEOUT, gunicorn_argv

REPOSITORY = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class LiveServer:
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

    @property
    def _suffix(self) -> str:
        return f"-{self.name}" if self.name else ""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        """Start gunicorn and wait until it answers."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config_file = self.data_dir.parent / f"sitecache{self._suffix}.toml"
        config_file.write_text("\n".join(self.config_lines) + "\n", encoding="utf-8")
        self.port = self.port or free_port()
        self.log_path = self.data_dir.parent / f"gunicorn{self._suffix}.log"
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
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited early:\n{self.log()}")
            try:
                self.request("GET", "/site-json/")
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"gunicorn did not answer within {timeout} s:\n{self.log()}")

    def stop(self) -> None:
        """SIGTERM, then wait (SIGKILL if it does not stop)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=self.graceful_timeout + 5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log(self) -> str:
        """What gunicorn wrote so far."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def request(
        self,
        method: str,
        path: str,
        body: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10,
    ) -> Response:
        """Send one request over a fresh connection (``timeout`` seconds for each step)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            payload = body.encode("utf-8") if isinstance(body, str) else body
            connection.request(method, path, body=payload, headers=dict(headers or {}))
            raw = connection.getresponse()
            data = raw.read()
            return Response(raw.status, {k.lower(): v for k, v in raw.getheaders()}, data,
                            raw.getheaders())  # fmt: skip
        finally:
            connection.close()


@dataclass
class Response:
    """What came back: status, headers (lower-cased names), body."""

    status: int
    headers: dict[str, str]
    body: bytes
    header_list: list[tuple[str, str]]

    def json(self) -> object:
        import json

        return json.loads(self.body)

    def header_values(self, name: str) -> list[str]:
        """Every value of a header that may be sent several times (Set-Cookie)."""
        return [value for key, value in self.header_list if key.lower() == name.lower()]
