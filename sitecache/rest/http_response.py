"""The werkzeug response of a REST answer: final headers on one line each, the body as UTF-8.

`to_http` builds it from a status, headers and a body; `merge_headers` lets a response's own
headers replace the server's defaults of the same name (case-insensitively).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, Final

from werkzeug.datastructures import Headers
from werkzeug.wrappers import Response

__all__ = ["RestHttpResponse", "merge_headers", "to_http"]

_WHITESPACE = re.compile(r"\s+")


def _header_value(value: object) -> str:
    """One-line, latin-1-safe header text (newlines can never split a header)."""
    return _clean_header_text(value if isinstance(value, str) else str(value))


@lru_cache(maxsize=1024)
def _clean_header_text(text: str) -> str:
    """`_header_value` of a string; header values repeat from request to request, so the
    cleaned form is kept (a pure function of its argument, bounded)."""
    text = _WHITESPACE.sub(" ", text).strip()
    return text.encode("latin-1", "replace").decode("latin-1")


_REWRITTEN_HEADERS: Final = frozenset({"location", "content-location"})


class _FinalHeaders(Headers):
    """Headers given as a finished list: every value already one clean line (`_header_value`).

    werkzeug's `Headers` checks and copies pairs one at a time; a REST answer's pairs were
    checked when they were cleaned, so the list is taken as it is. Anything added later (the
    application's security headers) goes through werkzeug's own checks.
    """

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        super().__init__()
        self._list = pairs


class RestHttpResponse(Response):
    """The werkzeug response of a REST request: its headers and body are final when it is built.

    werkzeug's constructor copies the headers and works out the ``Content-Length`` from the body,
    and sending copies the headers again, to make ``Location`` absolute, to drop
    ``Content-Length`` for bodiless statuses and to compute a missing one. A REST answer has its
    headers (with its ``Content-Length``) and its one-piece body ready, so it is built from them
    and sent as it is; any other case (a HEAD request, a status without a body, a ``Location``
    header, a close callback) goes through werkzeug's own rules.

    The headers are kept by lower-cased name until something asks for werkzeug's `Headers`
    (``response.headers``), which are then made from them and are the headers from there on.

    Args:
        body: the encoded body.
        status: the HTTP status.
        final: lower-cased name → the final ``(name, value)`` pair, in sending order
            (``Content-Length`` included unless left to werkzeug); the response keeps it.
    """

    def __init__(self, body: bytes, status: int, final: dict[str, tuple[str, str]]) -> None:
        # NOTE: what werkzeug's Response.__init__ sets, without its per-header work.
        self._final = final
        self._headers: Headers | None = None
        self.status = status
        self.direct_passthrough = False
        self._on_close: list[Callable[[], Any]] = []
        self.response = [body]

    @property
    def headers(self) -> Headers:
        """werkzeug's headers of the response, made from the final pairs on first use."""
        if self._headers is None:
            self._headers = _FinalHeaders(list(self._final.values()))
        return self._headers

    @headers.setter
    def headers(self, headers: Headers) -> None:
        self._headers = headers

    def __call__(self, environ: Any, start_response: Callable[..., Any]) -> Iterable[bytes]:
        """Send the response (see `werkzeug.wrappers.Response.__call__`)."""
        status = self.status_code
        if (
            environ.get("REQUEST_METHOD") == "HEAD"
            or 100 <= status < 200
            or status in (204, 304)
            or self._on_close
            or not self._sent_as_is()
        ):
            return super().__call__(environ, start_response)
        if self._headers is None:
            start_response(self.status, list(self._final.values()))
        else:
            start_response(self.status, self._headers.to_wsgi_list())
        return self.response  # type: ignore[return-value]

    def _sent_as_is(self) -> bool:
        """Whether werkzeug would send the headers unchanged: a ``Content-Length`` and no
        header it rewrites."""
        if self._headers is None:
            final = self._final
            return "content-length" in final and final.keys().isdisjoint(_REWRITTEN_HEADERS)
        has_length = False
        for name, _ in self._headers:
            lowered = name.lower()
            if lowered in _REWRITTEN_HEADERS:
                return False
            has_length = has_length or lowered == "content-length"
        return has_length

    def set_default_headers(
        self, defaults: Mapping[str, str], html_defaults: Mapping[str, str]
    ) -> None:
        """What ``headers.setdefault`` of each of ``defaults`` then, on a ``text/html`` answer
        (werkzeug's ``mimetype``), of each of ``html_defaults`` does: the same headers in the
        same order. Every value must be one line of latin-1 text already (constants)."""
        if self._headers is not None:
            headers = self._headers
            for name, value in defaults.items():
                headers.setdefault(name, value)
            if self.mimetype == "text/html":
                for name, value in html_defaults.items():
                    headers.setdefault(name, value)
            return
        final = self._final
        for name, value in defaults.items():
            if name.lower() not in final:
                final[name.lower()] = (name, value)
        content_type = final.get("content-type")
        if content_type and content_type[1].partition(";")[0].strip() == "text/html":
            for name, value in html_defaults.items():
                if name.lower() not in final:
                    final[name.lower()] = (name, value)

    def get_wsgi_headers(self, environ: Any) -> Headers:
        """The headers to send (see `werkzeug.wrappers.Response.get_wsgi_headers`)."""
        status = self.status_code
        if 100 <= status < 200 or status in (204, 304) or not self._sent_as_is():
            return super().get_wsgi_headers(environ)
        return self.headers


def to_http(
    status: int,
    headers: Mapping[str, str],
    body: str | None,
    debug_headers: Mapping[str, str],
    head: bool = False,
) -> Response:
    """The response to send: ``debug_headers`` after ``headers``, every value made one line,
    then the body's ``Content-Length`` (none for HEAD: that of the GET was not built)."""
    # The last value given for a name (case-insensitively) wins, at the name's first position.
    final: dict[str, tuple[str, str]] = {}
    for source in (headers, debug_headers):
        for name, value in source.items():
            # _header_value, inlined (a call less per header)
            text = _clean_header_text(value if isinstance(value, str) else str(value))
            final[name.lower()] = (name, text)
    # A lone surrogate cannot be UTF-8: as a last resort it is written as its JSON escape
    # (request bodies holding one are refused, but a handler may still produce one).
    payload = b"" if body is None else body.encode("utf-8", "backslashreplace")
    if head:
        final.pop("content-length", None)
    else:
        final["content-length"] = ("Content-Length", str(len(payload)))
    return RestHttpResponse(payload, status, final)


def merge_headers(
    base: Mapping[str, str], *layers: Mapping[str, str], drop: str | None = None
) -> dict[str, str]:
    """``base`` then each of ``layers``, as `RestResponse.header` would set them one by one: a
    name given again (in any case) replaces the earlier one and moves to the end; then the
    header ``drop`` (any case) is removed, as `RestResponse.remove_header` would."""
    merged = dict(base)
    names = {name.lower(): name for name in merged}
    for layer in layers:
        for name, value in layer.items():
            lowered = name.lower()
            existing = names.get(lowered)
            if existing is not None:
                del merged[existing]
            merged[name] = value
            names[lowered] = name
    if drop is not None:
        existing = names.get(drop.lower())
        if existing is not None:
            del merged[existing]
    return merged
