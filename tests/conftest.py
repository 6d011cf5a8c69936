"""Fixtures shared by every test package: applications with a private data directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App, create_app

AppFactory = Callable[..., App]


@pytest.fixture
def app_factory(tmp_path: Path) -> AppFactory:
    """Build applications whose data lives under the test's temporary directory."""

    def factory(**overrides: Any) -> App:
        config: dict[str, Any] = {
            "data_dir": str(tmp_path / "var"),
            "site_url": "http://example.org",
            # The cheapest scrypt cost allowed: tests create many users and log in often.
            "password_hash_cost": 1024,
            # No background timer thread per test application: tests tick the timers
            # themselves (tests/e2e run real servers, where the timers start by themselves).
            "cache_timers": False,
        }
        config.update(overrides)
        return create_app(config)

    return factory


@pytest.fixture
def app(app_factory: AppFactory) -> App:
    """An application at http://example.org with default settings."""
    return app_factory()


@pytest.fixture
def client(app: App) -> Client:
    """A werkzeug test client for ``app``."""
    return Client(app)
