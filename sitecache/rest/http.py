"""Serving one HTTP request through the REST server (``WP_REST_Server::serve_request``).

`_serve` runs the stages in order, each a function of its own: fixed headers (Content-Type,
X-Robots-Tag, the API-root Link, X-Content-Type-Options) and JSONP validation; the request object
(query, form body, headers, raw body; `sitecache.rest.http_request`); method override; CORS header
lists; authentication; dispatch and ``rest_post_dispatch`` (Allow, ``_fields``); the envelope; the
response's own headers (replacing defaults) and no-cache headers for logged-in users; CORS origin
headers (``rest_pre_serve_request``); then the body: data with ``_links`` and ``_embedded``, JSON
(pretty with ``_pretty``; `sitecache.rest.json_encoding`), JSONP. HEAD gets every header and no
body. `sitecache.rest.http_response` turns the answer into a werkzeug response.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge
from werkzeug.wrappers import Request, Response

from sitecache.domain_errors import OutageError
from sitecache.errors import RestError
from sitecache.rest.authentication import Authentication, is_logged_in
from sitecache.rest.cors import send_cors_headers
from sitecache.rest.http_hosts import Host
from sitecache.rest.http_request import (
    MAX_BODY_BYTES,
    BodilessRequest,
    build_request,
    query_params,
    read_bounded_body,
)
from sitecache.rest.http_response import RestHttpResponse, merge_headers, to_http
from sitecache.rest.json_encoding import encode_json, unsupported_type
from sitecache.rest.params import is_json_media_type
from sitecache.rest.request import RestRequest
from sitecache.rest.response import RestResponse, error_to_response
from sitecache.rest.server import internal_error
from sitecache.schema import parse_embed_param

if TYPE_CHECKING:
    from sitecache.rest.server import RestServer

__all__ = [
    "MAX_BODY_BYTES",
    "NOCACHE_HEADERS",
    "BodilessRequest",
    "RestHttpResponse",
    "encode_json",
    "error_response",
    "payload_too_large",
    "query_params",
    "read_bounded_body",
    "serve_request",
]

logger = logging.getLogger("sitecache.rest")

NOCACHE_HEADERS: Final = {
    "Expires": "Wed, 11 Jan 1984 05:00:00 GMT",
    "Cache-Control": "no-cache, must-revalidate, max-age=0, no-store, private",
}
EXPOSED_HEADERS: Final = ["X-Site-Total", "X-Site-TotalPages", "Link"]
ALLOWED_HEADERS: Final = [
    "Authorization",
    "X-Site-Nonce",
    "Content-Disposition",
    "Content-MD5",
    "Content-Type",
]
_EXPOSED_LIST: Final = ", ".join(EXPOSED_HEADERS)
_ALLOWED_LIST: Final = ", ".join(ALLOWED_HEADERS)
_JSONP_CALLBACK = re.compile(r"[^A-Za-z0-9_.]")


# ---------------------------------------------------------------------- headers
def _base_headers(server: RestServer, jsonp: bool) -> dict[str, str]:
    headers = {
        "Content-Type": (
            "application/javascript; charset=UTF-8" if jsonp else "application/json; charset=UTF-8"
        ),
        "X-Robots-Tag": "noindex",
    }
    api_root = server.rest_url("/")
    if api_root:
        headers["Link"] = f'<{api_root}>; rel="{server.settings.api_root_rel}"'
    headers["X-Content-Type-Options"] = "nosniff"
    return headers


def _default_headers(server: RestServer, host: Host, jsonp: bool) -> dict[str, str]:
    """`_base_headers` of this request, kept per host while no ``rest_url`` filter runs."""
    if server.hooks.has_filter("rest_url"):
        return _base_headers(server, jsonp)
    stamp = (server.hooks.version, server.settings)
    return host.headers(stamp, jsonp, _base_headers, server, jsonp)


def _jsonp_error(code: str, message: str, base: Mapping[str, str]) -> Answer:
    return Answer(400, dict(base), encode_json({"code": code, "message": message}))


# ---------------------------------------------------------------------- serving
def error_response(server: RestServer, error: RestError) -> Response:
    """A REST error answered before any request object exists (a body too large, say)."""
    headers = {**_base_headers(server, False), **NOCACHE_HEADERS}
    return to_http(error.status, headers, encode_json(error.to_dict()), {})


def payload_too_large() -> RestError:
    """413 ``rest_payload_too_large``."""
    return RestError("rest_payload_too_large", "The request body is too large.", {"status": 413})


def die_response(http: Request, error: RestError) -> Response:
    """``wp_die(error)`` before any REST work: JSON for a JSON client, else an HTML page.

    A client is a JSON client when its Accept or Content-Type header names a JSON media type
    (``wp_is_json_request``). The JSON body is ``{code, message, data: {status},
    additional_errors}``; both forms carry the no-cache headers.
    """
    status = error.status
    accept = http.headers.get("Accept", "")
    content_type = http.headers.get("Content-Type", "")
    if is_json_media_type(accept) or is_json_media_type(content_type):
        body = error.to_dict()
        body = {
            "code": body["code"],
            "message": body["message"],
            "data": {"status": status},
            "additional_errors": body.get("additional_errors", []),
        }
        response = Response(
            encode_json(body), status=status, content_type="application/json; charset=utf-8"
        )
    else:
        message = html.escape(error.message)
        page = (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>Error</title>\n</head>\n<body>\n<p>{message}</p>\n</body>\n</html>\n"
        )
        response = Response(page, status=status, mimetype="text/html")
    for name, value in NOCACHE_HEADERS.items():
        response.headers[name] = value
    return response


def serve_request(
    server: RestServer,
    http: Request,
    route: str | RestError,
    query: dict[str, Any] | None = None,
) -> Response:
    """Answer one HTTP request for REST ``route`` (or the error extracting it produced).

    ``query`` is the request's parsed query string when the caller already has it. A
    ``rest_route`` that is not a string is answered by `die_response` before the server runs.
    """
    if isinstance(route, RestError) and route.code == "rest_path_invalid_type":
        return die_response(http, route)
    host = server.hosts.lookup(http.environ)
    token = server.using_context(host.context)
    try:
        with server.notices.collecting() as debug_headers:
            try:
                params = query if query is not None else query_params(http.environ)
                status, headers, body = _serve(server, http, host, route, params)
            except OutageError as outage:
                # A service the site needs failed outside a handler (authentication, a
                # filter): the same 503/507 a handler's outage answers, never a 500.
                response = error_to_response(server.error_handlers.to_rest_error(outage))
                headers = {**_base_headers(server, False), **NOCACHE_HEADERS, **response.headers}
                status, body = response.status, encode_json(response.data)
            except Exception:
                logger.exception("Unhandled exception while serving a REST request")
                error = internal_error()
                headers = {**_base_headers(server, False), **NOCACHE_HEADERS}
                status, body = error.status, encode_json(error.to_dict())
            return to_http(
                status,
                headers,
                body,
                debug_headers if server.settings.debug else {},
                head=http.method == "HEAD",
            )
    finally:
        server.reset_context(token)


class Answer(NamedTuple):
    """What serving a REST request produces: status, headers and body (``None``: no body)."""

    status: int
    headers: dict[str, str]
    body: str | None


def _error_answer(error: RestError, headers: Mapping[str, str]) -> Answer:
    return Answer(error.status, dict(headers), encode_json(error.to_dict()))


def _serve(
    server: RestServer, http: Request, host: Host, route: str | RestError, query: dict[str, Any]
) -> Answer:
    """``serve_request``'s work, stage by stage: JSONP, the request object, method override,
    CORS header lists, authentication, dispatch, the envelope, headers, then the body."""
    if isinstance(route, RestError):
        return _error_answer(route, {**_base_headers(server, False), **NOCACHE_HEADERS})
    server.ensure_initialized()
    if server.init_error is not None:
        return _error_answer(server.init_error, {**_base_headers(server, False), **NOCACHE_HEADERS})
    jsonp = _check_jsonp(server, host, query)
    if isinstance(jsonp, Answer):
        return jsonp
    callback, base = jsonp
    request = _read_request(server, http, route, query, base)
    if isinstance(request, Answer):
        return request
    override_from_header = _override_method(request, query)
    _add_cors_header_lists(server, request, base)
    auth_error, auth_headers = _authenticate(server, request)
    with server.acting_for(request):
        result = _dispatch(server, request, auth_error, auth_headers)
        embed: bool | list[str] = parse_embed_param(query["_embed"]) if "_embed" in query else False
        if "_envelope" in query:
            result = server.envelope_response(result, embed)
        merged = _final_headers(
            server,
            request,
            result,
            base,
            nocache=auth_error is not None,
            override_from_header=override_from_header,
        )
        status = merged.get_status()
        if server.runs_only_own("rest_pre_serve_request"):
            send_cors_headers(False, merged, request, server)
        else:
            server.hooks.apply_filters("rest_pre_serve_request", False, merged, request, server)
        return _encode(server, request, merged, status, embed, callback)


def _check_jsonp(
    server: RestServer, host: Host, query: Mapping[str, Any]
) -> tuple[str | None, dict[str, str]] | Answer:
    """Stage 1, JSONP: the ``_jsonp`` callback (``None`` when not asked for) and the default
    headers it implies; a 400 answer when JSONP is disabled or the callback name is invalid."""
    value = query.get("_jsonp")
    callback = value if isinstance(value, str) and value else None
    enabled = bool(server.hooks.apply_filters("rest_jsonp_enabled", server.settings.jsonp_enabled))
    base = _default_headers(server, host, callback is not None and enabled)
    if callback is not None and not enabled:
        return _jsonp_error(
            "rest_callback_disabled", "JSONP support is disabled on this site.", base
        )
    if callback is not None and _JSONP_CALLBACK.search(callback):
        return _jsonp_error("rest_callback_invalid", "Invalid JSONP callback function.", base)
    return callback, base


def _read_request(
    server: RestServer, http: Request, route: str, query: dict[str, Any], base: Mapping[str, str]
) -> RestRequest | Answer:
    """Stage 2, the request object (query, headers, body); a 413 answer for a body too large,
    a 400 one for a body cut short."""
    http.max_content_length = MAX_BODY_BYTES
    try:
        return build_request(
            http, route, query, plain_permalinks=not server.settings.permalink_structure
        )
    except RequestEntityTooLarge:
        return _error_answer(payload_too_large(), base)
    except ClientDisconnected:
        return _error_answer(
            RestError(
                "rest_incomplete_body",
                "The request body was not received in full.",
                {"status": 400},
            ),
            base,
        )


def _override_method(request: RestRequest, query: Mapping[str, Any]) -> bool:
    """Stage 3, method override: ``_method``, else ``X-HTTP-Method-Override``; whether the
    header did it (its 4xx answers then carry the no-cache headers)."""
    method_param = query.get("_method")
    if isinstance(method_param, str) and method_param:
        request.set_method(method_param)
        return False
    header = request.get_header("x_http_method_override")
    if header:
        request.set_method(header)
        return True
    return False


def _add_cors_header_lists(server: RestServer, request: RestRequest, base: dict[str, str]) -> None:
    """Stage 4, CORS: the exposed and allowed header lists (filters
    ``rest_exposed_cors_headers`` and ``rest_allowed_cors_headers``)."""
    hooks = server.hooks
    if not hooks.has_filter("rest_exposed_cors_headers"):
        base["Access-Control-Expose-Headers"] = _EXPOSED_LIST
    else:
        exposed = hooks.apply_filters("rest_exposed_cors_headers", list(EXPOSED_HEADERS), request)
        base["Access-Control-Expose-Headers"] = ", ".join(exposed)
    if not hooks.has_filter("rest_allowed_cors_headers"):
        base["Access-Control-Allow-Headers"] = _ALLOWED_LIST
    else:
        allowed = hooks.apply_filters("rest_allowed_cors_headers", list(ALLOWED_HEADERS), request)
        base["Access-Control-Allow-Headers"] = ", ".join(allowed)


def _authenticate(
    server: RestServer, request: RestRequest
) -> tuple[RestError | None, Mapping[str, str]]:
    """Stage 5, authentication: the caller is set on ``request``; returns the error that
    ``rest_authentication_errors`` settles on (``None``: go on) and the authenticator's
    response headers."""
    outcome = server.authenticate(request)
    headers: Mapping[str, str] = {}
    if isinstance(outcome, Authentication):
        request.user = outcome.user
        request.app_password = outcome.app_password
        request.authentication_method = outcome.method
        headers = outcome.headers
    error = server.hooks.apply_filters(
        "rest_authentication_errors", outcome if isinstance(outcome, RestError) else None, request
    )
    return (error if isinstance(error, RestError) else None), headers


def _dispatch(
    server: RestServer,
    request: RestRequest,
    auth_error: RestError | None,
    auth_headers: Mapping[str, str],
) -> RestResponse:
    """Stage 6, dispatch: the handler's response (or the authentication error's), with the
    authenticator's headers, through ``rest_post_dispatch``."""
    if auth_error is not None:
        result = error_to_response(auth_error)
        if is_logged_in(request.refused_user):
            request.user = request.refused_user  # refused: only the headers see this user
    else:
        result = server.dispatch(request)
        matched = server.registry.routes.get(result.get_matched_route() or "")
        for notice in matched.notices if matched is not None else ():
            server.notices.repeat_registration_notice(*notice)
    for name, value in auth_headers.items():
        result.header(name, value)
    return server.post_dispatch(result, request)


