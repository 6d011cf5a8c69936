"""The examples run against live servers: mark them end to end (one xdist worker per module)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/examples/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.e2e)
