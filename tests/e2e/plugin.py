"""Routes the end-to-end suites exercise through a real gunicorn."""

from __future__ import annotations

from typing import Any

from sitecache.app import App
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true

ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "context": ["view", "edit", "embed"]},
        "title": {"type": "string", "context": ["view", "edit"]},
        "secret": {"type": "string", "context": ["edit"]},
    },
}


def register(server: RestServer, app: App) -> None:
    """Register the e2e routes."""

    def notice(request: RestRequest) -> dict[str, bool]:
        app.doing_it_wrong("e2e_notice", "Called the e2e notice route.")
        app.deprecated_function("e2e_old_function", "e2e_new_function")
        return {"noticed": True}

    def item(request: RestRequest) -> RestResponse:
        number = request["id"]
        response = RestResponse({"id": number, "title": f"Item {number}", "secret": "s"})
        response.add_link("self", server.rest_url(f"/e2e/v1/items/{number}"))
        if number != 1:
            response.add_link("up", server.rest_url("/e2e/v1/items/1"), {"embeddable": True})
        return response

    def crash(request: RestRequest) -> Any:
        raise RuntimeError("secret internal detail")

    server.register_rest_route(
        "e2e/v1",
        "/items/(?P<id>\\d+)",
        {
            "methods": "GET",
            "callback": item,
            "permission_callback": return_true,
            "args": {
                "id": {"type": "integer", "minimum": 1},
                "context": {"type": "string", "enum": ["view", "edit", "embed"], "default": "view"},
            },
        },
        schema=lambda: ITEM_SCHEMA,
    )
    server.register_rest_route(
        "e2e/v1",
        "/echo",
        {
            "methods": ["POST", "PUT"],
            "callback": lambda request: {"count": request["count"], "tags": request["tags"]},
            "permission_callback": return_true,
            "args": {
                "count": {"type": "integer", "minimum": 1, "maximum": 10, "required": True},
                "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            },
        },
        allow_batch={"v1": True},
    )
    server.register_rest_route(
        "e2e/v1",
        "/admin-only",
        {
            "methods": "GET",
            "callback": lambda request: {"ok": True, "user": request.user.login},
            "permission_callback": lambda request: request.user.can("manage_options"),
        },
    )
    server.register_rest_route(
        "e2e/v1",
        "/crash",
        {"methods": "GET", "callback": crash, "permission_callback": return_true},
    )
    server.register_rest_route(
        "e2e/v1",
        "/notice",
        {"methods": "GET", "callback": notice, "permission_callback": return_true},
    )
    # Deliberately missing its permission_callback: a doing-it-wrong notice in debug mode.
    server.register_rest_route("e2e/v1", "/careless", {"callback": lambda request: "careless"})


def activate(app: App) -> None:
    """Plugin entry point."""
    app.hooks.add_action("rest_api_init", lambda server: register(server, app))
