"""Authentication does its work once per request (#18).

The presented application password is hashed once, then compared (in constant time) with every
one of the user's passwords; a user read by login, e-mail, id or slug is built once per distinct
database row, so an edit is seen at once.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from werkzeug.test import Client

import sitecache.auth.app_passwords as app_passwords_module
from sitecache.app import App
from sitecache.auth.passwords import keyed_hash


def basic(login: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{login}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every secret the application passwords hash, in order."""
    seen: list[str] = []

    def counting(key: bytes, secret: str, purpose: str) -> str:
        seen.append(secret)
        return keyed_hash(key, secret, purpose)

    monkeypatch.setattr(app_passwords_module, "keyed_hash", counting)
    return seen


@pytest.mark.parametrize("which", [0, 1, 2])
def test_any_of_several_passwords_authenticates_with_one_hash(
    app: App, client: Client, hashes: list[str], which: int
) -> None:
    admin = app.auth.users.create("admin", "admin-password-1", role="administrator")
    passwords = [app.auth.app_passwords.create(admin, f"app {n}")[0] for n in range(3)]
    hashes.clear()
    response = client.get(
        "/site-json/site/v2/users/me",
        headers=basic("admin", passwords[which]),
        environ_base={"REMOTE_ADDR": "127.0.0.1"},
    )
    assert response.status_code == 200
    assert len(hashes) == 1


def test_a_wrong_password_among_several_is_still_refused(app: App, client: Client) -> None:
    admin = app.auth.users.create("admin", "admin-password-1", role="administrator")
    for n in range(3):
        app.auth.app_passwords.create(admin, f"app {n}")
    response = client.get(
        "/site-json/site/v2/users/me",
        headers=basic("admin", "abcd" * 6),
        environ_base={"REMOTE_ADDR": "127.0.0.1"},
    )
    assert response.status_code == 401
    assert response.json is not None
    assert response.json["code"] == "incorrect_password"


def test_a_user_is_built_once_per_row_and_an_edit_is_seen_at_once(app: App) -> None:
    users = app.auth.users
    created = users.create("editor", "editor-password-1", role="editor", email="e@example.org")
    first = users.find("editor")
    assert first is users.find("editor") is users.find("e@example.org") is users.get(created.id)
    users.update(created, {"display_name": "Ed", "role": "author"})
    edited: Any = users.find("editor")
    assert (edited.display_name, edited.role) == ("Ed", "author")
    assert edited is not first
    assert users.get(created.id) == edited
