"""Answers: a stored entry sent to a client, and unstored answers through the serve filters.

A `Prepared` entry holds everything a hit sends, built once when the entry is read: the status
line, the identity and gzip header lists, the entity tags, the age it arrived with. `send_entry`
counts the request's `sitecache.cache.outcome.Outcome` and labels the answer with it
(``Cache-Status``, naming the rule that gave the page its lifetime unless it is the ``max_age``
setting), sends ``Age`` (the age it arrived with plus the time stored, RFC 9111 §4.2.3), picks
the gzip copy for a client that accepts it (`accepts_gzip`), answers a conditional GET with 304
(RFC 9110 §13.1: ``If-None-Match`` first, else ``If-Modified-Since``; 2xx entries only), one
byte range of a 200 with 206 (`sitecache.cache.ranges`), and sends no body to HEAD. Serve
filters (companion plugins) may change an HTML body as it is sent; a changed body is sent
without gzip, ``ETag``, ``Last-Modified`` or 304, since it differs per request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any

from sitecache.cache.capture import Captured, StartResponse
from sitecache.cache.entry import CacheEntry
from sitecache.cache.outcome import Outcome
from sitecache.cache.ranges import if_range_matches, single_range

__all__ = [
    "Prepared",
    "ServeFilter",
    "accepts_gzip",
    "coding_etag",
    "etag_matches",
    "is_html",
    "not_modified",
    "send_captured",
    "send_entry",
    "status_line",
]

#: ``(body, environ) -> body``: changes an HTML page as it is sent (companion plugins).
ServeFilter = Callable[[bytes, Mapping[str, Any]], bytes]

#: Headers a 304 repeats from the entry (RFC 9110 §15.4.5), beside ``ETag``.
_NOT_MODIFIED_HEADERS = frozenset(
    {"cache-control", "content-location", "date", "expires", "vary", "last-modified"}
)


class Prepared:
    """An entry ready to be sent: status line, header lists and bodies built once.

    A pointer entry (``Vary``) has an empty ``status_line``.
    """

    __slots__ = (
        "body",
        "born",
        "created",
        "entry",
        "etag",
        "expires",
        "gzip_body",
        "gzip_etag",
        "gzip_headers",
        "identity_headers",
        "last_modified",
        "rule",
        "status_line",
        "vary",
        "weight",
    )

    def __init__(self, entry: CacheEntry) -> None:
        self.entry = entry
        self.vary = entry.vary
        self.created = entry.created
        self.expires = entry.expires
        #: when its age was zero: ``Age`` is the time since (the age it arrived with plus the
        #: time stored, RFC 9111 §4.2.3)
        self.born = entry.created - entry.fresh.age
        #: the lifetime rule ``Cache-Status`` names (``""`` for the ``max_age`` setting)
        self.rule = "" if entry.fresh.rule == "max_age" else entry.fresh.rule
        self.body = entry.body
        self.gzip_body = entry.gzip_body
        self.weight = len(entry.body) + len(entry.gzip_body) + 512
        self.status_line = status_line(entry.status) if entry.status else ""
        self.etag = entry.etag
        self.gzip_etag = coding_etag(entry.etag, "gzip") if entry.etag else ""
        self.last_modified = entry.extra.get("last_modified", entry.created)
        headers = list(entry.headers)
        self.identity_headers = [
            *headers,
            ("Content-Length", str(len(entry.body))),
        ]
        if self.etag:
            self.identity_headers.append(("ETag", self.etag))
        self.gzip_headers = [
            *headers,
            ("Content-Encoding", "gzip"),
            ("Content-Length", str(len(entry.gzip_body))),
        ]
        if self.gzip_etag:
            self.gzip_headers.append(("ETag", self.gzip_etag))


def coding_etag(etag: str, coding: str) -> str:
    """The entity tag of the ``coding`` copy of a representation tagged ``etag`` (a weak tag
    stays weak): ``"abc"`` gives ``"abc-gzip"``."""
    if etag.endswith('"') and len(etag) > 1:
        return f'{etag[:-1]}-{coding}"'
    return f"{etag}-{coding}"


def status_line(status: int) -> str:
    """``"200 OK"`` for 200; ``"<status> Unknown"`` for a code HTTP does not name."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown"


