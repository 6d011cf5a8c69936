"""A plugin for the operations end-to-end tests: which worker process answered (#19)."""

from __future__ import annotations

import os
from typing import Any

from sitecache.app import App
from sitecache.rest import return_true


def activate(app: App) -> None:
    """Register ``GET /site-json/ops-e2e/v1/pid``: the answering worker's process id."""

    def register(server: Any) -> None:
        server.register_rest_route(
            "ops-e2e/v1",
            "/pid",
            {
                "methods": "GET",
                "callback": lambda request: {"pid": os.getpid()},
                "permission_callback": return_true,
            },
        )

    app.hooks.add_action("rest_api_init", register)