def _final_headers(
    server: RestServer,
    request: RestRequest,
    result: RestResponse,
    base: Mapping[str, str],
    *,
    nocache: bool,
    override_from_header: bool,
) -> RestResponse:
    """Stage 7, headers: the response's own headers replace the defaults of the same name;
    the no-cache headers go to logged-in callers (``rest_send_nocache_headers``), refused
    authentications and 4xx answers to a header method override."""
    merged = result.copy_without_headers()
    status = merged.status
    logged_in = bool(
        server.hooks.apply_filters("rest_send_nocache_headers", is_logged_in(request.user))
    )
    if nocache or logged_in or (override_from_header and 400 <= status < 500):
        merged.headers = merge_headers(
            base, result.get_headers(), NOCACHE_HEADERS, drop="Last-Modified"
        )
    else:
        merged.headers = merge_headers(base, result.get_headers())
    return merged


def _encode(
    server: RestServer,
    request: RestRequest,
    merged: RestResponse,
    status: int,
    embed: bool | list[str],
    callback: str | None,
) -> Answer:
    """Stage 8, encoding: no body for HEAD, 204 or no data; else the data with ``_links`` and
    ``_embedded`` as JSON (pretty with ``_pretty``; a 500 when it cannot be encoded), wrapped
    for a JSONP ``callback``."""
    headers = dict(merged.get_headers())
    if request.get_method() == "HEAD":
        return Answer(status, headers, None)
    # The API index's body is kept while nothing that shapes it changes (index_body.py).
    kept = None if embed else server.index_bodies.key_for(request, merged)
    body = server.index_bodies.get(kept) if kept is not None else None
    if body is None:
        data = server.response_to_data(merged, embed)
        data = server.hooks.apply_filters("rest_pre_echo_response", data, server, request)
        if status == 204 or data is None:
            return Answer(status, headers, None)
        pretty = request.get_param("_pretty") is not None
        try:
            body = encode_json(data, pretty)
        except ValueError as exc:
            kind = unsupported_type(exc)
            logger.error(
                "The answer to %s %r (route %s) cannot be encoded as JSON: %s%s",
                request.get_method(),
                request.get_route(),
                merged.get_matched_route() or "-",
                exc,
                f" ({kind})" if kind else "",
            )
            status = 500
            body = encode_json(
                RestError("rest_encode_error", str(exc), {"status": 500}).to_dict(), pretty
            )
        if kept is not None and status == 200:
            server.index_bodies.put(kept, body)
    if callback is not None:
        body = f"/**/{callback}({body})"
    return Answer(status, headers, body)
