"""The ``sitecache`` command line: init, users, application passwords, serve."""

from __future__ import annotations

import io
import json
import re
import stat
from contextlib import nullcontext
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from werkzeug.test import Client

from sitecache import cli
from sitecache.app import App, create_app
from sitecache.auth import AuthService, PasswordHasher
from sitecache.hooks import Hooks
from sitecache.site import ContentService
from sitecache.site.migrations import migrate_content
from tests.e2e.server import free_port


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
        (
            ["bad/login", "--password", "long-enough"],
            "login: A login is 1 to 60 characters: ASCII letters",
        ),
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
    data_dir: Path, initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(data_dir, "app-password", "create", "ghost", "--name", "X") == 1
    assert "no user with login or email 'ghost'" in capsys.readouterr().err


@pytest.mark.usefixtures("port_8000_taken")
def test_serve_initializes_on_first_start_and_execs_gunicorn(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[str, list[str]]] = []
    port = free_port()

    def fake_execve(path: str, argv: list[str], environment: dict[str, str]) -> Any:
        calls.append((path, argv))
        assert environment["SITECACHE_DATA_DIR"] == str(data_dir.resolve())
        # Links follow the bind address, never a client's Host header.
        assert environment["SITECACHE_SITE_URL"] == f"http://127.0.0.1:{port}"

    monkeypatch.setattr("sitecache.cli.serve.os.execve", fake_execve)
    screen = io.StringIO()
    monkeypatch.setattr("sitecache.cli.users.user_terminal", lambda: nullcontext(screen))
    assert run(data_dir, "serve", "--bind", f"127.0.0.1:{port}", "--workers", "3") is None
    output = capsys.readouterr().out
    assert "First start" in output
    # The password is shown on the user's terminal, never on standard output: that is the
    # server's log once gunicorn starts.
    shown = re.search(r"password: (\S+)", screen.getvalue())
    assert shown is not None
    assert "password:" not in output
    assert shown.group(1) not in output
    (_, argv) = calls[0]
    assert argv[1:3] == ["-m", "gunicorn"]
    assert argv[argv.index("--bind") + 1] == f"127.0.0.1:{port}"
    assert argv[argv.index("--workers") + 1] == "3"
    assert argv[-1] == "sitecache.app:create_app()"

    calls.clear()
    run(data_dir, "serve", "--bind", f"127.0.0.1:{port}")
    assert "First start" not in capsys.readouterr().out  # initialized once only
    assert len(calls) == 1