def accepts_gzip(value: str) -> bool:
    """Whether an ``Accept-Encoding`` value accepts gzip (``q=0`` refuses it)."""
    if "gzip" not in value and "*" not in value:
        return False
    for item in value.split(","):
        name, _, params = item.partition(";")
        if name.strip().lower() not in ("gzip", "x-gzip", "*"):
            continue
        for param in params.split(";"):
            key, _, number = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    return float(number) > 0
                except ValueError:
                    return False
        return True
    return False


def etag_matches(header: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` value names ``etag`` (weak comparison; ``*`` matches any
    entity tag, no tag matches nothing)."""
    if not etag:
        return False
    if header.strip() == "*":
        return True
    candidates = {item.strip().removeprefix("W/") for item in header.split(",")}
    return etag.removeprefix("W/") in candidates


def not_modified(environ: Mapping[str, Any], prepared: Prepared, use_gzip: bool) -> bool:
    """Whether the client's copy of the representation it would be sent is current."""
    if not prepared.status_line.startswith("2"):  # RFC 9110 §13.2.1: preconditions on 2xx only
        return False
    if_none_match = environ.get("HTTP_IF_NONE_MATCH")
    if if_none_match:
        return etag_matches(if_none_match, prepared.gzip_etag if use_gzip else prepared.etag)
    since = environ.get("HTTP_IF_MODIFIED_SINCE")
    if since:
        try:
            return int(prepared.last_modified) <= parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError, OverflowError):
            return False
    return False


def is_html(headers: Iterable[tuple[str, str]]) -> bool:
    """Whether ``headers`` name an HTML (or XHTML) body."""
    return any(
        name.lower() == "content-type"
        and value.lower().startswith(("text/html", "application/xhtml"))
        for name, value in headers
    )


def send_entry(
    environ: Mapping[str, Any],
    start_response: StartResponse,
    prepared: Prepared,
    now: float,
    outcome: Outcome,
    count: Callable[[str], object],
    serve_filters: list[ServeFilter],
    use_304: bool,
) -> Iterable[bytes]:
    """Count ``outcome`` through ``count`` and send ``prepared`` with ``Age`` and the
    outcome's ``Cache-Status``: through the serve filters when there are some and it is HTML,
    as 304 when the client's copy is current and ``use_304``, gzip when the client accepts it;
    no body to HEAD."""
    outcome.count(count)
    expires = prepared.expires
    extra = [
        ("Age", str(max(0, int(now - prepared.born)))),
        ("Cache-Status", outcome.header(int(expires - now) if expires else None, prepared.rule)),
    ]
    accept_encoding = environ.get("HTTP_ACCEPT_ENCODING", "")
    use_gzip = bool(prepared.gzip_body and accept_encoding) and accepts_gzip(accept_encoding)
    if serve_filters and not prepared.entry.encoded and is_html(prepared.identity_headers):
        body = _filtered(prepared.body, environ, serve_filters)
        if body is not prepared.body:
            return _send_changed(environ, start_response, prepared, body, extra)
    # PERF: most requests are not conditional and ask for no range; they skip the calls.
    conditional = "HTTP_IF_NONE_MATCH" in environ or "HTTP_IF_MODIFIED_SINCE" in environ
    if use_304 and conditional and not_modified(environ, prepared, use_gzip):
        return _send_not_modified(start_response, prepared, use_gzip, extra)
    if "HTTP_RANGE" in environ and prepared.status_line.startswith("200"):
        part = _requested_range(environ, prepared)
        if part is not None:
            return _send_range(environ, start_response, prepared, part, extra)
    if use_gzip:
        start_response(prepared.status_line, prepared.gzip_headers + extra)
        body = prepared.gzip_body
    else:
        start_response(prepared.status_line, prepared.identity_headers + extra)
        body = prepared.body
    if environ.get("REQUEST_METHOD") == "HEAD":
        return []
    return [body]


def _requested_range(environ: Mapping[str, Any], prepared: Prepared) -> tuple[int, int] | None:
    """The one byte range of the stored body a GET asks for, or ``None`` (send it whole)."""
    if environ.get("REQUEST_METHOD", "GET") not in ("GET", "HEAD"):
        return None
    if_range = environ.get("HTTP_IF_RANGE")
    if if_range is not None:
        modified = next(
            (value for name, value in prepared.identity_headers if name.lower() == "last-modified"),
            "",
        )
        if not if_range_matches(str(if_range), prepared.etag, modified):
            return None
    return single_range(str(environ["HTTP_RANGE"]), len(prepared.body))


def _send_range(
    environ: Mapping[str, Any],
    start_response: StartResponse,
    prepared: Prepared,
    part: tuple[int, int],
    extra: list[tuple[str, str]],
) -> Iterable[bytes]:
    """Send bytes ``part`` (first, last) of the stored body as ``206 Partial Content``."""
    first, last = part
    headers = [
        (name, value)
        for name, value in prepared.identity_headers
        if name.lower() != "content-length"
    ]
    headers += [
        ("Content-Range", f"bytes {first}-{last}/{len(prepared.body)}"),
        ("Content-Length", str(last - first + 1)),
    ]
    start_response("206 Partial Content", headers + extra)
    if environ.get("REQUEST_METHOD") == "HEAD":
        return []
    return [prepared.body[first : last + 1]]


def send_captured(
    environ: Mapping[str, Any],
    start_response: StartResponse,
    captured: Captured,
    headers: list[tuple[str, str]],
    serve_filters: list[ServeFilter],
) -> Iterable[bytes]:
    """Send an unstored answer with ``headers``, through the serve filters when it is a whole
    HTML page (a changed body loses its ``ETag`` and gets its own ``Content-Length``)."""
    if not serve_filters or captured.overflow is not None or not is_html(headers):
        start_response(captured.status, headers)
        return captured.body_iterable()
    captured.close()
    original = captured.body()
    body = _filtered(original, environ, serve_filters)
    if body is not original:
        headers = [(name, value) for name, value in headers
                   if name.lower() not in ("content-length", "etag")]  # fmt: skip
        headers.append(("Content-Length", str(len(body))))
    start_response(captured.status, headers)
    return [body]


def _send_changed(
    environ: Mapping[str, Any],
    start_response: StartResponse,
    prepared: Prepared,
    body: bytes,
    extra: list[tuple[str, str]],
) -> Iterable[bytes]:
    """Send the identity headers of ``prepared`` with ``body`` (a serve filter changed it):
    no validators, since the body differs per request."""
    headers = [
        (name, value)
        for name, value in prepared.identity_headers
        if name.lower() not in ("content-length", "etag", "last-modified")
    ]
    start_response(prepared.status_line, [*headers, ("Content-Length", str(len(body))), *extra])
    return [] if environ.get("REQUEST_METHOD") == "HEAD" else [body]


def _send_not_modified(
    start_response: StartResponse,
    prepared: Prepared,
    use_gzip: bool,
    extra: list[tuple[str, str]],
) -> Iterable[bytes]:
    """Send 304 for the representation the client would get (its entity tag)."""
    etag = prepared.gzip_etag if use_gzip else prepared.etag
    headers = [
        (name, value)
        for name, value in prepared.identity_headers
        if name.lower() in _NOT_MODIFIED_HEADERS
    ]
    if etag:
        headers.append(("ETag", etag))
    start_response("304 Not Modified", headers + extra)
    return []


def _filtered(
    body: bytes, environ: Mapping[str, Any], serve_filters: Iterable[ServeFilter]
) -> bytes:
    """``body`` through every serve filter in turn (the same object when none changed it)."""
    for serve_filter in serve_filters:
        body = serve_filter(body, environ)
    return body
