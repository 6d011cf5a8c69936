"""The command line never prints a stored string raw (attack report item 6): control
characters in names, titles and URLs are shown escaped (`sitecache.terminal.terminal_text`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitecache import cli
from sitecache.auth import AuthService, PasswordHasher
from sitecache.terminal import terminal_text

#: what a user may name an application password (REST, or app_name on the authorize page)
HOSTILE = "\x1b[31mRED\x1b[0m\rFAKE\x9b2J\u202eevil\x07"
#: the characters a terminal acts on rather than shows
ACTING = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


@given(st.text())
def test_terminal_text_leaves_nothing_a_terminal_acts_on(text: str) -> None:
    shown = terminal_text(text)
    assert ACTING.search(shown) is None
    if ACTING.search(text) is None:
        assert shown == text


def test_terminal_text_writes_python_style_escapes() -> None:
    assert terminal_text(HOSTILE) == "\\x1b[31mRED\\x1b[0m\\rFAKE\\x9b2J\\u202eevil\\x07"
    assert terminal_text("tab\there\nnew é 👩‍💻 \\x") == "tab\\there\\nnew é 👩‍💻 \\x"
    assert terminal_text("\ud800") == "\\ud800"
    assert terminal_text(12) == "12"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An initialized data directory whose administrator ``root`` has a hostile application
    password name."""
    for variable in ("SITECACHE_CONFIG", "SITECACHE_DATA_DIR", "SITECACHE_SITE_URL"):
        monkeypatch.delenv(variable, raising=False)
    config = tmp_path / "sitecache.toml"
    config.write_text("password_hash_cost = 1024\n", encoding="utf-8")
    monkeypatch.setenv("SITECACHE_CONFIG", str(config))
    data_dir = tmp_path / "var"
    auth = AuthService(data_dir, hasher=PasswordHasher(n=1024))
    root = auth.users.create("root", "root-password", "administrator")
    auth.app_passwords.create(root, HOSTILE, "")
    auth.store.close()
    return data_dir


def test_app_password_list_shows_a_hostile_name_escaped(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--data-dir", str(site), "app-password", "list", "root"]) == 0
    out = capsys.readouterr().out
    assert ACTING.search(out.replace("\n", "")) is None
    assert "\\x1b[31mRED\\x1b[0m\\rFAKE" in out
    assert cli.main(["--data-dir", str(site), "app-password", "list", "root", "--json"]) == 0
    out = capsys.readouterr().out
    assert ACTING.search(out.replace("\n", "")) is None
    assert json.loads(out)[0]["name"] == HOSTILE


def test_messages_naming_stored_or_given_text_are_escaped(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        cli.main(["--data-dir", str(site), "app-password", "create", "root", "--name", "a\x1bb"])
        == 0
    )
    out = capsys.readouterr().out
    assert ACTING.search(out.replace("\n", "")) is None
    assert "a\\x1bb" in out
    assert cli.main(["--data-dir", str(site), "app-password", "revoke", "root", "x\x1b[2J"]) == 1
    err = capsys.readouterr().err
    assert ACTING.search(err.replace("\n", "")) is None
    assert err.count("\n") == 1
