"""The werkzeug response of a REST answer: final headers on one line each, the body as UTF-8.

`to_http` builds it from a status, headers and a body; `merge_headers` lets a response's own
headers replace the server's defaults of the same name (case-insensitively).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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


def to_http(
    status: int,
    headers: Mapping[str, str],
    body: str | None,
    debug_headers: Mapping[str, str],
    head: bool = False,
) -> Response:
    """The response to send: ``debug_headers`` after ``headers``, every value made one line."""
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


def merge_headers(base: Mapping[str, str], own: Mapping[str, str]) -> dict[str, str]:
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
