"""A small WSGI reverse proxy: the application `PageCache` wraps when it fronts an HTTP origin.

`ReverseProxy` forwards each request to one origin server over HTTP/1.1 (the standard
library's `http.client`) and answers with the origin's status, header fields and body, as an
application would: every field line the origin sent, in order and repeated as sent, except the
ones a WSGI application may not give (PEP 3333's hop-by-hop fields) and those the origin's
``Connection`` field names (RFC 9110 §7.6.1: they belong to that one connection). The body is
read whole before the answer starts (the origins this proxy fronts answer small bodies).

Interim (1xx) responses are read and dropped: WSGI has no way to pass them on. An origin that
cannot be reached, resets the connection or closes it before a whole answer is
a ``502 Bad Gateway``; one that does not answer within the timeout a ``504 Gateway Timeout``
(a gateway's answers, with ``Cache-Control: no-store``), so the cache in front sees what an
origin failure looks like through any gateway.

`make cache-tests` (``bench/cache_tests.py``) serves ``PageCache(ReverseProxy(...))`` in front
of the public cache-tests suite's own test server.
"""

from __future__ import annotations

import http.client
from collections.abc import Callable, Iterable
from typing import Any, Final
from urllib.parse import quote

__all__ = ["HOP_BY_HOP", "ReverseProxy", "forwarded_request_headers", "kept_response_headers"]

StartResponse = Callable[..., Any]

#: Fields of one connection: never forwarded either way (PEP 3333 forbids an application to
#: give them; RFC 9110 §7.6.1 lists them), beside those a ``Connection`` field names.
HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)

#: Characters of a path sent as they are (the rest percent-encoded, latin-1 bytes as WSGI has them).
_SAFE: Final = "/:@!$&'()*+,;=-._~"
#: Environ keys that carry request fields without the ``HTTP_`` prefix (CGI).
_UNPREFIXED: Final = {"CONTENT_TYPE": "Content-Type", "CONTENT_LENGTH": "Content-Length"}


def _connection_named(fields: Iterable[tuple[str, str]]) -> set[str]:
    """The lower-case field names the ``Connection`` fields of ``fields`` list."""
    named: set[str] = set()
    for name, value in fields:
        if name.lower() == "connection":
            named.update(item.strip().lower() for item in value.split(",") if item.strip())
    return named


def forwarded_request_headers(environ: dict[str, Any]) -> list[tuple[str, str]]:
    """The request's fields to send to the origin: every ``HTTP_*`` and CGI field of
    ``environ`` but the hop-by-hop ones (``Host`` included, as the client sent it)."""
    fields: list[tuple[str, str]] = []
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name = key[5:].replace("_", "-").title()
        elif key in _UNPREFIXED and value:
            name = _UNPREFIXED[key]
        else:
            continue
        fields.append((name, str(value)))
    named = _connection_named(fields)
    return [
        (name, value)
        for name, value in fields
        if name.lower() not in HOP_BY_HOP and name.lower() not in named
    ]


def kept_response_headers(fields: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The origin's response fields a WSGI application may give, in order: all but the
    hop-by-hop ones and those its ``Connection`` fields name."""
    fields = list(fields)
    named = _connection_named(fields)
    return [
        (name, value)
        for name, value in fields
        if name.lower() not in HOP_BY_HOP and name.lower() not in named
    ]


class _FinalResponse(http.client.HTTPResponse):
    """An origin's answer past its interim (1xx) responses, which a WSGI application cannot
    pass on (`http.client` itself skips only ``100 Continue``)."""

    # `_read_status` is not in typeshed (a private method of http.client).
    def _read_status(self) -> tuple[str, int, str]:
        while True:
            version, status, reason = super()._read_status()  # type: ignore[misc]
            if status >= 200 or status == 101:
                return version, status, reason
            http.client.parse_headers(self.fp)  # the interim response's fields: dropped


class ReverseProxy:
    """A WSGI application answering each request with an origin server's answer.

    Args:
        host: the origin's host name or address.
        port: its TCP port.
        timeout: seconds to wait for the origin's answer before a ``504``.
    """

    def __init__(self, host: str, port: int, *, timeout: float = 15.0) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Forward the request and answer with the origin's status, fields and body."""
        method = environ.get("REQUEST_METHOD", "GET")
        # Rebuilt from the environ the cache hands on (it may strip query parameters).
        target = _target(environ)
        body = _request_body(environ)
        connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        connection.response_class = _FinalResponse
        try:
            connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for name, value in forwarded_request_headers(environ):
                if name.lower() != "content-length":
                    connection.putheader(name, value)
            if body or method not in ("GET", "HEAD"):
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body or None)
            response = connection.getresponse()
            content = response.read()
        except TimeoutError:
            return _gateway_error(start_response, "504 Gateway Timeout")
        except (OSError, http.client.HTTPException):
            return _gateway_error(start_response, "502 Bad Gateway")
        finally:
            connection.close()
        start_response(
            f"{response.status} {response.reason or 'Unknown'}",
            kept_response_headers(response.getheaders()),
        )
        return [content] if content else []


def _target(environ: dict[str, Any]) -> str:
    """The request target rebuilt from ``SCRIPT_NAME``, ``PATH_INFO`` and the query."""
    raw = (environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")).encode("latin-1")
    path = quote(raw, safe=_SAFE)
    query = environ.get("QUERY_STRING", "")
    return f"{path or '/'}?{query}" if query else path or "/"


def _request_body(environ: dict[str, Any]) -> bytes:
    """The request's body (``CONTENT_LENGTH`` bytes of ``wsgi.input``), or ``b""``."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return b""
    if length <= 0:
        return b""
    data: bytes = environ["wsgi.input"].read(length)
    return data


def _gateway_error(start_response: StartResponse, status: str) -> Iterable[bytes]:
    """A gateway's own answer: the origin failed (never stored by any cache)."""
    body = status.encode("ascii")
    start_response(
        status,
        [
            ("Content-Type", "text/plain"),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
        ],
    )
    return [body]
