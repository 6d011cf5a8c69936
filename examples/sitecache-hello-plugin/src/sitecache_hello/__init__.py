"""REST routes of the example plugin package: ``hello/v1`` (see the README)."""

from __future__ import annotations

import os
from typing import Any

from sitecache.app import App
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true

NAMESPACE = "hello/v1"

GREETING_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "hello-greeting",
    "type": "object",
    "properties": {
        "message": {"type": "string", "context": ["view", "edit"], "readonly": True},
    },
}


def greeting_schema() -> dict[str, Any]:
    """The route's resource schema (shown by OPTIONS)."""
    return GREETING_SCHEMA


def greet(request: RestRequest) -> dict[str, str]:
    """``{"message": "Hello, <name>!"}``."""
    return {"message": f"Hello, {request.get_param('name')}!"}


def worker(request: RestRequest) -> dict[str, int]:
    """``{"pid": N}``: which process answered (shows a plugin runs on every worker)."""
    return {"pid": os.getpid()}


def set_greeting(request: RestRequest) -> RestResponse:
    """An administrator's greeting, echoed back with 201."""
    return RestResponse({"message": str(request.get_param("message"))}, status=201)


def can_manage(request: RestRequest) -> bool:
    """Administrators only."""
    return bool(request.user.can("manage_options"))


def register_routes(server: RestServer) -> None:
    """``rest_api_init``: the plugin's routes."""
    server.register_rest_route(
        NAMESPACE,
        "/greeting",
        [
            {
                "methods": "GET",
                "callback": greet,
                "permission_callback": return_true,
                "args": {
                    "name": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 40,
                        "default": "world",
                    },
                },
            },
            {
                "methods": "POST",
                "callback": set_greeting,
                "permission_callback": can_manage,
                "args": {"message": {"type": "string", "required": True, "minLength": 1}},
            },
        ],
        schema=greeting_schema,
    )
    server.register_rest_route(
        NAMESPACE,
        "/worker",
        {"methods": "GET", "callback": worker, "permission_callback": return_true},
    )


def activate(app: App) -> None:
    """The application plugin: register the routes when the REST server starts."""
    app.hooks.add_action("rest_api_init", register_routes)
