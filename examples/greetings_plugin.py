"""An example sitecache plugin: routes with validated arguments and permission callbacks.

Serve it (``examples/greetings.toml`` names this file by its path, so any directory works)::

    SITECACHE_CONFIG=examples/greetings.toml sitecache serve --bind 127.0.0.1:8000

or from Python with werkzeug's development server, on ``$HOST:$PORT`` (default
``127.0.0.1:8000``; ``python examples/greetings_plugin.py --port 8001`` also works)::

    python examples/greetings_plugin.py

Then try (``SITE=http://127.0.0.1:8000``, or wherever it listens)::

    curl "$SITE/site-json/greetings/v1/hello?name=Ada&shout=true"
    curl "$SITE/site-json/greetings/v1/hello?name="       # 400, minLength
    curl -X OPTIONS "$SITE/site-json/greetings/v1/hello"  # the route's description
    curl -X POST "$SITE/site-json/greetings/v1/hello"     # 401: needs a login
    curl "$SITE/site-json/greetings/v1/hello?context=edit"  # 401: edit context needs a login
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from sitecache.app import App, create_app
from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer

NAMESPACE = "greetings/v1"

GREETING_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "greeting",
    "type": "object",
    "properties": {
        "message": {
            "description": "The greeting.",
            "type": "string",
            "context": ["view", "edit", "embed"],
            "readonly": True,
        },
        "name": {
            "description": "Who is greeted.",
            "type": "string",
            "minLength": 1,
            "maxLength": 50,
            "context": ["view", "edit"],
        },
        "greeting": {
            "description": "The word of greeting.",
            "type": "string",
            "enum": ["Hello", "Hi", "Howdy"],
            "context": ["edit"],
        },
    },
}


def say_hello(request: RestRequest) -> dict[str, Any]:
    """GET: greet ``name`` (validated and defaulted by the route's args)."""
    greeting = request["greeting"]
    message = f"{greeting}, {request['name']}!"
    return {
        "message": message.upper() if request["shout"] else message,
        "name": request["name"],
        "greeting": greeting,
    }


def can_read_greetings(request: RestRequest) -> bool | RestError:
    """Anybody may read a greeting; ``context=edit`` (which shows the edit-only ``greeting``
    field) needs ``edit_posts``, 401/403 ``rest_forbidden_context`` otherwise, as WordPress's
    controllers answer. The ``context`` argument only chooses the fields: the permission
    callback decides who may ask for ``edit``."""
    if request["context"] == "edit" and not request.user.can("edit_posts"):
        return RestError(
            "rest_forbidden_context",
            "Sorry, you are not allowed to edit greetings.",
            {"status": 403 if request.user.id else 401},
        )
    return True


def can_write_greetings(request: RestRequest) -> bool | RestError:
    """Only users who can edit posts may publish a greeting; 401/403 otherwise."""
    if request.user.can("edit_posts"):
        return True
    return RestError(
        "greetings_cannot_publish",
        "Sorry, you are not allowed to publish greetings.",
        {"status": 403 if request.user.id else 401},
    )


def register_routes(server: RestServer) -> None:
    """The ``rest_api_init`` callback: register the plugin's routes."""

    def publish_hello(request: RestRequest) -> RestResponse:
        """POST: answer 201 with the greeting, linking to the route."""
        response = RestResponse(say_hello(request), status=201)
        response.add_link("self", server.rest_url(f"/{NAMESPACE}/hello"))
        return response

    common = {
        "name": {
            "description": "Who to greet.",
            "type": "string",
            "minLength": 1,
            "maxLength": 50,
            "default": "world",
        },
        "greeting": {
            "description": "The word of greeting.",
            "type": "string",
            "enum": ["Hello", "Hi", "Howdy"],
            "default": "Hello",
        },
    }
    server.register_rest_route(
        NAMESPACE,
        "/hello",
        [
            {
                "methods": "GET",
                "callback": say_hello,
                "permission_callback": can_read_greetings,
                "args": {
                    "shout": {"type": "boolean", "default": False},
                    "context": {"type": "string", "enum": ["view", "edit"], "default": "view"},
                },
            },
            {
                "methods": "POST",
                "callback": publish_hello,
                "permission_callback": can_write_greetings,
                "args": {"shout": {"type": "boolean", "default": False}},
            },
        ],
        route_args=common,
        schema=lambda: GREETING_SCHEMA,
    )


def activate(app: App) -> None:
    """Plugin entry point (``plugins = ["examples.greetings_plugin:activate"]``)."""
    app.hooks.add_action("rest_api_init", register_routes)


def listen_address(argv: Sequence[str] | None = None) -> tuple[str, int]:
    """``(host, port)`` from ``--host``/``--port``, else ``$HOST``/``$PORT``, else
    ``127.0.0.1:8000``."""
    parser = argparse.ArgumentParser(description="Serve the greetings example plugin.")
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    args = parser.parse_args(argv)
    return args.host, args.port


def main(argv: Sequence[str] | None = None) -> None:  # pragma: no cover - manual run
    from werkzeug.serving import run_simple

    host, port = listen_address(argv)
    app = create_app()
    activate(app)
    run_simple(host, port, app)


if __name__ == "__main__":  # pragma: no cover
    main()
