"""The examples read where they listen from their arguments or the environment (#16)."""

from __future__ import annotations

import base64
import importlib

import pytest
from werkzeug.test import Client

from tests.conftest import AppFactory


def test_the_greetings_example_listens_where_it_is_told(monkeypatch: pytest.MonkeyPatch) -> None:
    example = importlib.import_module("examples.greetings_plugin")
    monkeypatch.delenv("HOST", raising=False)
    monkeypatch.delenv("PORT", raising=False)
    assert example.listen_address([]) == ("127.0.0.1", 8000)
    monkeypatch.setenv("HOST", "192.0.2.1")
    monkeypatch.setenv("PORT", "8123")
    assert example.listen_address([]) == ("192.0.2.1", 8123)
    assert example.listen_address(["--host", "::1", "--port", "9"]) == ("::1", 9)


def test_the_greetings_example_keeps_its_edit_context_for_editors(
    app_factory: AppFactory,
) -> None:
    """``context=edit`` shows the edit-only ``greeting`` field: anonymous callers get 401
    ``rest_forbidden_context`` (it used to answer them with the field), editors get it."""
    example = importlib.import_module("examples.greetings_plugin")
    app = app_factory()
    example.activate(app)
    client = Client(app)
    url = "/site-json/greetings/v1/hello?name=Ada"

    anonymous = client.get(f"{url}&context=edit")
    assert anonymous.status_code == 401
    assert anonymous.get_json()["code"] == "rest_forbidden_context"
    assert "greeting" not in client.get(url).get_json()

    editor = app.auth.users.create("ed", "a long password", "editor", "ed@example.org")
    password, _ = app.auth.app_passwords.create(editor, "test")
    token = base64.b64encode(f"ed:{password}".encode()).decode("ascii")
    allowed = client.get(
        f"{url}&context=edit",
        headers={"Authorization": f"Basic {token}"},
        environ_base={"REMOTE_ADDR": "127.0.0.1"},
    )
    assert allowed.status_code == 200
    assert allowed.get_json()["greeting"] == "Hello"
