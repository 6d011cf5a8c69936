"""Plain-text answers the site's own pages share (not the REST API's JSON errors)."""

from __future__ import annotations

from werkzeug.wrappers import Response

__all__ = ["method_not_allowed"]


def method_not_allowed(allowed: str, cache_control: str = "") -> Response:
    """A 405 in plain text whose ``Allow`` header lists ``allowed`` (``"GET, HEAD"``); with
    ``cache_control`` when given."""
    response = Response("Method not allowed.\n", status=405, mimetype="text/plain")
    response.headers["Allow"] = allowed
    if cache_control:
        response.headers["Cache-Control"] = cache_control
    return response