@pytest.mark.usefixtures("port_8000_taken")
def test_serve_on_every_interface_warns_that_site_url_is_unset(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    environments: list[dict[str, str]] = []
    monkeypatch.setattr(
        "sitecache.cli.serve.os.execve", lambda path, argv, env: environments.append(env)
    )
    run(data_dir, "serve", "--bind", f"0.0.0.0:{free_port()}")
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


# ------------------------------------------------------------ a site keeps an administrator
def no_traceback(err: str) -> None:
    """An expected failure is one line on standard error."""
    assert "Traceback" not in err
    assert err.count("\n") == 1, err


def test_user_create_refuses_a_first_user_who_is_not_an_administrator(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(data_dir, "user", "create", "eve", "--password", "long-enough") == 1
    err = capsys.readouterr().err
    no_traceback(err)
    assert "no administrator yet: run `sitecache init` first" in err
    assert auth_for(data_dir).users.count() == 0


@pytest.mark.parametrize(
    ("command", "arguments", "message"),
    [
        ("init", ["--login", "Jörg"], "login: A login is 1 to 60 characters: ASCII letters"),
        ("init", ["--login", "x" * 61], "login: A login is 1 to 60 characters: ASCII letters"),
        ("init", ["--email", "nope"], "email: Invalid email address."),
        (
            "user create",
            ["Jörg", "--role", "administrator", "--password", "long-enough"],
            "login: A login is 1 to 60 characters: ASCII letters",
        ),
        (
            "user create",
            ["boss", "--role", "administrator", "--password", "long-enough", "--email", "nope"],
            "email: Invalid email address.",
        ),
    ],
)
def test_a_refused_first_administrator_creates_no_site(
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    arguments: list[str],
    message: str,
) -> None:
    # Both commands word the login rule alike, on one line, and leave no site without an
    # administrator behind (no "Initialized ..." before the refusal).
    assert run(data_dir, *command.split(), *arguments) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    no_traceback(err)
    assert err.count("\n") == 1, err
    assert message in err
    assert not data_dir.exists()


def test_user_create_may_make_the_first_user_an_administrator(data_dir: Path) -> None:
    arguments = ["user", "create", "boss", "--role", "administrator", "--password", "long-enough"]
    assert run(data_dir, *arguments) == 0
    assert auth_for(data_dir).users.count_role("administrator") == 1


def test_init_creates_an_administrator_on_a_site_that_has_none(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auth_for(data_dir).users.create("eve", "long-enough", "editor")
    assert run(data_dir, "init", "--login", "boss") == 0
    out = capsys.readouterr().out
    assert "has no administrator: creating one" in out
    password = re.search(r"password: (\S+)", out)
    assert password is not None
    auth = auth_for(data_dir)
    boss = auth.users.find("boss")
    assert boss is not None
    assert boss.role == "administrator"
    assert auth.users.check_password(boss, password.group(1))


def test_init_on_a_site_without_administrator_needs_a_free_login(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auth_for(data_dir).users.create("admin", "long-enough", "editor")
    assert run(data_dir, "init") == 1
    err = capsys.readouterr().err
    no_traceback(err)
    assert "choose the administrator's login with --login" in err


def test_init_on_a_site_with_an_administrator_changes_nothing(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(initialized, "init") == 1
    no_traceback(capsys.readouterr().err)
    assert auth_for(initialized).users.count() == 1


# ---------------------------------------------------------------------- user list|delete|passwd
def test_user_list_prints_a_table_of_every_user(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auth_for(initialized).users.create("eve", "long-enough", "editor", email="eve@example.org")
    assert run(initialized, "user", "list") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "USERNAME", "EMAIL", "ROLE", "REGISTERED"]
    assert lines[2].split()[:4] == ["2", "eve", "eve@example.org", "editor"]
    assert len(lines) == 3


def test_user_list_json_is_machine_readable_and_holds_no_secret(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(initialized, "user", "list", "--json") == 0
    (user,) = json.loads(capsys.readouterr().out)
    assert user["username"] == "root"
    assert user["role"] == "administrator"
    assert set(user) == {"id", "username", "email", "name", "role", "registered"}


def test_user_delete_removes_the_user_and_their_application_passwords(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = auth_for(initialized)
    eve = auth.users.create("eve", "long-enough", "editor")
    auth.app_passwords.create(eve, "phone")
    assert run(initialized, "user", "delete", "eve") == 0
    assert "User eve (id 2) deleted." in capsys.readouterr().out
    auth = auth_for(initialized)
    assert auth.users.find("eve") is None
    assert auth.app_passwords.list(eve) == []


@pytest.mark.parametrize(
    ("login", "message"),
    [
        ("root", "The site's last administrator cannot be deleted."),
        ("ghost", "no user with login or email 'ghost'"),
    ],
)
def test_user_delete_refuses_the_last_administrator_and_unknown_users(
    initialized: Path, capsys: pytest.CaptureFixture[str], login: str, message: str
) -> None:
    assert run(initialized, "user", "delete", login) == 1
    err = capsys.readouterr().err
    no_traceback(err)
    assert message in err
    assert auth_for(initialized).users.count() == 1


def _content(data_dir: Path) -> ContentService:
    store = auth_for(data_dir).store
    migrate_content(store)
    return ContentService(store, Hooks())


def test_user_delete_reassign_gives_the_posts_to_the_other_user(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = auth_for(initialized)
    eve = auth.users.create("eve", "long-enough", "editor")
    content = _content(initialized)
    post = content.create_post(title="Eve's post", author=eve.id, status="publish")
    page = content.create_post(title="Eve's page", type="page", author=eve.id)
    assert run(initialized, "user", "delete", "eve", "--reassign", "1") == 0
    out = capsys.readouterr().out
    assert "User eve (id 2) deleted." in out
    assert "2 posts and pages reassigned to root (id 1)." in out
    content = _content(initialized)
    for item in (post, page):
        moved = content.get_post(item.id)
        assert moved is not None
        assert moved.author == 1
    assert auth_for(initialized).users.find("eve") is None


def test_user_delete_purges_the_cached_pages_of_the_posts_it_moves(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    apps: list[App] = []

    def site() -> App:
        apps.append(create_app({"data_dir": str(initialized), "site_url": "http://example.org"}))
        return apps[-1]

    try:
        app = site()
        eve = app.auth.users.create("eve", "long-enough", "editor", display_name="Eve Writer")
        post = app.content.create_post(title="Eve's post", author=eve.id, status="publish")
        path = urlsplit(app.site.post_url(post)).path
        visitor = Client(app, use_cookies=False)
        assert "stored" in visitor.get(path, base_url="http://example.org").headers["Cache-Status"]
        assert run(initialized, "user", "delete", "eve", "--reassign", "1") == 0
        capsys.readouterr()
        # Another process (a worker) reading the same cache: the page that named Eve is gone.
        page = Client(site(), use_cookies=False).get(path, base_url="http://example.org")
        assert "hit" not in page.headers["Cache-Status"]
        assert "Eve Writer" not in page.get_data(as_text=True)
    finally:
        for each in apps:  # their timer threads must not outlive the test
            each.cache_api.close()
            each.cache.close()


@pytest.mark.parametrize("reassign", ["2", "99"])
def test_user_delete_reassign_refuses_the_user_itself_or_no_user_and_changes_nothing(
    initialized: Path, capsys: pytest.CaptureFixture[str], reassign: str
) -> None:
    auth = auth_for(initialized)
    eve = auth.users.create("eve", "long-enough", "editor")
    post = _content(initialized).create_post(title="Kept", author=eve.id)
    assert run(initialized, "user", "delete", "eve", "--reassign", reassign) == 1
    err = capsys.readouterr().err
    no_traceback(err)
    assert "Invalid user ID for reassignment." in err
    assert auth_for(initialized).users.find("eve") is not None
    kept = _content(initialized).get_post(post.id)
    assert kept is not None
    assert kept.author == eve.id


def test_user_delete_reassign_refuses_the_last_administrator_before_moving_posts(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = auth_for(initialized)
    eve = auth.users.create("eve", "long-enough", "editor")
    post = _content(initialized).create_post(title="Root's", author=1)
    assert run(initialized, "user", "delete", "root", "--reassign", str(eve.id)) == 1
    assert "The site's last administrator cannot be deleted." in capsys.readouterr().err
    kept = _content(initialized).get_post(post.id)
    assert kept is not None
    assert kept.author == 1


def test_user_passwd_recovers_an_administrator_with_a_generated_password(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = auth_for(initialized)
    root = auth.users.find("root")
    assert root is not None
    token = auth.sessions.create(root).token
    assert run(initialized, "user", "passwd", "root") == 0
    out = capsys.readouterr().out
    password = re.search(r"password: (\S+)", out)
    assert password is not None
    assert out.count(password.group(1)) == 1
    auth = auth_for(initialized)
    assert auth.users.check_password(root, password.group(1))
    assert not auth.users.check_password(root, "root-password")
    assert auth.sessions.find(token) is None


def test_user_passwd_takes_the_password_from_an_option_or_standard_input(
    initialized: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(initialized, "user", "passwd", "root", "--password", "option-pass") == 0
    assert "option-pass" not in capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO("stdin-password\n"))
    assert run(initialized, "user", "passwd", "root", "--password", "-") == 0
    root = auth_for(initialized).users.find("root")
    assert root is not None
    assert auth_for(initialized).users.check_password(root, "stdin-password")


def test_user_passwd_refuses_a_weak_password_in_one_line(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(initialized, "user", "passwd", "root", "--password", "short") == 1
    err = capsys.readouterr().err
    no_traceback(err)
    assert "password: A password has at least 8 characters." in err


# ---------------------------------------------------------------------- app-password list|revoke
def test_app_password_list_shows_names_but_never_passwords(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = auth_for(initialized)
    root = auth.users.find("root")
    assert root is not None
    password, record = auth.app_passwords.create(root, "Backup job")
    assert run(initialized, "app-password", "list", "root") == 0
    out = capsys.readouterr().out
    assert record.uuid in out
    assert "Backup job" in out
    assert password not in out
    assert run(initialized, "app-password", "list", "root", "--json") == 0
    (item,) = json.loads(capsys.readouterr().out)
    assert (item["uuid"], item["name"], item["last_used"]) == (record.uuid, "Backup job", None)


def test_app_password_revoke_deletes_one_password(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    auth = auth_for(initialized)
    root = auth.users.find("root")
    assert root is not None
    _, kept = auth.app_passwords.create(root, "keep")
    _, revoked = auth.app_passwords.create(root, "revoke")
    assert run(initialized, "app-password", "revoke", "root", revoked.uuid) == 0
    assert [record.uuid for record in auth_for(initialized).app_passwords.list(root)] == [kept.uuid]
    assert run(initialized, "app-password", "revoke", "root", revoked.uuid) == 1
    err = capsys.readouterr().err
    no_traceback(err)
    assert f"root has no application password '{revoked.uuid}'" in err


def test_health_prints_every_test_and_fails_on_a_critical_one(
    initialized: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(initialized, "health", "--json") == 0
    results = json.loads(capsys.readouterr().out)
    assert [result["test"] for result in results][:2] == [
        "data-directory-writable",
        "database-integrity",
    ]
    by_name = {result["test"]: result["status"] for result in results}
    assert by_name["cache-storage"] == "good"
    assert by_name["application-passwords"] == "good"  # local, under "auto"
    key = initialized / "secret.key"
    key.write_text("00" * 32)  # long enough to load, but no entropy at all
    assert run(initialized, "health") == 1
    out = capsys.readouterr().out
    assert re.search(r"^critical\s+secret-key\s", out, re.MULTILINE)


def test_cache_flush_help_says_that_no_option_purges_the_whole_site(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["cache", "flush", "--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "With no option, every page of this site (its host) is deleted" in text
    assert "--all also purges every other host" in text


@pytest.mark.parametrize(
    ("option", "words"),
    [("--data-dir", "--data-dir is empty: name a data directory"),
     ("--config", "--config is empty: name a TOML configuration file")],
)  # fmt: skip
def test_an_empty_data_dir_or_config_option_is_refused_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: str,
    words: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SITECACHE_DATA_DIR", raising=False)
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    assert cli.main([option, "", "init"]) == 2
    err = capsys.readouterr().err
    assert err == f"sitecache: {words}\n"
    assert not (tmp_path / "var").exists()  # never ./var in silence


@pytest.mark.usefixtures("port_8000_taken")
def test_serve_without_a_terminal_never_writes_the_password(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Run by a service manager, or with its output sent to a log file: no terminal at all.
    monkeypatch.setattr("sitecache.cli.serve.os.execve", lambda path, argv, env: None)
    monkeypatch.setattr("sitecache.cli.users.user_terminal", lambda: nullcontext(None))
    run(data_dir, "serve", "--bind", f"127.0.0.1:{free_port()}")
    output = capsys.readouterr()
    assert "password:" not in output.out + output.err
    assert "Set one with `sitecache user passwd admin`" in output.out
    assert auth_for(data_dir).users.find("admin") is not None


def test_the_users_terminal_is_standard_output_when_it_is_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sitecache.terminal import user_terminal

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    monkeypatch.setattr("sys.stdout", tty)
    with user_terminal() as terminal:
        assert terminal is tty
    monkeypatch.setattr("sys.stdout", io.StringIO())
    monkeypatch.setattr("sitecache.terminal.CONTROLLING_TERMINAL", "/nonexistent/tty")
    with user_terminal() as terminal:
        assert terminal is None
