"""End-to-end fixtures: a real gunicorn (2 workers) on a free loopback port."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.server import LiveServer, stopped_after


@pytest.fixture(scope="module")
def live_server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[LiveServer]:
    """gunicorn serving the app with the e2e plugin (``tests.e2e.plugin:activate``).

    A test module may set ``PLUGINS`` (more plugin specs) and ``SERVER_CONFIG`` (more TOML lines).
    """
    root = tmp_path_factory.mktemp("e2e")
    plugins = ["tests.e2e.plugin:activate", *getattr(request.module, "PLUGINS", [])]
    extra = getattr(request.module, "SERVER_CONFIG", [])
    server = LiveServer(
        data_dir=root / "var",
        config_lines=[f"plugins = {json.dumps(plugins)}", "debug = true", *extra],
    )
    server.start()
    with stopped_after(server, request, "gunicorn"):
        yield server
