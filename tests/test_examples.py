"""The examples read where they listen from their arguments or the environment (#16)."""

from __future__ import annotations

import importlib

import pytest


def test_the_greetings_example_listens_where_it_is_told(monkeypatch: pytest.MonkeyPatch) -> None:
    example = importlib.import_module("examples.greetings_plugin")
    monkeypatch.delenv("HOST", raising=False)
    monkeypatch.delenv("PORT", raising=False)
    assert example.listen_address([]) == ("127.0.0.1", 8000)
    monkeypatch.setenv("HOST", "192.0.2.1")
    monkeypatch.setenv("PORT", "8123")
    assert example.listen_address([]) == ("192.0.2.1", 8123)
    assert example.listen_address(["--host", "::1", "--port", "9"]) == ("::1", 9)
