"""The ``sitecache`` command line: init, users, application passwords, serve."""

from __future__ import annotations

import io
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from sitecache import cli
from sitecache.auth import AuthService, PasswordHasher


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


def auth_for(data_dir: Path) -> AuthService:
    return AuthService(data_dir, hasher=PasswordHasher(n=1024))


@pytest.fixture
def initialized(data_dir: Path) -> Path:
    """A data directory whose site has an administrator (``root``), made quietly."""
    auth_for(data_dir).users.create("root", "root-password", "administrator")
    return data_dir


def test_init_creates_private_files_and_prints_the_administrator_once(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(data_dir, "init", "--login", "root", "--email", "root@example.org") == 0
    output = capsys.readouterr().out
    password = re.search(r"password: (\S+)", output)
    assert password is not None
    assert "login:    root" in output
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    for name in ("site.db", "secret.key"):
        assert stat.S_IMODE((data_dir / name).stat().st_mode) == 0o600
    auth = auth_for(data_dir)
    user = auth.users.find("root")
    assert user is not None
    assert user.role == "administrator"
    assert auth.users.check_password(user, password.group(1))
    assert password.group(1) not in (data_dir / "site.db").read_bytes().decode("latin-1")


def test_init_refuses_to_run_twice(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(data_dir, "init") == 0
    capsys.readouterr()
    assert run(data_dir, "init") == 1
    assert "already initialized (1 user)" in capsys.readouterr().err


def test_user_create_takes_a_role_and_a_password(data_dir: Path, initialized: Path) -> None:
    assert (
        run(data_dir, "user", "create", "eve", "--role", "editor", "--password", "pa55word!") == 0
    )
    auth = auth_for(data_dir)
    user = auth.users.find("eve")
    assert user is not None
    assert user.role == "editor"
    assert auth.users.check_password(user, "pa55word!")


def test_user_create_reads_the_password_from_standard_input(
    data_dir: Path, initialized: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("from-stdin-123\n"))
    assert run(data_dir, "user", "create", "ivy", "--password", "-") == 0
    auth = auth_for(data_dir)
    user = auth.users.find("ivy")
    assert user is not None
    assert auth.users.check_password(user, "from-stdin-123")


def test_user_create_generates_and_prints_a_password_when_none_is_given(
    data_dir: Path, initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(data_dir, "user", "create", "gus") == 0
    password = re.search(r"password: (\S+)", capsys.readouterr().out)
    assert password is not None
    auth = auth_for(data_dir)
    user = auth.users.find("gus")
    assert user is not None
    assert user.role == "subscriber"
    assert auth.users.check_password(user, password.group(1))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["bad/login", "--password", "long-enough"], "This username is invalid"),
        (["short", "--password", "short"], "A password has at least 8 characters."),
        (
            ["mail", "--password", "long-enough", "--email", "nope"],
            "email: Invalid email address.",
        ),
    ],
)
def test_user_create_explains_bad_input(
    data_dir: Path,
    initialized: Path,
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    message: str,
) -> None:
    assert run(data_dir, "user", "create", *arguments) == 1
    assert message in capsys.readouterr().err


def test_user_create_refuses_an_existing_login(
    data_dir: Path, initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(data_dir, "user", "create", "dup", "--password", "long-enough") == 0
    assert run(data_dir, "user", "create", "DUP", "--password", "long-enough") == 1
    assert "that username is already used" in capsys.readouterr().err


def test_app_password_create_prints_a_password_that_authenticates(
    data_dir: Path, initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(data_dir, "user", "create", "kim", "--password", "long-enough")
    capsys.readouterr()
    assert run(data_dir, "app-password", "create", "kim", "--name", "Backup") == 0
    password = re.search(r"password: ((?:\w{4} ){5}\w{4})", capsys.readouterr().out)
    assert password is not None
    from sitecache.auth.app_passwords import BasicCredentials

    result = auth_for(data_dir).app_passwords.authenticate(
        BasicCredentials("kim", password.group(1)), "127.0.0.1"
    )
    assert not hasattr(result, "code"), result


def test_app_password_create_for_an_unknown_user_fails_clearly(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(data_dir, "app-password", "create", "ghost", "--name", "X") == 1
    assert "no user with login or email 'ghost'" in capsys.readouterr().err


def test_serve_initializes_on_first_start_and_execs_gunicorn(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[str, list[str]]] = []

    def fake_execve(path: str, argv: list[str], environment: dict[str, str]) -> Any:
        calls.append((path, argv))
        assert environment["SITECACHE_DATA_DIR"] == str(data_dir.resolve())
        # Links follow the bind address, never a client's Host header.
        assert environment["SITECACHE_SITE_URL"] == "http://127.0.0.1:9999"

    monkeypatch.setattr(cli.os, "execve", fake_execve)
    run(data_dir, "serve", "--bind", "127.0.0.1:9999", "--workers", "3")
    output = capsys.readouterr().out
    assert "First start" in output
    assert re.search(r"password: \S+", output)
    (_, argv) = calls[0]
    assert argv[1:3] == ["-m", "gunicorn"]
    assert argv[argv.index("--bind") + 1] == "127.0.0.1:9999"
    assert argv[argv.index("--workers") + 1] == "3"
    assert argv[-1] == "sitecache.app:create_app()"

    calls.clear()
    run(data_dir, "serve", "--bind", "127.0.0.1:9999")
    assert "First start" not in capsys.readouterr().out  # initialized once only
    assert len(calls) == 1


def test_serve_on_every_interface_warns_that_site_url_is_unset(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    environments: list[dict[str, str]] = []
    monkeypatch.setattr(cli.os, "execve", lambda path, argv, env: environments.append(env))
    run(data_dir, "serve", "--bind", "0.0.0.0:8000")
    assert "site_url is not set" in capsys.readouterr().err
    assert "SITECACHE_SITE_URL" not in environments[0]


def test_a_bad_configuration_exits_with_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('rest_prefix = "has space"\n', encoding="utf-8")
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    assert cli.main(["--config", str(config), "init"]) == 2
    assert "invalid configuration" in capsys.readouterr().err
