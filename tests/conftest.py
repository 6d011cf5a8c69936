"""Fixtures shared by every test package: applications with a private data directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App, create_app
from sitecache.domain_errors import DomainError
from sitecache.errors import RestError
from sitecache.rest.error_handlers import ErrorHandlers

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


def rest_error_of(error: DomainError) -> RestError:
    """The REST error a domain exception answers with (the default error handlers' table)."""
    return ErrorHandlers().to_rest_error(error)
