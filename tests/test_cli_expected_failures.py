"""The command line as a newcomer meets it (#10 points 11 and 13): the same checks as REST,
every expected failure on one line with a non-zero exit, ``--version`` and real help."""

from __future__ import annotations

import argparse
import os
import pwd
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sitecache import __version__, cli
from sitecache.auth import AuthService, PasswordHasher
from tests.e2e.server import REPOSITORY


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data directory; the environment cannot leak configuration in."""
    for variable in ("SITECACHE_CONFIG", "SITECACHE_DATA_DIR", "SITECACHE_SITE_URL"):
        monkeypatch.delenv(variable, raising=False)
    config = tmp_path / "sitecache.toml"
    config.write_text("password_hash_cost = 1024\n", encoding="utf-8")
    monkeypatch.setenv("SITECACHE_CONFIG", str(config))
    return tmp_path / "var"


def run(data_dir: Path, *arguments: str) -> int:
    return cli.main(["--data-dir", str(data_dir), *arguments])


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert lines[0].startswith("sitecache: ")
    return lines[0]


@pytest.fixture
def kim(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> str:
    # The first user of a site is its administrator (`user create` refuses anything else).
    arguments = ["user", "create", "kim", "--role", "administrator", "--password", "long-enough"]
    assert run(data_dir, *arguments) == 0
    capsys.readouterr()
    return "kim"


# ---------------------------------------------------------------------- app-password create
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--name", "Backup", "--app-id", "nope"],
            "app_id does not match any of the expected formats",
        ),
        (["--name", " "], "name"),
        (["--name", ""], "name"),
        (["--name", "x" * 201], "name must be at most 200 characters long"),
    ],
)
def test_app_password_create_checks_what_rest_checks(
    data_dir: Path, kim: str, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    assert run(data_dir, "app-password", "create", kim, *arguments) == 2
    assert message in one_line(capsys.readouterr().err)
    auth = AuthService(data_dir, hasher=PasswordHasher(n=1024))
    user = auth.users.find(kim)
    assert user is not None
    assert auth.app_passwords.list(user) == []


def test_app_password_create_accepts_a_uuid_and_strips_the_name(
    data_dir: Path, kim: str, capsys: pytest.CaptureFixture[str]
) -> None:
    app_id = "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert (
        run(data_dir, "app-password", "create", kim, "--name", " Backup ", "--app-id", app_id) == 0
    )
    auth = AuthService(data_dir, hasher=PasswordHasher(n=1024))
    user = auth.users.find(kim)
    assert user is not None
    [record] = auth.app_passwords.list(user)
    assert (record.name, record.app_id) == ("Backup", app_id)


def test_an_argument_that_is_not_utf8_is_one_line(
    data_dir: Path, kim: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(data_dir, "app-password", "create", kim, "--name", "caf\udce9") == 2
    assert "UTF-8" in one_line(capsys.readouterr().err)


# ---------------------------------------------------------------------- the data directory
def test_a_data_dir_that_is_a_file_is_one_line(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir.write_text("not a directory\n", encoding="utf-8")
    for arguments in (["init"], ["user", "create", "bob"], ["serve"]):
        assert run(data_dir, *arguments) == 2
        assert "is not a directory" in one_line(capsys.readouterr().err)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_a_read_only_data_dir_is_one_line(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir.mkdir(mode=0o500)
    data_dir.chmod(0o500)
    try:
        assert run(data_dir, "init") == 2
    finally:
        data_dir.chmod(0o700)
    line = one_line(capsys.readouterr().err)
    assert "Permission denied" in line
    assert str(data_dir.resolve()) in line
    assert pwd.getpwuid(os.geteuid()).pw_name in line


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (PermissionError(13, "Permission denied", "var/secret.key"), "Permission denied: var/"),
        (OSError(28, "No space left on device", "var/site.db"), "No space left on device"),
        (sqlite3.OperationalError("database or disk is full"), "database or disk is full"),
        (sqlite3.OperationalError("attempt to write a readonly database"), "readonly database"),
    ],
)
def test_a_read_only_or_full_disk_is_one_line(
    data_dir: Path,
    kim: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failure: Exception,
    message: str,
) -> None:
    def failing(*args: Any, **kwargs: Any) -> Any:
        raise failure

    monkeypatch.setattr("sitecache.cli.users.AuthService", failing)  # what the commands build
    for arguments in (
        ["init"],
        ["user", "create", "bob"],
        ["app-password", "create", kim, "--name", "x"],
    ):
        assert run(data_dir, *arguments) == 1
        assert message in one_line(capsys.readouterr().err)


def test_a_broken_database_is_one_line(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data_dir.mkdir(mode=0o700)
    (data_dir / "site.db").write_bytes(b"this is not an SQLite database at all" * 100)
    assert run(data_dir, "init") == 1
    assert "the site database cannot be used" in one_line(capsys.readouterr().err)


def test_no_traceback_reaches_the_user_of_the_real_command(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x", encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
    completed = subprocess.run(
        [sys.executable, "-m", "sitecache.cli", "--data-dir", str(target), "init"],
        env=environment,
        capture_output=True,
        text=True,
        cwd=REPOSITORY,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    one_line(completed.stderr)


# ---------------------------------------------------------------------- serve
@pytest.mark.parametrize("workers", ["0", "-1", "two"])
def test_serve_refuses_a_worker_count_that_cannot_answer(
    data_dir: Path, workers: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        run(data_dir, "serve", "--workers", workers)
    assert stopped.value.code == 2
    assert "--workers" in capsys.readouterr().err


def no_exec(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []
    monkeypatch.setattr("sitecache.cli.serve.os.execve", lambda path, argv, env: calls.append(argv))
    return calls


def test_serve_says_so_when_the_port_is_taken(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = no_exec(monkeypatch)
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert run(data_dir, "serve", "--bind", f"127.0.0.1:{port}") == 2
    assert "already in use" in one_line(capsys.readouterr().err)
    assert calls == []


def test_serve_reports_a_bad_plugin_before_gunicorn_starts(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = no_exec(monkeypatch)
    config = Path(os.environ["SITECACHE_CONFIG"])
    config.write_text(
        'password_hash_cost = 1024\nplugins = ["no_such_module_here:activate"]\n', encoding="utf-8"
    )
    assert run(data_dir, "serve", "--bind", "127.0.0.1:0") == 2
    err = capsys.readouterr().err
    assert "no_such_module_here:activate" in one_line(err)
    assert calls == []


@pytest.mark.parametrize(
    ("plugin", "words"),
    [
        pytest.param("boom_plugin.py:activate", ["RuntimeError", "no database here"], id="raises"),
        pytest.param("json:dumps", ["json:dumps", "TypeError"], id="not-a-plugin"),
    ],
)
def test_serve_reports_a_plugin_whose_activation_fails_before_gunicorn_starts(
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    plugin: str,
    words: list[str],
) -> None:
    """Importable but failing in ``activate(app)``: one line naming the plugin and the
    error, status 2, gunicorn never started (every worker used to print a traceback)."""
    calls = no_exec(monkeypatch)
    config = Path(os.environ["SITECACHE_CONFIG"])
    (config.parent / "boom_plugin.py").write_text(
        "def activate(app):\n    raise RuntimeError('no database here')\n", encoding="utf-8"
    )
    config.write_text(f'password_hash_cost = 1024\nplugins = ["{plugin}"]\n', encoding="utf-8")
    assert run(data_dir, "serve", "--bind", "127.0.0.1:0") == 2
    line = one_line(capsys.readouterr().err)
    assert "failed to activate" in line
    assert plugin in line
    for word in words:
        assert word in line
    assert calls == []


def test_serve_starts_gunicorn_when_the_plugins_activate(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = no_exec(monkeypatch)
    config = Path(os.environ["SITECACHE_CONFIG"])
    (config.parent / "fine_plugin.py").write_text(
        "def activate(app):\n    app.hooks.add_action('init', lambda: None)\n", encoding="utf-8"
    )
    config.write_text(
        'password_hash_cost = 1024\nplugins = ["fine_plugin.py:activate"]\n', encoding="utf-8"
    )
    assert run(data_dir, "serve", "--bind", "127.0.0.1:0") is None
    assert len(calls) == 1


def test_serve_runs_threaded_workers_with_bounded_timeouts(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = no_exec(monkeypatch)
    run(data_dir, "serve", "--bind", "127.0.0.1:0", "--threads", "4")
    [argv] = calls

    def option(name: str) -> str:
        return argv[argv.index(name) + 1]

    assert option("--worker-class") == "sitecache.serving.BoundedThreadWorker"
    assert option("--threads") == "4"
    assert option("--forwarded-allow-ips") == ""
    assert option("--logger-class") == "sitecache.serving.EscapingAccessLog"
    for name in ("--timeout", "--graceful-timeout", "--keep-alive"):
        assert 0 < int(option(name)) <= 60


# ---------------------------------------------------------------------- version and help
def test_version_names_the_release(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.strip() == f"sitecache {__version__}"


def test_the_top_level_help_says_where_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = capsys.readouterr().out
    for expected in ("sitecache init", "sitecache serve", "SITECACHE_CONFIG", "--version"):
        assert expected in text


def parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += parsers(child)
    return found


def test_every_option_and_argument_has_help() -> None:
    missing: list[str] = []
    for parser in parsers(cli.build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not action.help:
                missing.append(f"{parser.prog} {action.dest}")
    assert missing == []


def test_make_run_honours_host_port_and_bind() -> None:
    makefile = (REPOSITORY / "Makefile").read_text(encoding="utf-8")
    dry: dict[str, Any] = {}
    for variables in (
        {},
        {"PORT": "8123"},
        {"HOST": "192.0.2.1", "PORT": "9"},
        {"BIND": "[::1]:7"},
    ):
        completed = subprocess.run(
            [
                "make",
                "-n",
                "-o",
                ".venv/.installed",
                "run",
                *(f"{k}={v}" for k, v in variables.items()),
            ],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        dry[str(variables)] = completed.stdout
    assert "--bind '127.0.0.1:8000'" in dry["{}"]
    assert "--bind '127.0.0.1:8123'" in dry[str({"PORT": "8123"})]
    assert "--bind '192.0.2.1:9'" in dry[str({"HOST": "192.0.2.1", "PORT": "9"})]
    assert "--bind '[::1]:7'" in dry[str({"BIND": "[::1]:7"})]
    assert "sitecache serve" in makefile


# ---------------------------------------------------------------------- no site (attack item 12)
SITE_COMMANDS = (
    ["user", "list"],
    ["user", "passwd", "root", "--password", "long-enough"],
    ["user", "delete", "root"],
    ["app-password", "list", "root"],
    ["app-password", "create", "root", "--name", "x"],
    ["app-password", "revoke", "root", "0f8fad5b-d9cb-469f-a165-70867728950e"],
    ["cache", "stats"],
    ["cache", "status"],
    ["cache", "list"],
    ["cache", "flush", "--all"],
    ["cache", "settings"],
    ["cache", "enable"],
    ["cache", "preload", "--no-wait"],
    ["migrate"],
    ["openapi"],
    ["health"],
)


@pytest.mark.parametrize("empty", [False, True], ids=["missing", "empty"])
@pytest.mark.parametrize("arguments", SITE_COMMANDS, ids=" ".join)
def test_a_command_on_no_site_refuses_and_creates_nothing(
    data_dir: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], empty: bool
) -> None:
    # Each used to create ./var (0755, a secret key and an empty site.db) and answer "0
    # entries deleted" or "No users yet" with exit status 0.
    if empty:
        data_dir.mkdir(mode=0o700)
    assert run(data_dir, *arguments) == 2
    error = one_line(capsys.readouterr().err)
    assert f"no site in the data directory {data_dir}" in error
    assert "`sitecache init`" in error
    assert "--data-dir" in error
    if empty:
        assert list(data_dir.iterdir()) == []
    else:
        assert not data_dir.exists()


def test_only_the_commands_that_make_a_site_create_the_data_directory_0700(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A first user who is not an administrator makes no site either.
    assert run(data_dir, "user", "create", "bob", "--password", "long-enough") == 1
    assert "no administrator yet" in one_line(capsys.readouterr().err)
    assert not data_dir.exists()
    deep = tmp_path / "nonexistent" / "x"
    assert run(deep, "user", "list") == 2
    assert not deep.parent.exists()
    for directory, arguments in (
        (deep, ["init"]),
        (tmp_path / "admin", ["user", "create", "ada", "--role", "administrator",
                              "--password", "long-enough"]),
    ):  # fmt: skip
        assert run(directory, *arguments) == 0
        assert directory.stat().st_mode & 0o777 == 0o700
        assert (directory / "site.db").is_file()
    capsys.readouterr()
    assert run(deep, "cache", "stats") == 0
    assert "entries:  0" in capsys.readouterr().out


@pytest.mark.parametrize("port", ["99999", "²", "", "-1", "65536"])
def test_serve_names_a_port_that_is_no_port(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    calls = no_exec(monkeypatch)
    assert run(data_dir, "serve", "--bind", f"127.0.0.1:{port}") == 2
    line = one_line(capsys.readouterr().err)
    assert f"port {port!r}" in line
    assert "1 to 65535" in line
    assert calls == []
    assert not data_dir.exists()  # refused before anything was created


# ---------------------------------------------------------------------- a reader that went away
@pytest.mark.parametrize("command", [["openapi"], ["user", "list"], ["cache", "list"]])
def test_a_reader_that_went_away_ends_the_command_quietly(
    data_dir: Path, kim: str, command: list[str]
) -> None:
    # `sitecache user list | head -1`: the reader is gone before the command writes (its
    # end of the pipe is closed first, so every write meets EPIPE). As the Python
    # documentation's "Note on SIGPIPE": exit status 1 and nothing on standard error.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "sitecache.cli", "--data-dir", str(data_dir), *command],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPOSITORY,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert completed.stderr == ""
    assert completed.returncode == 1
