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

Behaviour mirrors WordPress's REST server (SPEC.md §1, §4, §5, §7).
"""

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
