"""Serving one HTTP request through the REST server (``WP_REST_Server::serve_request``).

The order of work: fixed headers (Content-Type, X-Robots-Tag, the API-root Link,
X-Content-Type-Options), JSONP validation, the request object (query, form body, headers, raw
body, method override), CORS header lists, authentication, dispatch, ``rest_post_dispatch``
(Allow, ``_fields``), the envelope, the response's own headers (replacing defaults), no-cache
headers for logged-in users, CORS origin headers, then the body: data with ``_links`` and
``_embedded``, JSON (pretty with ``_pretty``), JSONP. HEAD gets every header and no body.
"""

from __future__ import annotations

import contextlib
import html
import json
import logging
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from werkzeug.datastructures import Headers
from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge
from werkzeug.wrappers import Request, Response

from sitecache.errors import RestError
from sitecache.rest.authentication import Authentication, is_logged_in
from sitecache.rest.params import is_json_media_type, parse_pairs, parse_query_string
from sitecache.rest.request import RestRequest
from sitecache.rest.response import RestResponse, error_to_response
from sitecache.rest.server import internal_error
from sitecache.rest.urls import RequestContext
from sitecache.schema import parse_embed_param

if TYPE_CHECKING:
    from sitecache.rest.server import RestServer

__all__ = [
    "MAX_BODY_BYTES",
    "NOCACHE_HEADERS",
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
MAX_BODY_BYTES: Final = 16 * 1024 * 1024
"""The largest request body accepted (413 beyond)."""
_JSONP_CALLBACK = re.compile(r"[^A-Za-z0-9_.]")
_WHITESPACE = re.compile(r"\s+")


# ---------------------------------------------------------------------- JSON
_MAX_DEPTH: Final = 512
"""PHP's ``json_encode`` depth limit: deeper data is refused as it is there."""


class _EncodeError(Exception):
    pass


def _reject(value: Any) -> Any:
    raise _EncodeError("Type is not supported")


def _check_floats(value: Any, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        raise _EncodeError("Maximum stack depth exceeded")
    if isinstance(value, float) and not math.isfinite(value):
        raise _EncodeError("Inf and NaN cannot be JSON encoded")
    if isinstance(value, dict):
        for item in value.values():
            _check_floats(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_floats(item, depth + 1)


def encode_json(data: Any, pretty: bool = False) -> str:
    """``data`` as JSON (UTF-8 text, ``{}`` for empty objects); raises ``ValueError`` with a
    PHP-style message when it cannot be encoded (NaN, infinity, unsupported types, nesting
    deeper than 512).

    The C encoder does the work and rejects what it must (``allow_nan=False``, ``default``);
    only when it fails is the data walked in Python, to give the same message as before; and
    when the output has more than 512 brackets (so the data might nest too deep), its
    containers are.
    """
    try:
        if pretty:
            text = json.dumps(data, indent=4, ensure_ascii=False, allow_nan=False, default=_reject)
        else:
            text = json.dumps(
                data, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_reject
            )
    except (_EncodeError, TypeError, ValueError, RecursionError) as exc:
        raise ValueError(_encode_error_message(data, exc)) from exc
    # A value nested d deep sits inside d brackets, so few brackets prove a shallow value.
    # (The encoder succeeded, so there is no NaN or infinity: only the depth is left.)
    if text.count("[") + text.count("{") > _MAX_DEPTH and _too_deep(data):
        raise ValueError("Maximum stack depth exceeded")
    return text


def _too_deep(data: Any) -> bool:
    """Whether a value of ``data`` sits more than 512 containers deep (PHP refuses those);
    only containers are visited, without recursion."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        if depth >= _MAX_DEPTH:
            if children:
                return True
            continue
        for child in children:
            if isinstance(child, dict | list | tuple):
                stack.append((child, depth + 1))
    return False


def _encode_error_message(data: Any, exc: BaseException) -> str:
    """The message for data the encoder refused: a depth or NaN problem found by walking the
    data first (in the order the walk meets them), else what the encoder's error means."""
    try:
        _check_floats(data)
    except _EncodeError as found:
        return str(found)
    except RecursionError:
        return "Maximum stack depth exceeded"
    if isinstance(exc, _EncodeError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "Maximum stack depth exceeded"
    return "Type is not supported"


# ---------------------------------------------------------------------- the request
def _request_headers(environ: Mapping[str, Any]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            headers[key[5:]] = str(value)
        elif key in ("CONTENT_TYPE", "CONTENT_LENGTH", "CONTENT_MD5") and value:
            headers[key] = str(value)
    if not headers.get("AUTHORIZATION") and environ.get("REDIRECT_HTTP_AUTHORIZATION"):
        headers["AUTHORIZATION"] = str(environ["REDIRECT_HTTP_AUTHORIZATION"])
    return headers


def query_params(environ: Mapping[str, Any]) -> dict[str, Any]:
    """The PHP-style query parameters of a WSGI request (``QUERY_STRING`` read as UTF-8)."""
    raw = str(environ.get("QUERY_STRING") or "")
    with contextlib.suppress(UnicodeEncodeError):  # already text beyond latin-1: use as is
        raw = raw.encode("latin-1").decode("utf-8", "replace")
    return parse_query_string(raw)


def read_bounded_body(http: Request) -> None:
    """Read a body of unknown length (``Transfer-Encoding: chunked``) now, and raise
    ``RequestEntityTooLarge`` when it is longer than `MAX_BODY_BYTES`.

    werkzeug stops reading such a stream at the limit and returns what it read, which would
    silently truncate the body; reading one byte more tells a body at the limit from a longer
    one. Bodies with a ``Content-Length`` are checked by werkzeug against the header.
    """
    if http.content_length is not None:
        return
    if "chunked" not in str(http.environ.get("HTTP_TRANSFER_ENCODING", "")).lower():
        return
    http.max_content_length = MAX_BODY_BYTES + 1
    try:
        data = http.get_data(cache=True)
    finally:
        http.max_content_length = MAX_BODY_BYTES
    if len(data) > MAX_BODY_BYTES:
        raise RequestEntityTooLarge()


def build_request(
    http: Request, route: str, query: dict[str, Any], plain_permalinks: bool = False
) -> RestRequest:
    """The `RestRequest` of an HTTP request (form bodies of POST parsed, PHP-style)."""
    request = RestRequest(http.method, route)
    request.environ = http.environ
    request.plain_permalinks = plain_permalinks
    request.set_query_params(query)
    request.set_headers(_request_headers(http.environ))
    read_bounded_body(http)
    body = http.get_data(cache=True)
    request.set_body(body)
    if http.method == "POST":
        form = http.form
        if form:
            request.set_body_params(parse_pairs(form.items(multi=True)))
        if http.files:
            request.set_file_params(dict(http.files.items()))
    return request


# ---------------------------------------------------------------------- headers
def _header_value(value: object) -> str:
    """One-line, latin-1-safe header text (newlines can never split a header)."""
    return _clean_header_text(value if isinstance(value, str) else str(value))


@lru_cache(maxsize=1024)
def _clean_header_text(text: str) -> str:
    """`_header_value` of a string; header values repeat from request to request, so the
    cleaned form is kept (a pure function of its argument, bounded)."""
    text = _WHITESPACE.sub(" ", text).strip()
    return text.encode("latin-1", "replace").decode("latin-1")


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


_REWRITTEN_HEADERS: Final = frozenset({"location", "content-location"})


class RestHttpResponse(Response):
    """The werkzeug response of a REST request: its headers are final when it is built.

    werkzeug copies a response's headers when it sends them, to make ``Location`` absolute, to
    drop ``Content-Length`` for bodiless statuses and to compute a missing one. A REST response
    has its ``Content-Length`` from its body and needs none of that, so it is sent as it is;
    any other case (a ``Location`` header added later, a status without a body) goes through
    werkzeug's own rules.
    """

    def get_wsgi_headers(self, environ: Any) -> Headers:
        """The headers to send (see `werkzeug.wrappers.Response.get_wsgi_headers`)."""
        status = self.status_code
        if 100 <= status < 200 or status in (204, 304):
            return super().get_wsgi_headers(environ)
        has_length = False
        for name, _ in self.headers:
            lowered = name.lower()
            if lowered in _REWRITTEN_HEADERS:
                return super().get_wsgi_headers(environ)
            has_length = has_length or lowered == "content-length"
        return self.headers if has_length else super().get_wsgi_headers(environ)


def _to_http(
    status: int,
    headers: Mapping[str, str],
    body: str | None,
    debug_headers: Mapping[str, str],
    head: bool = False,
) -> Response:
    # The last value given for a name (case-insensitively) wins, at the name's first position.
    final: dict[str, tuple[str, str]] = {}
    for source in (headers, debug_headers):
        for name, value in source.items():
            final[name.lower()] = (name, _header_value(value))
    # A lone surrogate cannot be UTF-8: as a last resort it is written as its JSON escape
    # (request bodies holding one are refused, but a handler may still produce one).
    payload = b"" if body is None else body.encode("utf-8", "backslashreplace")
    response = RestHttpResponse(payload, status=status, headers=Headers(list(final.values())))
    if head:
        # A HEAD answer has no body; its length would be that of the GET, which we did not build.
        response.headers.pop("Content-Length", None)
    return response


def _merge_headers(base: Mapping[str, str], own: Mapping[str, str]) -> dict[str, str]:
    """``base`` then ``own``, as `RestResponse.header` would set them one by one: a name given
    again (in any case) replaces the earlier one and moves to the end."""
    merged = dict(base)
    names = {name.lower(): name for name in merged}
    for name, value in own.items():
        lowered = name.lower()
        existing = names.get(lowered)
        if existing is not None:
            del merged[existing]
        merged[name] = value
        names[lowered] = name
    return merged


def _jsonp_error(
    code: str, message: str, base: Mapping[str, str]
) -> tuple[int, dict[str, str], str]:
    return 400, dict(base), encode_json({"code": code, "message": message})


# ---------------------------------------------------------------------- serving
def error_response(server: RestServer, error: RestError) -> Response:
    """A REST error answered before any request object exists (a body too large, say)."""
    headers = {**_base_headers(server, False), **NOCACHE_HEADERS}
    return _to_http(error.status, headers, encode_json(error.to_dict()), {})


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
    context = RequestContext.from_environ(http.environ)
    token = server.using_context(context)
    try:
        with server.notices.collecting() as debug_headers:
            try:
                params = query if query is not None else query_params(http.environ)
                status, headers, body = _serve(server, http, route, params)
            except Exception:
                logger.exception("Unhandled exception while serving a REST request")
                error = internal_error()
                headers = {**_base_headers(server, False), **NOCACHE_HEADERS}
                status, body = error.status, encode_json(error.to_dict())
            return _to_http(
                status,
                headers,
                body,
                debug_headers if server.settings.debug else {},
                head=http.method == "HEAD",
            )
    finally:
        server.reset_context(token)


def _serve(
    server: RestServer, http: Request, route: str | RestError, query: dict[str, Any]
) -> tuple[int, dict[str, str], str | None]:
    if isinstance(route, RestError):
        headers = {**_base_headers(server, False), **NOCACHE_HEADERS}
        return route.status, headers, encode_json(route.to_dict())
    server.ensure_initialized()

    jsonp_value = query.get("_jsonp")
    jsonp = jsonp_value if isinstance(jsonp_value, str) and jsonp_value else None
    jsonp_enabled = bool(
        server.hooks.apply_filters("rest_jsonp_enabled", server.settings.jsonp_enabled)
    )
    base = _base_headers(server, jsonp is not None and jsonp_enabled)
    if jsonp is not None:
        if not jsonp_enabled:
            return _jsonp_error(
                "rest_callback_disabled", "JSONP support is disabled on this site.", base
            )
        if _JSONP_CALLBACK.search(jsonp):
            return _jsonp_error("rest_callback_invalid", "Invalid JSONP callback function.", base)

    http.max_content_length = MAX_BODY_BYTES
    try:
        request = build_request(
            http, route, query, plain_permalinks=not server.settings.permalink_structure
        )
    except RequestEntityTooLarge:
        error = payload_too_large()
        return error.status, base, encode_json(error.to_dict())
    except ClientDisconnected:
        error = RestError(
            "rest_incomplete_body", "The request body was not received in full.", {"status": 400}
        )
        return error.status, base, encode_json(error.to_dict())

    override_from_header = False
    method_param = query.get("_method")
    if isinstance(method_param, str) and method_param:
        request.set_method(method_param)
    elif request.get_header("x_http_method_override"):
        request.set_method(request.get_header("x_http_method_override") or "")
        override_from_header = True

    exposed = server.hooks.apply_filters(
        "rest_exposed_cors_headers", list(EXPOSED_HEADERS), request
    )
    allowed = server.hooks.apply_filters(
        "rest_allowed_cors_headers", list(ALLOWED_HEADERS), request
    )
    base["Access-Control-Expose-Headers"] = ", ".join(exposed)
    base["Access-Control-Allow-Headers"] = ", ".join(allowed)

    outcome = server.authenticate(request)
    auth_headers: Mapping[str, str] = {}
    if isinstance(outcome, Authentication):
        request.user = outcome.user
        request.app_password = outcome.app_password
        request.authentication_method = outcome.method
        auth_headers = outcome.headers
    auth_error = server.hooks.apply_filters(
        "rest_authentication_errors", outcome if isinstance(outcome, RestError) else None, request
    )
    with server.acting_for(request):
        force_nocache = False
        if isinstance(auth_error, RestError):
            result = error_to_response(auth_error)
            force_nocache = True
            if is_logged_in(request.refused_user):
                request.user = request.refused_user  # refused: only the headers see this user
        else:
            result = server.dispatch(request)
            matched = server.registry.routes.get(result.get_matched_route() or "")
            for notice in matched.notices if matched is not None else ():
                server.notices.repeat_registration_notice(*notice)
        for name, value in auth_headers.items():
            result.header(name, value)
        result = server.post_dispatch(result, request)

        embed: bool | list[str] = parse_embed_param(query["_embed"]) if "_embed" in query else False
        if "_envelope" in query:
            result = server.envelope_response(result, embed)

        # The response's own headers replace the defaults of the same name.
        merged = RestResponse(result.get_data(), result.get_status())
        merged.links = result.links
        merged.set_matched_route(result.get_matched_route())
        merged.set_matched_handler(result.get_matched_handler())
        merged.headers = _merge_headers(base, result.get_headers())
        status = merged.get_status()

        nocache = bool(
            server.hooks.apply_filters("rest_send_nocache_headers", is_logged_in(request.user))
        )
        if force_nocache or nocache or (override_from_header and 400 <= status < 500):
            for name, value in NOCACHE_HEADERS.items():
                merged.header(name, value)
            merged.remove_header("Last-Modified")

        server.hooks.apply_filters("rest_pre_serve_request", False, merged, request, server)
        headers = dict(merged.get_headers())
        if request.get_method() == "HEAD":
            return status, headers, None

        data = server.response_to_data(merged, embed)
        data = server.hooks.apply_filters("rest_pre_echo_response", data, server, request)
        if status == 204 or data is None:
            return status, headers, None
        pretty = request.get_param("_pretty") is not None
        try:
            body = encode_json(data, pretty)
        except ValueError as exc:
            status = 500
            body = encode_json(
                RestError("rest_encode_error", str(exc), {"status": 500}).to_dict(), pretty
            )
        if jsonp is not None:
            body = f"/**/{jsonp}({body})"
        return status, headers, body
