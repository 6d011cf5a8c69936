"""The shell recipes of the documentation and the README, run as written against live servers.

- every shell block made of ``curl`` and ``sitecache`` commands (and variable assignments) runs
  against ``sitecache serve`` with the demo content (what ``make run`` serves), with the pages'
  address and placeholder passwords replaced by the live ones: each curl answers 2xx and each
  command exits 0;
- ``SITECACHE_CONFIG=examples/greetings.toml sitecache serve`` serves the plugin tutorial's
  route, from a directory holding the examples as a fresh clone does;
- the user-management and administrator-recovery recipes on a site of their own.

Only the address (``--bind`` on a free port, never 8000) and the credentials differ from the
pages. Recipes that need more than this machine (several nodes, nginx, PyPI, a backup
directory) are listed in `NOT_RUN_HERE` with the test that covers them instead.
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

from tests.doc_pages import Block, blocks, inline_commands, name_of, page, shell_commands
from tests.e2e.deployment import Deployment
from tests.e2e.server import REPOSITORY, free_port

DOCS_BASE = "http://127.0.0.1:8000"
#: the pages' placeholder credentials
PLACEHOLDER_CREDENTIALS = (
    "admin:'<application password>'",
    '"admin:abcd efgh ijkl mnop qrst uvwx"',
    "'admin:xxxx xxxx xxxx xxxx xxxx xxxx'",
)
#: the programs a recipe run here may call
RUNNABLE = re.compile(r"^(?:[A-Z]+=|curl |python -c |(?:\.venv/bin/)?sitecache )")
#: commands that start, initialize or reconfigure a whole site (run by their own tests)
SITE_COMMANDS = re.compile(r"sitecache (?:serve|init|migrate|nginx-config)\b")

#: recipes not run against the demo site, and where they are covered instead
NOT_RUN_HERE = {
    "docs/howto/manage-users.md": "test_the_user_management_recipes_run (a site of their own)",
    "docs/howto/backups.md": "sqlite3, tar and jq on /backups: the store's backup is SQLite's",
    "docs/howto/static-files-nginx.md": "tests/e2e/test_static_nginx.py (a real nginx)",
}


def shell_environment(root: Path, site: Deployment | None = None) -> dict[str, str]:
    """This environment's programs first on PATH (and as ``.venv/bin`` under ``root``, as in a
    checkout), the site's SITECACHE_* variables only, the package importable (but not the
    checkout itself: ``examples`` must be found the way the reader finds it)."""
    shim = root / "shim"
    shim.mkdir(exist_ok=True)
    link = shim / "sitecache"
    if not link.exists():
        link.symlink_to(REPOSITORY / "sitecache")
    venv = root / ".venv"
    if not venv.exists():
        venv.mkdir()
        (venv / "bin").symlink_to(Path(sys.executable).parent)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"
    environment["PYTHONPATH"] = str(shim)
    if site is not None:
        environment.update(
            {k: v for k, v in site.environment().items() if k.startswith("SITECACHE_")}
        )
    return environment


def runnable(block: Block) -> bool:
    """Whether every command of an ``sh`` block can run against the demo site here."""
    commands = shell_commands(block)
    return (
        block.language == "sh"
        and name_of(block.path) not in NOT_RUN_HERE
        and bool(commands)
        and all(RUNNABLE.match(command) for command in commands)
        and not any(SITE_COMMANDS.search(command) for command in commands)
    )


def demo_recipes() -> list[Block]:
    return [block for block in blocks() if runnable(block)]


def test_the_pages_have_the_recipes_this_test_runs() -> None:
    ran = {name_of(block.path) for block in demo_recipes()}
    assert {
        "docs/tutorials/demo-site.md",
        "docs/howto/tuning.md",
        "docs/howto/purging.md",
        "docs/howto/monitoring.md",
        "docs/reference/rest-site-cache-v1.md",
        "docs/reference/rest-site-v2.md",
        "docs/reference/authentication.md",
        "docs/reference/content-site.md",
    } <= ran
    assert len(demo_recipes()) >= 15


def test_the_greetings_example_serves_as_the_tutorial_says(tmp_path: Path) -> None:
    command = "SITECACHE_CONFIG=examples/greetings.toml .venv/bin/sitecache serve"
    plugin_page = page("tutorials/write-a-plugin.md")
    [block] = [b for b in blocks(plugin_page) if b.language == "sh" and "serve" in b.text]
    assert shell_commands(block)[0].startswith(command)
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
            raise AssertionError(
                f"the tutorial's command exited:\n{log.read_text(errors='replace')}"
            )
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
    deployment = Deployment(tmp_path_factory.mktemp("docs") / "site")
    deployment.init(demo=True)
    deployment.serve("serve")
    try:
        yield deployment
    finally:
        deployment.stop()


#: each curl's status goes to standard error (its output stays where the recipe sends it)
CURL_STATUS = 'curl() { command curl -sS -w "%{stderr}%{http_code} CURL-STATUS\\n" "$@"; }\n'


@pytest.mark.parametrize("block", demo_recipes(), ids=[b.where for b in demo_recipes()])
def test_every_recipe_runs_against_the_demo_site(demo: Deployment, block: Block) -> None:
    password = demo.credentials.split(":", 1)[1]
    text = "\n".join(shell_commands(block)).replace(DOCS_BASE, demo.base_url)
    for placeholder in PLACEHOLDER_CREDENTIALS:
        text = text.replace(placeholder, f"'admin:{password}'")
    assert "<application password>" not in text, text
    assert "xxxx" not in text, text
    completed = subprocess.run(
        ["bash", "-e", "-c", CURL_STATUS + text],
        cwd=demo.root, env=shell_environment(demo.root, demo), capture_output=True, text=True,
        timeout=180, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, f"{block.where}:\n{completed.stdout}\n{completed.stderr}"
    statuses = re.findall(r"^(\d{3}) CURL-STATUS$", completed.stderr, re.MULTILINE)
    assert len(statuses) == text.count("curl "), completed.stderr
    assert [s for s in statuses if not s.startswith("2")] == [], f"{block.where}: {completed}"


def test_the_user_management_recipes_run(tmp_path: Path) -> None:
    recipes = blocks(page("howto/manage-users.md"))
    [everyday, recovery] = [b for b in recipes if b.language == "sh"]
    site = Deployment(tmp_path / "site")
    site.init()
    environment = shell_environment(tmp_path, site)
    for command in shell_commands(everyday):
        completed = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=environment, capture_output=True,
            text=True, timeout=120, check=False, input="a long enough password\n",
        )  # fmt: skip
        assert completed.returncode == 0, (command, completed.stdout, completed.stderr)
    listed = json.loads(site.cli("app-password", "list", "admin", "--json").stdout)
    for command in shell_commands(recovery):
        command = command.replace("UUID", listed[0]["uuid"] if listed else str(uuid.uuid4()))
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


def test_the_inline_curl_commands_are_in_recipes_too() -> None:
    """A curl written in the running text is one of a block's (so it runs above)."""
    in_blocks = " ".join(b.text for b in blocks() if b.language == "sh")
    for command in inline_commands():
        if command.startswith("curl "):
            assert command.split()[-1].split("/")[-1] in in_blocks, command
