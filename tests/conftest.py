"""Fixtures shared by every test package: applications with a private data directory."""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable, Iterator
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


#: the port of `make run` and of the README's examples
README_PORT = 8000


@pytest.fixture
def port_8000_taken() -> Iterator[None]:
    """Port 8000 held by another listener (``make run``, say) for the test's duration, so a
    test that depends on it fails here rather than on whoever's machine has it taken (#16)."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        try:
            holder.bind(("127.0.0.1", README_PORT))
            holder.listen()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            # Already taken by another process: exactly the situation to test.
        yield
    finally:
        holder.close()


def rest_error_of(error: DomainError) -> RestError:
    """The REST error a domain exception answers with (the default error handlers' table)."""
    return ErrorHandlers().to_rest_error(error)
