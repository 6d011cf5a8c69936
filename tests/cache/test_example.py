"""The PageCache example (examples/pagecache_app.py) works as documented, on any host and port."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
from werkzeug.test import Client


def load_example(monkeypatch: pytest.MonkeyPatch, **environment: str) -> ModuleType:
    for name in ("PAGECACHE_HOSTS", "PAGECACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return importlib.reload(importlib.import_module("examples.pagecache_app"))


def test_the_pagecache_example_serves_a_hit_and_purges_by_tag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    example = load_example(monkeypatch)
    client = Client(example.app)
    # Any loopback port: the example names no host or port of its own.
    first = client.get("/", base_url="http://localhost:8731")
    second = client.get("/", base_url="http://localhost:8731")
    assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert second.headers["Cache-Status"].startswith("sitecache; hit")
    assert example.app.purge_tags(["home"]).deleted == 1
    assert (tmp_path / "var" / "example-cache" / "index.sqlite3").exists()


def test_the_pagecache_example_reads_its_hosts_and_directory_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = load_example(
        monkeypatch, PAGECACHE_HOSTS="example.org,www.example.org", PAGECACHE_DIR=str(tmp_path)
    )
    client = Client(example.app)
    client.get("/", base_url="http://example.org")
    assert (
        client.get("/", base_url="http://example.org")
        .headers["Cache-Status"]
        .startswith("sitecache; hit")
    )
    assert "bypass" in client.get("/", base_url="http://localhost").headers["Cache-Status"]
    assert (tmp_path / "index.sqlite3").exists()
