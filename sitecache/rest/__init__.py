"""The REST server framework: routes, requests, responses and the rules shared by every route.

Plugins register routes during the ``rest_api_init`` action::

    def register(server):
        server.register_rest_route("my-plugin/v1", "/hello", {
            "methods": "GET",
            "callback": lambda request: {"hello": request["name"]},
            "permission_callback": return_true,
            "args": {"name": {"type": "string", "default": "world"}},
        })

    app.hooks.add_action("rest_api_init", register)

Behaviour mirrors WordPress's REST server. Each name is imported
from its module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sitecache.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from sitecache.rest.authentication import (
        ANONYMOUS,
        AnonymousUser,
        Authentication,
        Authenticator,
        User,
        authorization_required_status,
        is_logged_in,
    )
    from sitecache.rest.request import RestRequest
    from sitecache.rest.response import RestResponse, ensure_response, error_to_response
    from sitecache.rest.server import RestServer, return_true
    from sitecache.rest.urls import RequestContext, RestSettings, extract_rest_route
    from sitecache.schema.arguments import (
        parse_request_arg,
        sanitize_request_arg,
        validate_request_arg,
    )

__all__ = [
    "ANONYMOUS",
    "AnonymousUser",
    "Authentication",
    "Authenticator",
    "RequestContext",
    "RestRequest",
    "RestResponse",
    "RestServer",
    "RestSettings",
    "User",
    "authorization_required_status",
    "ensure_response",
    "error_to_response",
    "extract_rest_route",
    "is_logged_in",
    "parse_request_arg",
    "return_true",
    "sanitize_request_arg",
    "validate_request_arg",
]

#: where each name of `__all__` is defined: importing this package (or one of its modules)
#: loads none of them, so a part that needs a refusal's wording does not load the server
_HOMES = {
    "ANONYMOUS": "sitecache.rest.authentication",
    "AnonymousUser": "sitecache.rest.authentication",
    "Authentication": "sitecache.rest.authentication",
    "Authenticator": "sitecache.rest.authentication",
    "User": "sitecache.rest.authentication",
    "authorization_required_status": "sitecache.rest.authentication",
    "is_logged_in": "sitecache.rest.authentication",
    "RestRequest": "sitecache.rest.request",
    "RestResponse": "sitecache.rest.response",
    "ensure_response": "sitecache.rest.response",
    "error_to_response": "sitecache.rest.response",
    "RestServer": "sitecache.rest.server",
    "return_true": "sitecache.rest.server",
    "RequestContext": "sitecache.rest.urls",
    "RestSettings": "sitecache.rest.urls",
    "extract_rest_route": "sitecache.rest.urls",
    "parse_request_arg": "sitecache.schema.arguments",
    "sanitize_request_arg": "sitecache.schema.arguments",
    "validate_request_arg": "sitecache.schema.arguments",
}


__getattr__ = lazy_exports(__name__, _HOMES)
