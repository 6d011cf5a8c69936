"""A site deployed the way its users deploy it, for end-to-end tests: ``sitecache init`` on a
data directory, a real server process (``sitecache serve``, gunicorn or waitress) on a free
loopback port, and ``sitecache`` commands run beside it, all from one Python environment (this
one, or a virtual environment with an installed wheel).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.e2e.server import REPOSITORY, ServerProcess, free_port

T = TypeVar("T")

#: the ``site-cache/v1`` routes
CACHE_API = "/site-json/site-cache/v1"


@dataclass
class Deployment(ServerProcess):
    """One site: its configuration file, data directory, server process and credentials.

    Args:
        root: a private directory for everything (the data directory is ``root/var``).
        config_lines: the TOML configuration (``password_hash_cost`` is added).
        bin_dir: where ``sitecache`` and ``waitress-serve`` are installed; ``None`` runs them
            from this interpreter (``python -m``).
        cwd: the directory commands run in (never the checkout for an installed wheel).
    """

    root: Path
    config_lines: list[str] = field(default_factory=list)
    bin_dir: Path | None = None
    cwd: Path | None = None
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    credentials: str = ""
    #: ``root/server.log``
    log_path: Path | None = field(init=False)

    def __post_init__(self) -> None:
        self.log_path = self.root / "server.log"
        self.root.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(
            "\n".join(["password_hash_cost = 1024", *self.config_lines]) + "\n", encoding="utf-8"
        )

    @property
    def config_file(self) -> Path:
        return self.root / "sitecache.toml"

    @property
    def data_dir(self) -> Path:
        return self.root / "var"

    def environment(self) -> dict[str, str]:
        """The process environment: none of the caller's SITECACHE_* variables, this site's
        configuration file and data directory."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
        if self.bin_dir is not None:
            environment.pop("PYTHONPATH", None)  # the installed package, not the checkout
        else:
            environment["PYTHONPATH"] = str(REPOSITORY)  # the checkout these tests belong to
        environment["SITECACHE_CONFIG"] = str(self.config_file)
        environment["SITECACHE_DATA_DIR"] = str(self.data_dir)
        return environment

    def _program(self, name: str, module: str) -> list[str]:
        if self.bin_dir is not None:
            return [str(self.bin_dir / name)]
        return [sys.executable, "-m", module]

    # ------------------------------------------------------------------ the command line
    def cli(
        self, *arguments: str, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run ``sitecache --config … --data-dir … ARGUMENTS``."""
        command = [
            *self._program("sitecache", "sitecache.cli"),
            "--config", str(self.config_file),
            "--data-dir", str(self.data_dir),
            *arguments,
        ]  # fmt: skip
        completed = subprocess.run(
            command,
            env=self.environment(),
            cwd=self.cwd or self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and completed.returncode != 0:
            raise AssertionError(
                f"{' '.join(arguments)} exited {completed.returncode}:\n"
                f"{completed.stdout}\n{completed.stderr}"
            )
        return completed

    def cli_json(self, *arguments: str) -> Any:
        """The JSON a ``--json`` command printed."""
        return json.loads(self.cli(*arguments, "--json").stdout)

    def init(self, *, demo: bool = False) -> str:
        """``sitecache init`` (with ``--demo``), then an application password for the
        administrator; the administrator's ``login:password``."""
        self.cli("init", *(["--demo"] if demo else []), timeout=300)
        created = self.cli("app-password", "create", "admin", "--name", "e2e").stdout
        found = re.search(r"password: (.+?)  \(shown only once\)", created)
        assert found is not None, created
        self.credentials = f"admin:{found.group(1)}"
        return self.credentials

    # ------------------------------------------------------------------ the server
    def serve(self, kind: str, *, workers: int = 2, timeout: float = 60) -> None:
        """Start the server and wait until it answers: ``serve`` (``sitecache serve``:
        gunicorn's threaded workers with its settings), ``gunicorn-sync`` (gunicorn's default
        sync workers), ``waitress`` (``waitress-serve --call``: one process, threads) or
        ``uwsgi`` (pre-forked processes with threads; skipped where it is not installed)."""
        self.port = free_port()
        bind = f"127.0.0.1:{self.port}"
        if kind == "serve":
            command = [
                *self._program("sitecache", "sitecache.cli"),
                "--config", str(self.config_file), "--data-dir", str(self.data_dir),
                "serve", "--bind", bind, "--workers", str(workers),
            ]  # fmt: skip
        elif kind == "waitress":
            command = [
                *self._program("waitress-serve", "waitress"),
                f"--listen={bind}",
                "--call",
                "sitecache.app:create_app",
            ]
        elif kind == "gunicorn-sync":
            command = [
                *self._program("gunicorn", "gunicorn"),
                "--bind", bind, "--workers", str(workers), "--worker-class", "sync",
                "--no-control-socket", "sitecache.app:create_app()",
            ]  # fmt: skip
        elif kind == "uwsgi":
            command = uwsgi_command(self.bin_dir, bind, workers)
        else:
            raise ValueError(kind)
        self.launch(
            command,
            environment=self.environment(),
            cwd=self.cwd or self.root,
            ready_path="/site-json/",
            timeout=timeout,
            what=kind,
        )

    # ------------------------------------------------------------------ HTTP
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, method: str, route: str, body: Any = None) -> Any:
        """The JSON of a 200 answer of a ``site-cache/v1`` route, as the administrator."""
        response = self.request(method, CACHE_API + route, body, admin=True)
        assert response.status == 200, (route, response.status, response.body[:500])
        return response.json()


#: The server kinds `Deployment.serve` starts.
SERVER_KINDS = ("serve", "gunicorn-sync", "waitress", "uwsgi")


def uwsgi_program(bin_dir: Path | None = None) -> str | None:
    """The ``uwsgi`` program beside this interpreter (or in ``bin_dir``, or on the PATH), or
    ``None`` when it is not installed."""
    for directory in (bin_dir, Path(sys.executable).parent):
        if directory is not None and (directory / "uwsgi").is_file():
            return str(directory / "uwsgi")
    return shutil.which("uwsgi")


def uwsgi_or_skip(bin_dir: Path | None = None) -> str:
    """The ``uwsgi`` program, or skip the test with how to get it."""
    program = uwsgi_program(bin_dir)
    if program is None:
        pytest.skip(
            "uWSGI is not installed (`pip install uwsgi` compiles it; it needs a C compiler "
            "and the Python headers): the uWSGI cases are skipped"
        )
    return program


def uwsgi_command(bin_dir: Path | None, bind: str, workers: int) -> list[str]:
    """uWSGI serving ``sitecache.app:create_app()`` on ``bind`` the way a deployment would:
    a master, pre-forked ``workers`` with two threads each, the app loaded in each worker
    (``--lazy-apps``: its timer threads start after the fork), SIGTERM stops it."""
    return [
        uwsgi_or_skip(bin_dir),
        "--http-socket", bind,
        "--master", "--processes", str(workers), "--threads", "2", "--enable-threads",
        "--lazy-apps", "--die-on-term", "--need-app", "--strict",
        "--buffer-size", "32768",
        "--eval", "from sitecache.app import create_app\napplication = create_app()",
    ]  # fmt: skip


def wait_for(probe: Callable[[], T | None], timeout: float, what: str) -> T:
    """Poll ``probe`` until it returns something other than ``None`` or ``False``."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found is not None and found is not False:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


def warning_codes(status: Mapping[str, Any]) -> Sequence[str]:
    """The codes of ``/status``'s warnings."""
    return [warning["code"] for warning in status["warnings"]]
