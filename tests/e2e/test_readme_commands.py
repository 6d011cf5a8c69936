"""The README's shell commands, run as written against live servers (#16).

- ``SITECACHE_CONFIG=examples/greetings.toml sitecache serve`` (before #16: ``No module named
  'examples'``), from a directory holding the examples as a fresh clone does;
- every ``curl`` of the README against ``sitecache serve`` with the demo content, with the
  README's address and placeholder passwords replaced by the live ones: each answers 2xx;
- the administrator-recovery commands on an initialized site.

Only the address (``--bind`` on a free port, never 8000) and the credentials differ from the
README.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.deployment import Deployment
from tests.e2e.server import REPOSITORY, free_port
from tests.readme import blocks, inline_commands, shell_commands

README_BASE = "http://127.0.0.1:8000"
#: the README's placeholder credentials
PLACEHOLDER_CREDENTIALS = (
    "admin:'<application password>'",
    '"admin:abcd efgh ijkl mnop qrst uvwx"',
    "'admin:xxxx xxxx xxxx xxxx xxxx xxxx'",
)


def shell_environment(root: Path) -> dict[str, str]:
    """This environment's programs first on PATH, none of the caller's SITECACHE_* variables,
    and the checkout's package importable (but not the checkout itself: ``examples`` must be
    found the way the README's user finds it)."""
    shim = root / "shim"
    shim.mkdir(exist_ok=True)
    link = shim / "sitecache"
    if not link.exists():
        link.symlink_to(REPOSITORY / "sitecache")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"
    environment["PYTHONPATH"] = str(shim)
    return environment


def test_the_greetings_example_serves_as_the_readme_says(tmp_path: Path) -> None:
    command = "SITECACHE_CONFIG=examples/greetings.toml sitecache serve"
    assert command in inline_commands()
    shutil.copytree(REPOSITORY / "examples", tmp_path / "examples")
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            ["bash", "-c", f"{command} --bind 127.0.0.1:{port} --workers 1"],
            cwd=tmp_path, env=shell_environment(tmp_path), stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        body = _wait_for_json(
            process, port, "/site-json/greetings/v1/hello?name=Ada&shout=true", log
        )
        assert body["message"] == "HELLO, ADA!", body
    finally:
        # The shell, sitecache serve and gunicorn: the process group this test started.
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def _wait_for_json(
    process: subprocess.Popen[bytes], port: int, path: str, log: Path
) -> dict[str, str]:
    import http.client

    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the README's command exited:\n{log.read_text(errors='replace')}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", path)
            response = connection.getresponse()
            data = response.read()
            connection.close()
            assert response.status == 200, (response.status, data)
            found: dict[str, str] = json.loads(data)
            return found
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """``sitecache serve`` with the demo content (what ``make run`` serves)."""
    deployment = Deployment(tmp_path_factory.mktemp("readme") / "site")
    deployment.init(demo=True)
    deployment.serve("serve")
    try:
        yield deployment
    finally:
        deployment.stop()


def curl_scripts() -> list[tuple[str, str]]:
    """``(where, script)`` of each README shell block with a curl, and of each curl written
    in the running text."""
    scripts = [
        (f"README.md:{block.line}", "\n".join(shell_commands(block)))
        for block in blocks()
        if block.language == "sh" and "curl " in block.text
    ]
    scripts += [("README.md (text)", command) for command in inline_commands()
                if command.startswith("curl ")]  # fmt: skip
    return scripts


@pytest.mark.parametrize(("where", "script"), curl_scripts(), ids=[w for w, _ in curl_scripts()])
def test_every_curl_of_the_readme_answers(demo: Deployment, where: str, script: str) -> None:
    password = demo.credentials.split(":", 1)[1]
    text = script.replace(README_BASE, demo.base_url)
    for placeholder in PLACEHOLDER_CREDENTIALS:
        text = text.replace(placeholder, f"'admin:{password}'")
    assert "<application password>" not in text, text
    assert "xxxx" not in text, text
    # Each curl prints its status and what it asked; -f is not used: the status is checked.
    wrapper = (
        'curl() { printf "%s " "$(command curl -sS -o /dev/null -w "%{http_code}" "$@")"; '
        'echo "$*"; }\n'
    )
    completed = subprocess.run(
        ["bash", "-e", "-c", wrapper + text],
        cwd=demo.root, env=shell_environment(demo.root), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, f"{where}:\n{completed.stdout}\n{completed.stderr}"
    answers = [line.split(" ", 1) for line in completed.stdout.splitlines() if line.strip()]
    assert len(answers) == text.count("curl "), completed.stdout
    failed = [(status, asked) for status, asked in answers if not status.startswith("2")]
    assert failed == [], f"{where}: {failed}"


def test_the_administrator_recovery_commands_run(tmp_path: Path) -> None:
    [block] = [b for b in blocks() if b.language == "sh" and "sitecache user passwd" in b.text]
    site = Deployment(tmp_path / "site")
    site.init()
    listed = json.loads(site.cli("app-password", "list", "admin", "--json").stdout)
    environment = {**shell_environment(tmp_path), **{k: v for k, v in site.environment().items()
                                                     if k.startswith("SITECACHE_")}}  # fmt: skip
    for command in shell_commands(block):
        command = command.replace("UUID", listed[0]["uuid"])
        completed = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=environment, capture_output=True,
            text=True, timeout=120, check=False,
        )  # fmt: skip
        if command.startswith("sitecache init"):
            # "only when the site has no administrator at all": this one has one.
            assert completed.returncode == 1, completed
            assert "already initialized" in completed.stderr
        else:
            assert completed.returncode == 0, (command, completed.stdout, completed.stderr)
    assert json.loads(site.cli("app-password", "list", "admin", "--json").stdout) == []
    assert re.search(r"\badmin\b", site.cli("user", "list").stdout)
    assert uuid.UUID(listed[0]["uuid"])
