"""The command line's side of authentication.

``sitecache init`` creates the data directory, the database, a secret key (mode 0600) and an
administrator whose credentials it prints once; ``user create`` adds a user with a role;
``app-password create`` prints a new application password once. Printed credentials work, and
no secret goes to standard error or the log.
"""

from __future__ import annotations

import logging
import re
import stat
from pathlib import Path

import pytest

from sitecache.app import create_app
from sitecache.cli import main
from tests.auth.conftest import APP_PASSWORDS, basic, client_for, log_in, session_token


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A TOML configuration (cheap scrypt) that the command line is pointed at.

    The command line writes ``SITECACHE_CONFIG`` into the environment; setting it here first
    lets monkeypatch restore the environment afterwards.
    """
    path = tmp_path / "sitecache.toml"
    data_dir = tmp_path / "var"
    path.write_text(
        f'data_dir = "{data_dir}"\nsite_url = "http://example.org"\npassword_hash_cost = 1024\n'
        "cache_timers = false\n"
    )
    monkeypatch.setenv("SITECACHE_CONFIG", str(path))
    monkeypatch.setenv("SITECACHE_DATA_DIR", str(data_dir))
    return path


def run(config_file: Path, *argv: str) -> int:
    return main(["--config", str(config_file), *argv])


def add_administrator(config_file: Path) -> None:
    """Give the site an administrator without printing anything."""
    create_app(str(config_file)).auth.users.create("root", "root-password", "administrator")


def printed(pattern: str, text: str) -> str:
    match = re.search(pattern, text)
    assert match is not None, text
    return match.group(1)


def test_init_creates_the_key_database_and_an_administrator_shown_once(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(config_file, "init", "--login", "boss") == 0
    out, err = capsys.readouterr()
    password = printed(r"password:\s+(\S+)", out)
    assert printed(r"login:\s+(\S+)", out) == "boss"
    assert out.count(password) == 1
    assert password not in err
    data_dir = tmp_path / "var"
    assert stat.S_IMODE((data_dir / "secret.key").stat().st_mode) == 0o600
    assert (data_dir / "site.db").is_file()

    app = create_app(str(config_file), data_dir=str(data_dir))
    boss = app.auth.users.find("boss")
    assert boss is not None
    assert boss.role == "administrator"
    client = client_for(app)
    assert log_in(client, "boss", password).status_code == 303
    assert app.auth.sessions.find(session_token(client)) is not None


def test_init_refuses_an_initialized_directory(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(config_file, "init") == 0
    capsys.readouterr()
    assert run(config_file, "init") == 1
    out, err = capsys.readouterr()
    assert "password" not in out
    assert "already initialized" in err


def test_init_keeps_an_existing_secret_key(config_file: Path, tmp_path: Path) -> None:
    key_path = tmp_path / "var" / "secret.key"
    key_path.parent.mkdir(parents=True)
    key_path.write_text("cd" * 64 + "\n")
    key_path.chmod(0o600)
    assert run(config_file, "init") == 0
    assert key_path.read_text().strip() == "cd" * 64


def test_user_create_adds_a_user_with_a_role(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_administrator(config_file)
    assert (
        run(config_file, "user", "create", "eve", "--role", "editor", "--password", "s3cret-pass")
        == 0
    )
    out, _ = capsys.readouterr()
    assert "s3cret-pass" not in out
    app = create_app(str(config_file))
    eve = app.auth.users.find("eve")
    assert eve is not None
    assert eve.role == "editor"
    assert app.auth.users.check_password(eve, "s3cret-pass")


def test_user_create_refuses_an_unknown_role(config_file: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        run(config_file, "user", "create", "eve", "--role", "overlord", "--password", "x" * 12)
    assert caught.value.code == 2


def test_user_create_refuses_a_weak_password(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_administrator(config_file)
    assert run(config_file, "user", "create", "eve", "--password", "short") == 1
    assert "at least" in capsys.readouterr().err


def test_app_password_create_prints_a_working_password_once(
    config_file: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    add_administrator(config_file)
    caplog.set_level(logging.DEBUG)
    run(config_file, "user", "create", "eve", "--role", "author", "--password", "s3cret-pass")
    capsys.readouterr()
    assert run(config_file, "app-password", "create", "eve", "--name", "deploy") == 0
    out, err = capsys.readouterr()
    password = printed(r"password:\s+((?:[A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4})", out)
    assert out.count(password) == 1
    assert password not in err
    assert password not in caplog.text
    app = create_app(str(config_file))
    response = client_for(app).get(APP_PASSWORDS.format(user="me"), headers=basic("eve", password))
    assert response.status_code == 200
    assert [item["name"] for item in response.get_json()] == ["deploy"]


def test_app_password_create_for_an_unknown_user_fails(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(config_file, "init")
    capsys.readouterr()
    assert run(config_file, "app-password", "create", "nobody", "--name", "x") == 1
    out, _ = capsys.readouterr()
    assert "password:" not in out
