"""Cross-origin headers of REST responses.

With an ``Origin`` request header the response echoes the origin (``null`` kept as is, anything
else URL-sanitized, so a ``javascript:`` origin becomes empty), allows the fixed method list and
credentials, and varies on ``Origin``. A GET without ``Origin`` from an anonymous caller still
varies on ``Origin``, so shared caches keep the two answers apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from sitecache.rest.authentication import is_logged_in
from sitecache.rest.request import RestRequest
from sitecache.rest.response import RestResponse, find_header
from sitecache.schema import sanitize_url

if TYPE_CHECKING:
    from sitecache.rest.server import RestServer

__all__ = ["CORS_METHODS", "send_cors_headers"]

CORS_METHODS: Final = "OPTIONS, GET, POST, PUT, PATCH, DELETE"


def send_cors_headers(
    served: Any, response: RestResponse, request: RestRequest, server: RestServer
) -> Any:
    """``rest_pre_serve_request`` callback adding the CORS headers to ``response``."""
    origin = request.get_header("origin")
    if origin:
        allowed = origin if origin == "null" else sanitize_url(origin)
        response.header("Access-Control-Allow-Origin", allowed)
        response.header("Access-Control-Allow-Methods", CORS_METHODS)
        response.header("Access-Control-Allow-Credentials", "true")
        _vary_on_origin(response)
    elif request.environ.get("REQUEST_METHOD") == "GET" and not is_logged_in(request.user):
        _vary_on_origin(response)
    return served


def _vary_on_origin(response: RestResponse) -> None:
    """Add ``Origin`` to ``Vary`` unless it is listed (``header("Vary", "Origin", False)``)."""
    headers = response.get_headers()
    name = find_header(headers, "Vary")
    if name is None:
        headers["Vary"] = "Origin"
        return
    current = headers.get("Vary") or headers[name]
    if "origin" not in [item.strip().lower() for item in current.split(",")]:
        headers[name] = f"{headers[name]}, Origin"
