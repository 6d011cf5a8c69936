"""A data directory that is read-only at start (#29 row 11): a real read-only mount (root
ignores permissions, not a read-only file system). ``sitecache serve``, ``init`` and
``migrate`` say so on one line naming the directory and the user and exit 2; gunicorn's
workers (``create_app``) say the same on one line, no traceback, and gunicorn stops.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from sitecache.app import create_app
from sitecache.config import ConfigError
from tests.e2e.server import REPOSITORY, free_port
from tests.faults.conftest import TmpfsFactory


def _user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


def _environment(data_dir: Path) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
    environment.update({"SITECACHE_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPOSITORY)})
    return environment


def _sitecache(data_dir: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitecache.cli", *arguments],
        env=_environment(data_dir),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def read_only_site(tmpfs: TmpfsFactory) -> Path:
    """A site's data directory (initialized) on a file system then remounted read-only."""
    disk = tmpfs("data", "16m")
    data_dir = disk.path / "var"
    initialized = _sitecache(data_dir, "init")
    assert initialized.returncode == 0, initialized.stderr
    disk.remount("ro")
    return data_dir


@pytest.mark.parametrize("arguments", [["serve", "--bind", "127.0.0.1:0"], ["init"], ["migrate"]])
def test_commands_say_it_on_one_line_and_exit_2(read_only_site: Path, arguments: list[str]) -> None:
    done = _sitecache(read_only_site, *arguments)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(read_only_site) in lines[0]
    assert _user() in lines[0]
    assert "Read-only file system" in lines[0]


def test_gunicorn_workers_say_it_on_one_line_and_gunicorn_stops(read_only_site: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{free_port()}",
         "--worker-class", "sitecache.serving.BoundedThreadWorker", "--workers", "2",
         "sitecache.app:create_app()"],
        env=_environment(read_only_site),
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode != 0
    output = done.stdout + done.stderr
    # No traceback of ours. (gunicorn's arbiter may print its own HaltServer traceback when two
    # workers fail to load at the same moment: its reap during halt raises again.)
    assert "/sitecache/" not in output, output
    ours = [line for line in output.splitlines() if line.startswith("sitecache: ")]
    assert ours, output
    assert all(str(read_only_site) in line and _user() in line for line in ours)
    assert "App failed to load" in output


def test_create_app_raises_one_line(read_only_site: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        create_app({"data_dir": str(read_only_site)})
    message = str(raised.value)
    assert "\n" not in message
    assert str(read_only_site) in message
    assert _user() in message
