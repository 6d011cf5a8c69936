"""Response capture: the wrapped application's answer, buffered up to the storable size.

`call_app` runs the application with a ``start_response`` of its own and buffers the body
(PEP 3333: the application's ``close`` runs once the whole body is read). A body past the limit
is not buffered further: the rest stays in the application's iterator, streamed to the client
by `Captured.body_iterable`. `response_facts` reads what the response guards need
(`sitecache.cache.policy.ResponseFacts`) from the captured headers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sitecache.cache.policy import ResponseFacts, parse_cache_control, parse_list_header

__all__ = [
    "Captured",
    "StartResponse",
    "WSGIApp",
    "call_app",
    "response_facts",
    "shared_lifetime",
    "zero_lifetime",
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


def response_facts(captured: Captured) -> ResponseFacts:
    """What the response guards read of a captured response (an unparsable status is 500)."""
    set_cookie = False
    cache_control: set[str] = set()
    vary: list[str] = []
    encoding = ""
    page_types: set[str] = set()
    lifetime: int | None = None
    for name, value in captured.headers:
        lower = name.lower()
        if lower == "set-cookie":
            set_cookie = True
        elif lower == "cache-control":
            cache_control |= parse_cache_control(value)
            if zero_lifetime(value):
                cache_control.add("no-cache")
            lifetime = shared_lifetime(value, lifetime)
        elif lower == "vary":
            vary.extend(parse_list_header(value))
        elif lower == "content-encoding":
            encoding = value.strip().lower()
        elif lower == "x-site-page-type":
            page_types.update(parse_list_header(value))
    try:
        status = int(captured.status.split(" ", 1)[0])
    except ValueError:
        status = 500
    return ResponseFacts(
        status=status,
        has_set_cookie=set_cookie,
        cache_control=frozenset(cache_control),
        vary=tuple(dict.fromkeys(vary)),
        body_length=captured.size,
        content_encoding=encoding,
        page_types=frozenset(page_types),
        lifetime=lifetime,
    )


def shared_lifetime(value: str, default: int | None = None) -> int | None:
    """The seconds of a Cache-Control value's ``s-maxage`` (the lifetime it gives shared
    caches such as this one), or ``default`` when it has none that is a number."""
    for part in value.split(","):
        name, _, argument = part.strip().partition("=")
        if name.strip().lower() == "s-maxage":
            seconds = argument.strip().strip('"')
            if seconds.isascii() and seconds.isdigit():
                return int(seconds)
    return default


def zero_lifetime(value: str) -> bool:
    """Whether a Cache-Control value gives shared caches no lifetime (``s-maxage=0``, or
    ``max-age=0`` without ``s-maxage``)."""
    directives = {}
    for part in value.split(","):
        name, _, argument = part.strip().partition("=")
        directives[name.strip().lower()] = argument.strip().strip('"')
    lifetime = directives.get("s-maxage", directives.get("max-age"))
    return lifetime is not None and lifetime.isascii() and lifetime.isdigit() and int(lifetime) == 0
