"""The README's PageCache example works as documented."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from werkzeug.test import Client


def test_the_pagecache_example_serves_a_hit_and_purges_by_tag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    example = importlib.import_module("examples.pagecache_app")
    example = importlib.reload(example)
    client = Client(example.app)
    first = client.get("/", base_url="http://localhost:8000")
    second = client.get("/", base_url="http://localhost:8000")
    assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert second.headers["Cache-Status"].startswith("sitecache; hit")
    assert example.app.purge_tags(["home"]).deleted == 1
    assert (tmp_path / "var" / "example-cache" / "index.sqlite3").exists()
