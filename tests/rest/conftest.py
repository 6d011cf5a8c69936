"""Fixtures the REST tests share."""

from __future__ import annotations

import pytest

from sitecache.app import App

#: A ``doing_it_wrong`` notice as ``(function, message)``.
Notice = tuple[str, str]


@pytest.fixture
def notices(app: App) -> list[Notice]:
    """Every ``doing_it_wrong`` notice of ``app`` as ``(function, message)``."""
    collected: list[Notice] = []

    def collect(function: str, message: str, version: str | None) -> None:
        collected.append((function, message))

    app.hooks.add_action("doing_it_wrong_run", collect)
    return collected
