"""Answers: a stored entry sent to a client, and unstored answers through the serve filters.

A `Prepared` entry holds everything a hit sends, built once when the entry is read: the status
line, the header lists of the identity body and of each compressed copy, the entity tags, the
age it arrived with. `send_entry` counts the request's `sitecache.cache.outcome.Outcome` and
labels the answer with it (``Cache-Status``, naming the rule that gave the page its lifetime
unless it is the ``max_age`` setting), sends ``Age`` (the age it arrived with plus the time
stored, RFC 9111 §4.2.3), picks the compressed copy a client accepts best
(`sitecache.cache.codings.choose_coding`: brotli or gzip, among the copies made; the caller may
have one made first), answers a conditional GET with 304 (RFC 9110 §13.1: ``If-None-Match``
first, else ``If-Modified-Since``; 2xx entries only), one byte range of a 200 with 206
(`sitecache.cache.ranges`), and sends no body to HEAD. Serve filters (companion plugins) may
change an HTML body as it is sent; a changed body is sent uncompressed, without ``ETag``,
``Last-Modified`` or 304, since it differs per request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any

from sitecache.cache.capture import Captured, StartResponse
from sitecache.cache.codings import CODINGS, IDENTITY, choose_coding, coding_etag
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

    A pointer entry (``Vary``) has an empty ``status_line``. ``copies`` holds the compressed
    copies made so far, ``coding -> (body, headers)``; ``offered`` the codings it may be sent
    in (those of a compressible entry, `sitecache.cache.codings.CODINGS`, else those it has).
    """

    __slots__ = (
        "body",
        "born",
        "copies",
        "created",
        "entry",
        "etag",
        "expires",
        "identity_headers",
        "last_modified",
        "offered",
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
        self.weight = len(entry.body) + 512
        self.status_line = status_line(entry.status) if entry.status else ""
        self.etag = entry.etag
        self.last_modified = entry.extra.get("last_modified", entry.created)
        self.identity_headers = [
            *entry.headers,
            ("Content-Length", str(len(entry.body))),
        ]
        if self.etag:
            self.identity_headers.append(("ETag", self.etag))
        self.copies: dict[str, tuple[bytes, list[tuple[str, str]]]] = {}
        for coding, data in (("gzip", entry.gzip_body), *entry.codings):
            if data:
                self.add_copy(coding, data)
        self.offered: tuple[str, ...] = (
            CODINGS if entry.compressible and not entry.encoded else tuple(self.copies)
        )

    def add_copy(self, coding: str, data: bytes) -> None:
        """Hold ``data`` as the ``coding`` copy of the body (with its headers and tag)."""
        headers = [
            *self.entry.headers,
            ("Content-Encoding", coding),
            ("Content-Length", str(len(data))),
        ]
        if self.etag:
            headers.append(("ETag", coding_etag(self.etag, coding)))
        self.copies[coding] = (data, headers)
        self.weight += len(data)

    @property
    def gzip_etag(self) -> str:
        """The entity tag of the gzip copy (``""`` without a tag of its own)."""
        return coding_etag(self.etag, "gzip") if self.etag else ""

    @property
    def gzip_body(self) -> bytes:
        """The gzip copy, or ``b""`` when none is made yet."""
        copy = self.copies.get("gzip")
        return copy[0] if copy is not None else b""

    def coding_for(self, accept_encoding: str) -> str:
        """The coding a client with this ``Accept-Encoding`` is sent among the copies made
        (`IDENTITY` when none it accepts is)."""
        if not self.copies or not accept_encoding:
            return IDENTITY
        return choose_coding(accept_encoding, tuple(c for c in CODINGS if c in self.copies))


def status_line(status: int) -> str:
    """``"200 OK"`` for 200; ``"<status> Unknown"`` for a code HTTP does not name."""
    line = _STATUS_LINES.get(status)
    if line is None:
        try:
            line = f"{status} {HTTPStatus(status).phrase}"
        except ValueError:
            line = f"{status} Unknown"
        if len(_STATUS_LINES) < 1024:
            _STATUS_LINES[status] = line
    return line


#: status code -> status line (`status_line`), made once per code
_STATUS_LINES: dict[int, str] = {}


def accepts_gzip(value: str) -> bool:
    """Whether an ``Accept-Encoding`` value is sent gzip rather than the identity body
    (`choose_coding`: ``q=0`` refuses it, a higher ``identity`` quality prefers the body)."""
    return choose_coding(value, ("gzip",)) == "gzip"


def etag_matches(header: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` value names ``etag`` (weak comparison; ``*`` matches any
    entity tag, no tag matches nothing)."""
    if not etag:
        return False
    if header.strip() == "*":
        return True
    candidates = {item.strip().removeprefix("W/") for item in header.split(",")}
    return etag.removeprefix("W/") in candidates


def not_modified(environ: Mapping[str, Any], prepared: Prepared, coding: str) -> bool:
    """Whether the client's copy of the representation it would be sent (the identity body,
    or the ``coding`` copy) is current."""
    if not prepared.status_line.startswith("2"):  # RFC 9110 §13.2.1: preconditions on 2xx only
        return False
    if_none_match = environ.get("HTTP_IF_NONE_MATCH")
    if if_none_match:
        return etag_matches(if_none_match, _etag_of(prepared, coding))
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
    coding: str | None = None,
) -> Iterable[bytes]:
    """Count ``outcome`` through ``count`` and send ``prepared`` with ``Age`` and the
    outcome's ``Cache-Status``: through the serve filters when there are some and it is HTML,
    as 304 when the client's copy is current and ``use_304``, in ``coding`` (a copy the caller
    made sure of) or else the copy the client accepts best among those made; no body to
    HEAD."""
    outcome.count(count)
    expires = prepared.expires
    extra = [
        ("Age", str(max(0, int(now - prepared.born)))),
        ("Cache-Status", outcome.header(int(expires - now) if expires else None, prepared.rule)),
    ]
    if coding is None or coding not in prepared.copies:
        coding = prepared.coding_for(environ.get("HTTP_ACCEPT_ENCODING", ""))
    if serve_filters and not prepared.entry.encoded and is_html(prepared.identity_headers):
        body = _filtered(prepared.body, environ, serve_filters)
        if body is not prepared.body:
            return _send_changed(environ, start_response, prepared, body, extra)
    # PERF: most requests are not conditional and ask for no range; they skip the calls.
    conditional = "HTTP_IF_NONE_MATCH" in environ or "HTTP_IF_MODIFIED_SINCE" in environ
    if use_304 and conditional and not_modified(environ, prepared, coding):
        return _send_not_modified(start_response, prepared, coding, extra)
    if "HTTP_RANGE" in environ and prepared.status_line.startswith("200"):
        part = _requested_range(environ, prepared)
        if part is not None:
            return _send_range(environ, start_response, prepared, part, extra)
    if coding != IDENTITY:
        body, headers = prepared.copies[coding]
        start_response(prepared.status_line, headers + extra)
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
    coding: str,
    extra: list[tuple[str, str]],
) -> Iterable[bytes]:
    """Send 304 for the representation the client would get (its entity tag)."""
    etag = _etag_of(prepared, coding)
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


def _etag_of(prepared: Prepared, coding: str) -> str:
    """The entity tag of the ``coding`` copy of ``prepared`` (its own for `IDENTITY`)."""
    if coding == IDENTITY or not prepared.etag:
        return prepared.etag
    return coding_etag(prepared.etag, coding)
