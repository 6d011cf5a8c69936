"""The batch endpoint ``POST /batch/v1``: several requests in one, answered 207 Multi-Status.

Mirrors ``serve_batch_request_v1``. Routes opt in with ``allow_batch={"v1": True}`` (on the
route or a handler). Every request is matched and validated first; with
``validation: "require-all-validate"`` one failure stops them all, otherwise each runs in order
as the outer request's user and reports its own ``{body, status, headers}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sitecache.errors import RestError
from sitecache.rest.params import parse_query_string
from sitecache.rest.request import RestRequest
from sitecache.rest.response import RestResponse, error_to_response
from sitecache.rest.routes import Handler, Route
from sitecache.rest.server import inherit_caller

if TYPE_CHECKING:
    from sitecache.rest.server import RestServer

__all__ = ["batch_route_handler", "serve_batch_request"]


def batch_route_handler(server: RestServer) -> Handler:
    """The handler of ``/batch/v1``, with its argument schema."""
    return {
        "methods": {"POST": True},
        "callback": lambda request: serve_batch_request(server, request),
        "permission_callback": lambda request: True,
        "show_in_index": True,
        "accept_json": False,
        "accept_raw": False,
        "args": {
            "validation": {
                "type": "string",
                "enum": ["require-all-validate", "normal"],
                "default": "normal",
            },
            "requests": {
                "required": True,
                "type": "array",
                "maxItems": server.settings.max_batch_size,
                "items": {
                    "type": "object",
                    "properties": {
                        "method": {
                            "type": "string",
                            "enum": ["POST", "PUT", "PATCH", "DELETE"],
                            "default": "POST",
                        },
                        "path": {"type": "string", "required": True},
                        "body": {"type": "object", "properties": {}, "additionalProperties": True},
                        "headers": {
                            "type": "object",
                            "properties": {},
                            "additionalProperties": {
                                "type": ["string", "array"],
                                "items": {"type": "string"},
                            },
                        },
                    },
                },
            },
        },
    }


def _build_request(
    server: RestServer, outer: RestRequest, spec: Mapping[str, Any]
) -> RestRequest | RestError:
    path = spec.get("path")
    try:
        parts = urlsplit(path if isinstance(path, str) else "")
    except ValueError:
        return RestError("parse_path_failed", "Could not parse the path.", {"status": 400})
    if not parts.path:
        return RestError("parse_path_failed", "Could not parse the path.", {"status": 400})
    method = spec.get("method") if isinstance(spec.get("method"), str) else "POST"
    request = RestRequest(str(method), parts.path)
    if parts.query:
        request.set_query_params(parse_query_string(parts.query))
    body = spec.get("body")
    if isinstance(body, Mapping) and body:
        request.set_body_params(body)
    headers = spec.get("headers")
    if isinstance(headers, Mapping) and headers:
        request.set_headers(
            {str(k): v if isinstance(v, list) else str(v) for k, v in headers.items()}
        )
    inherit_caller(request, outer)
    return request


def _allows_batch(route: Route, handler: Handler) -> bool:
    allow = handler["allow_batch"] if "allow_batch" in handler else route.options.get("allow_batch")
    return isinstance(allow, Mapping) and bool(allow.get("v1"))


def _envelope(server: RestServer, response: RestResponse) -> Any:
    return server.envelope_response(response, False).get_data()


def serve_batch_request(server: RestServer, batch: RestRequest) -> RestResponse:
    """Validate every request of the batch, then run them (or report the failures)."""
    specs = batch.get_param("requests") or []
    requests = [
        _build_request(server, batch, spec)
        if isinstance(spec, Mapping)
        else RestError("parse_path_failed", "Could not parse the path.", {"status": 400})
        for spec in specs
    ]
    matches: list[tuple[Route, Handler] | RestError] = []
    validation: list[RestError | None] = []
    for request in requests:
        if isinstance(request, RestError):
            matches.append(request)
            validation.append(request)
        else:
            match, error = _validate(server, request)
            matches.append(match)
            validation.append(error)
    has_error = any(error is not None for error in validation)
    if has_error and batch.get_param("validation") == "require-all-validate":
        return RestResponse(
            {
                "failed": "validation",
                "responses": [
                    _envelope(server, error_to_response(error)) if error is not None else None
                    for error in validation
                ],
            },
            207,
        )
    responses: list[Any] = []
    for request, match, error in zip(requests, matches, validation, strict=True):
        if isinstance(request, RestError):
            responses.append(_envelope(server, error_to_response(request)))
        else:
            responses.append(_envelope(server, _run(server, request, match, error)))
    return RestResponse({"responses": responses}, 207)


def _validate(
    server: RestServer, request: RestRequest
) -> tuple[tuple[Route, Handler] | RestError, RestError | None]:
    """The request's route and handler (or the error matching it), and its first problem:
    no match, a route that does not allow batching, invalid or unsanitizable parameters."""
    match = server.match_request_to_handler(request)
    error: RestError | None = match if isinstance(match, RestError) else None
    if error is None and isinstance(match, tuple) and not _allows_batch(*match):
        error = RestError(
            "rest_batch_not_allowed",
            "The requested route does not support batch requests.",
            {"status": 400},
        )
    if error is None:
        valid = request.has_valid_params()
        error = valid if isinstance(valid, RestError) else None
    if error is None:
        sanitized = request.sanitize_params()
        error = sanitized if isinstance(sanitized, RestError) else None
    return match, error


def _run(
    server: RestServer,
    request: RestRequest,
    match: tuple[Route, Handler] | RestError,
    error: RestError | None,
) -> RestResponse:
    """One request of the batch: ``rest_pre_dispatch`` (on a clean copy), else its handler
    (or its validation error), then ``rest_post_dispatch``."""
    clean = request.copy()
    clean.set_url_params({})
    clean.set_attributes({})
    clean.set_default_params({})
    early = server.hooks.apply_filters("rest_pre_dispatch", None, server, clean)
    if early:
        if isinstance(early, RestResponse):
            result = early
        elif isinstance(early, RestError):
            result = error_to_response(early)
        else:
            result = RestResponse(early)
    elif isinstance(match, RestError):
        result = error_to_response(match)
    else:
        route, handler = match
        if error is None and not callable(handler.get("callback")):
            error = RestError(
                "rest_invalid_handler",
                "The handler for the route is invalid",
                {"status": 500},
            )
        result = server.respond_to_request(request, route, handler, error)
    return server.post_dispatch(result, request)
