"""The `RestRequest` of an HTTP request: PHP-style query and form values, headers, a bounded body.

Bodies are bounded before anything reads them (`MAX_BODY_BYTES`, 413 beyond), including bodies of
unknown length (``Transfer-Encoding: chunked``), which werkzeug would otherwise cut silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge
from werkzeug.wrappers import Request

from sitecache.rest.params import parse_pairs, parse_query_string
from sitecache.rest.request import RestRequest
from sitecache.rest.uploads import uploaded_files

__all__ = [
    "MAX_BODY_BYTES",
    "BodilessRequest",
    "build_request",
    "query_params",
    "read_bounded_body",
]

MAX_BODY_BYTES: Final = 16 * 1024 * 1024
"""The largest request body accepted (413 beyond)."""


def _request_headers(environ: Mapping[str, Any]) -> dict[str, list[str]]:
    """The request's headers as `RestRequest` keeps them: canonical name → ``[value]``."""
    headers: dict[str, list[str]] = {}
    for key, value in environ.items():
        # NOTE: the first letter turns away most keys at the cost of one comparison.
        if key and key[0] in "HC":
            if key.startswith("HTTP_"):
                # canonical_header_name of the name without HTTP_
                headers[key[5:].lower().replace("-", "_")] = [str(value)]
            elif key in _BODY_HEADERS and value:
                headers[key.lower()] = [str(value)]
    authorization = headers.get("authorization")
    if (authorization is None or not authorization[0]) and environ.get(
        "REDIRECT_HTTP_AUTHORIZATION"
    ):
        headers["authorization"] = [str(environ["REDIRECT_HTTP_AUTHORIZATION"])]
    return headers


_BODY_HEADERS: Final = frozenset({"CONTENT_TYPE", "CONTENT_LENGTH", "CONTENT_MD5"})


class BodilessRequest(Request):
    """werkzeug's `Request` of a GET or HEAD without a body, made lazily.

    Serving a REST GET reads the request's environ, method and path only, while werkzeug's
    constructor works out every part of the URL and the headers. This one sets those three
    (``method`` and ``path`` exactly as werkzeug does) and runs werkzeug's constructor the first
    time anything else is read, so it behaves as werkzeug's request in every other respect.
    """

    def __init__(self, environ: dict[str, Any]) -> None:  # werkzeug's runs on first need
        self.environ = environ
        self.method = environ.get("REQUEST_METHOD", "GET").upper()
        path = environ.get("PATH_INFO") or ""
        # werkzeug: "/" + _wsgi_decoding_dance(PATH_INFO).lstrip("/")
        self.path = "/" + path.encode("latin1").decode("utf-8", "replace").lstrip("/")
        self.shallow = False

    def __getattr__(self, name: str) -> Any:
        """Any attribute werkzeug's constructor sets: run it now, then read the attribute."""
        if name.startswith("__") or "headers" in self.__dict__:
            raise AttributeError(name)
        Request.__init__(self, self.environ)
        return getattr(self, name)

    @staticmethod
    def suits(environ: Mapping[str, Any]) -> bool:
        """Whether ``environ`` is a GET or HEAD without a body (`_may_have_body`)."""
        return environ.get("REQUEST_METHOD", "GET") in _BODILESS_METHODS and not _may_have_body(
            environ
        )


_BODILESS_METHODS: Final = frozenset({"GET", "HEAD"})


def query_params(environ: Mapping[str, Any]) -> dict[str, Any]:
    """The PHP-style query parameters of a WSGI request (``QUERY_STRING`` read as UTF-8)."""
    raw = environ.get("QUERY_STRING")
    if not raw:
        return {}
    raw = str(raw)
    try:
        raw = raw.encode("latin-1").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return parse_query_string(raw)  # already text beyond latin-1: used as is
    return parse_query_string(raw)


def read_bounded_body(http: Request) -> None:
    """Read a body of unknown length (``Transfer-Encoding: chunked``) now, and raise
    ``RequestEntityTooLarge`` when it is longer than `MAX_BODY_BYTES`.

    werkzeug stops reading such a stream at the limit and returns what it read, which would
    silently truncate the body; reading one byte more tells a body at the limit from a longer
    one. Bodies with a ``Content-Length`` are checked by werkzeug against the header.
    """
    if not _chunked(http.environ) or http.content_length is not None:
        return
    http.max_content_length = MAX_BODY_BYTES + 1
    try:
        data = http.get_data(cache=True)
    finally:
        http.max_content_length = MAX_BODY_BYTES
    if len(data) > MAX_BODY_BYTES:
        raise RequestEntityTooLarge()


def _chunked(environ: Mapping[str, Any]) -> bool:
    return "chunked" in str(environ.get("HTTP_TRANSFER_ENCODING", "")).lower()


def _may_have_body(environ: Mapping[str, Any]) -> bool:
    """Whether the request may carry a body: a ``Content-Length`` other than 0, chunked, or
    another protocol than HTTP/1.x.

    An HTTP/1.x request with neither a ``Content-Length`` nor chunked framing has no body (RFC
    9112 §6.3); a gateway for another protocol may pass one without either (with
    ``wsgi.input_terminated``), and werkzeug reads it.
    """
    length = environ.get("CONTENT_LENGTH")
    if length:
        return bool(length != "0")
    if _chunked(environ):
        return True
    return not str(environ.get("SERVER_PROTOCOL", "")).startswith("HTTP/1.")


def build_request(
    http: Request, route: str, query: dict[str, Any], plain_permalinks: bool = False
) -> RestRequest:
    """The `RestRequest` of an HTTP request (form bodies of POST parsed, PHP-style; files
    as `UploadedFile` values).

    Raises:
        RequestEntityTooLarge: the body is longer than `MAX_BODY_BYTES`.
        ClientDisconnected: the body is shorter than its ``Content-Length`` (cut off).
    """
    environ = http.environ
    request = RestRequest(http.method, route)
    request.environ = environ
    request.plain_permalinks = plain_permalinks
    request.set_query_params(query)
    request.set_canonical_headers(_request_headers(environ))
    if _may_have_body(environ):
        read_bounded_body(http)
        body = http.get_data(cache=True)
        # A server that marks its input terminated (gunicorn) ends the stream where the
        # client stopped: werkzeug then returns what came, shorter than announced.
        length = http.content_length
        if length is not None and len(body) < length:
            raise ClientDisconnected()
        request.set_body(body)
    if http.method == "POST":
        form = http.form
        if form:
            request.set_body_params(parse_pairs(form.items(multi=True)))
        if http.files:
            request.set_file_params(uploaded_files(http.files.items(multi=True)))
    return request
