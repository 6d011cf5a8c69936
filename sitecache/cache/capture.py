"""Response capture: the wrapped application's answer, buffered up to the storable size.

`call_app` runs the application with a ``start_response`` of its own and buffers the body
(PEP 3333: the application's ``close`` runs once the whole body is read). A body past the limit
is not buffered further: the rest stays in the application's iterator, streamed to the client
by `Captured.body_iterable`. `response_facts` reads what the response guards and the freshness
rules need (`sitecache.cache.policy.ResponseFacts`) from the captured headers, through the one
``Cache-Control`` parser (`sitecache.cache.directives`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from sitecache.cache.directives import (
    EMPTY,
    MAX_DELTA_SECONDS,
    parse_cache_control,
    parse_targeted,
)
from sitecache.cache.fields import entity_tag
from sitecache.cache.freshness import HeaderFacts
from sitecache.cache.http_dates import parse_http_date
from sitecache.cache.policy import ResponseFacts, parse_list_header

__all__ = [
    "Captured",
    "StartResponse",
    "WSGIApp",
    "call_app",
    "response_facts",
    "status_code",
]


StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def _nothing() -> None:
    """No resource to release."""


class Captured:
    """The application's response, buffered up to the storable size.

    Attributes:
        status: the status line the application gave.
        headers: its response headers.
        chunks: the body chunks read so far.
        size: bytes in ``chunks``.
        overflow: the application's iterator, when the body ran past the limit.
        close: releases the application's resources (its iterable's ``close``).
    """

    __slots__ = ("chunks", "close", "headers", "overflow", "size", "status")

    def __init__(self) -> None:
        self.status = "500 Internal Server Error"
        self.headers: list[tuple[str, str]] = []
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflow: Iterator[bytes] | None = None
        self.close: Callable[[], None] = _nothing

    def body(self) -> bytes:
        """The buffered body."""
        return b"".join(self.chunks)

    def body_iterable(self) -> Iterable[bytes]:
        """The whole body to send: the buffered chunks, then the rest of the application's
        iterator (closed once sent)."""
        if self.overflow is None:
            self.close()
            return self.chunks
        return self._stream()

    def _stream(self) -> Iterator[bytes]:
        try:
            yield from self.chunks
            if self.overflow is not None:
                yield from self.overflow
        finally:
            self.close()


def call_app(app: WSGIApp, environ: dict[str, Any], limit: int) -> Captured:
    """Call ``app`` and buffer its answer up to ``limit`` bytes of body.

    Raises:
        BaseException: whatever the application raised (its resources released first).
    """
    captured = Captured()

    def capture_start_response(
        status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], None]:
        if exc_info is not None and captured.chunks:
            raise exc_info[1].with_traceback(exc_info[2])
        captured.status = status
        captured.headers = list(headers)
        return captured.chunks.append

    result = app(environ, capture_start_response)
    close = getattr(result, "close", None)
    if callable(close):
        captured.close = close
    iterator = iter(result)
    try:
        for chunk in iterator:
            if chunk:
                captured.chunks.append(chunk)
                captured.size += len(chunk)
                if captured.size > limit:
                    captured.overflow = iterator
                    return captured
    except BaseException:
        captured.close()
        raise
    # PEP 3333: the whole body is buffered, so the app's resources are released now.
    captured.close()
    captured.close = _nothing
    captured.size = sum(len(chunk) for chunk in captured.chunks)
    return captured


def status_code(status: str) -> int:
    """The code of a WSGI status line (``"200 OK"``: 200; an unparsable one: 500)."""
    try:
        return int(status.split(" ", 1)[0])
    except ValueError:
        return 500


def response_facts(captured: Captured) -> ResponseFacts:
    """What the response guards and the freshness rules read of a captured response (an
    unparsable status is 500). ``Cache-Control``, ``CDN-Cache-Control``, ``Expires``,
    ``Date``, ``Age``, ``Last-Modified`` and ``ETag`` are read once, here; a field sent more
    than once counts by its first line (``Cache-Control``: every line, first directive wins)."""
    set_cookie = False
    control: list[str] = []
    targeted: list[str] = []
    vary: list[str] = []
    encoding = ""
    page_types: set[str] = set()
    first: dict[str, str] = {}
    for name, value in captured.headers:
        lower = name.lower()
        if lower == "set-cookie":
            set_cookie = True
        elif lower == "cache-control":
            control.append(value)
        elif lower == "cdn-cache-control":
            targeted.append(value)
        elif lower == "vary":
            vary.extend(parse_list_header(value))
        elif lower == "content-encoding":
            encoding = value.strip().lower()
        elif lower == "x-site-page-type":
            page_types.update(parse_list_header(value))
        elif lower in _FIRST_LINE_FIELDS:
            first.setdefault(lower, value)
    status = status_code(captured.status)
    # PERF: most pages send none of these fields; their facts are the shared empty values.
    cache_control = parse_cache_control(control) if control else EMPTY
    in_force = parse_targeted(targeted) if targeted else None
    headers = HeaderFacts(
        directives=in_force if in_force is not None else cache_control,
        targeted=in_force is not None,
        cache_control=cache_control,
        date=_date(first.get("date")),
        expires=_date(first.get("expires")),
        has_expires="expires" in first,
        age=_age(first.get("age")),
        last_modified=_date(first.get("last-modified")),
        etag=entity_tag(first["etag"]) if "etag" in first else "",
    )
    directives = headers.directives
    return ResponseFacts(
        status=status,
        has_set_cookie=set_cookie,
        cache_control=frozenset(directives.values) | directives.invalid
        if directives is not EMPTY
        else _NONE,
        vary=tuple(dict.fromkeys(vary)) if vary else (),
        body_length=captured.size,
        content_encoding=encoding,
        page_types=frozenset(page_types) if page_types else _NONE,
        headers=headers,
    )


#: No names (the facts of a response without directives or page types).
_NONE: Final[frozenset[str]] = frozenset()


#: Fields whose first line alone counts (RFC 9111 §4.2.1, §5.1).
_FIRST_LINE_FIELDS: Final = frozenset({"date", "expires", "age", "last-modified", "etag"})


def _date(value: str | None) -> float | None:
    """An HTTP-date field's time, ``None`` when absent or not a date."""
    return None if value is None else parse_http_date(value)


def _age(value: str | None) -> int:
    """The seconds of an ``Age`` field: its first list member when it is a non-negative
    integer (RFC 9111 §5.1; past 2**31 read as 2**31), else 0 (the field is ignored)."""
    if not value:
        return 0
    member = value.split(",", 1)[0].strip()
    if not member.isascii() or not member.isdigit():
        return 0
    return min(int(member), MAX_DELTA_SECONDS)
