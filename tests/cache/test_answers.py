"""Sending a stored entry: gzip and brotli negotiation, 304 rules, HEAD, the serve filters;
and unstored answers through the serve filters."""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from email.utils import formatdate
from typing import Any

import brotli
import pytest

from sitecache.cache.answers import (
    Prepared,
    accepts_gzip,
    etag_matches,
    send_captured,
    send_entry,
    status_line,
)
from sitecache.cache.capture import Captured
from sitecache.cache.codings import coded_copy
from sitecache.cache.entry import CacheEntry
from sitecache.cache.outcome import FRESH_HIT

NOW = 1_800_000_000.0
BODY = b"<html><body>" + b"<p>Hello, reader.</p>" * 40 + b"</body></html>"


def entry(status: int = 200, content_type: str = "text/html; charset=utf-8") -> CacheEntry:
    """A stored page with its gzip copy made (by a hit that asked for it)."""
    made = CacheEntry.from_response(
        status,
        [("Content-Type", content_type), ("Cache-Control", "max-age=60")],
        BODY,
        url="http://example.org/",
        host="example.org",
        path="/",
        variant="",
        vary=(),
        now=NOW - 100,
        max_age=3600,
        compress=True,
    )
    return made.with_copy("gzip", coded_copy("gzip", BODY))


class Answer:
    """What `send_entry` / `send_captured` gave the server."""

    def __init__(self) -> None:
        self.status = ""
        self.headers: dict[str, str] = {}
        self.counted: list[str] = []

    def start_response(self, status: str, headers: list[tuple[str, str]]) -> None:
        self.status = status
        self.headers = dict(headers)


def send(
    prepared: Prepared,
    *,
    use_304: bool = True,
    filters: list[Any] | None = None,
    **environ: str,
) -> tuple[Answer, bytes]:
    answer = Answer()
    environ.setdefault("REQUEST_METHOD", "GET")
    body = send_entry(environ, answer.start_response, prepared, NOW, FRESH_HIT,
                      answer.counted.append, filters or [], use_304)  # fmt: skip
    return answer, b"".join(body)


# (Accept-Encoding, accepts gzip)
ACCEPT_ENCODING_CASES = [
    ("gzip", True),
    ("gzip, deflate, br", True),
    ("x-gzip", True),
    ("*", True),
    ("gzip;q=0.5", True),
    ("deflate, *;q=0.1", True),
    ("gzip;q=0", False),
    ("gzip;q=0.0, identity", False),
    ("gzip;q=abc", False),
    ("deflate, br", False),
    ("", False),
    ("identity", False),
]


@pytest.mark.parametrize(("value", "accepted"), ACCEPT_ENCODING_CASES)
def test_accept_encoding_decides_the_gzip_copy(value: str, accepted: bool) -> None:
    assert accepts_gzip(value) is accepted
    answer, body = send(Prepared(entry()), HTTP_ACCEPT_ENCODING=value)
    assert (answer.headers.get("Content-Encoding") == "gzip") is accepted
    assert (gzip.decompress(body) if accepted else body) == BODY


# (If-None-Match, entity tag, matches)
ETAG_CASES = [
    ('"a"', '"a"', True),
    ('W/"a"', '"a"', True),
    ('"b", "a"', '"a"', True),
    ("*", '"a"', True),
    ('"b"', '"a"', False),
    ("*", "", False),
    ('"a"', "", False),
]


def test_the_best_copy_made_is_sent_and_each_coding_has_its_own_tag() -> None:
    made = entry()
    both = Prepared(made.with_copy("br", coded_copy("br", BODY)))
    answer, body = send(both, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert answer.headers["Content-Encoding"] == "br"
    assert brotli.decompress(body) == BODY
    assert answer.headers["Content-Length"] == str(len(body))
    assert answer.headers["ETag"] == both.etag[:-1] + '-br"'
    answer, body = send(both, HTTP_ACCEPT_ENCODING="br;q=0.5, gzip")
    assert answer.headers["Content-Encoding"] == "gzip"
    answer, _ = send(both, HTTP_IF_NONE_MATCH=both.etag[:-1] + '-br"', HTTP_ACCEPT_ENCODING="br")
    assert answer.status == "304 Not Modified"
    # Only gzip made yet: a brotli client that also takes gzip gets gzip, one that takes only
    # brotli gets the identity body (the hit path makes the copy first: see test_middleware).
    answer, _ = send(Prepared(made), HTTP_ACCEPT_ENCODING="br, gzip;q=0.5")
    assert answer.headers["Content-Encoding"] == "gzip"
    answer, body = send(Prepared(made), HTTP_ACCEPT_ENCODING="br")
    assert "Content-Encoding" not in answer.headers
    assert body == BODY


@pytest.mark.parametrize(("header", "etag", "matches"), ETAG_CASES)
def test_if_none_match_is_a_weak_comparison(header: str, etag: str, matches: bool) -> None:
    assert etag_matches(header, etag) is matches


def test_a_304_names_the_representation_the_client_would_get_and_repeats_its_headers() -> None:
    prepared = Prepared(entry())
    plain, _ = send(prepared, HTTP_IF_NONE_MATCH=prepared.etag)
    assert plain.status == "304 Not Modified"
    assert plain.headers["ETag"] == prepared.etag
    assert plain.headers["Cache-Control"] == "max-age=60"
    assert "Content-Length" not in plain.headers
    assert "Content-Type" not in plain.headers
    assert plain.headers["Cache-Status"] == "sitecache; hit; ttl=3500"
    assert plain.counted == ["hit"]
    # The gzip copy has its own tag: the identity tag does not validate it, and vice versa.
    zipped, body = send(prepared, HTTP_IF_NONE_MATCH=prepared.etag, HTTP_ACCEPT_ENCODING="gzip")
    assert zipped.status == "200 OK"
    assert gzip.decompress(body) == BODY
    zipped, _ = send(prepared, HTTP_IF_NONE_MATCH=prepared.gzip_etag, HTTP_ACCEPT_ENCODING="gzip")
    assert zipped.status == "304 Not Modified"
    assert zipped.headers["ETag"] == prepared.gzip_etag


def test_if_none_match_decides_before_if_modified_since() -> None:
    prepared = Prepared(entry())
    later = formatdate(NOW + 1000, usegmt=True)
    answer, _ = send(prepared, HTTP_IF_NONE_MATCH='"other"', HTTP_IF_MODIFIED_SINCE=later)
    assert answer.status == "200 OK"


@pytest.mark.parametrize(
    ("since", "status"),
    [
        (formatdate(NOW - 100, usegmt=True), "304 Not Modified"),  # the Last-Modified itself
        (formatdate(NOW, usegmt=True), "304 Not Modified"),
        (formatdate(NOW - 200, usegmt=True), "200 OK"),
        ("not a date", "200 OK"),
        ("", "200 OK"),
    ],
)
def test_if_modified_since_compares_with_the_last_modified_time(since: str, status: str) -> None:
    answer, _ = send(Prepared(entry()), HTTP_IF_MODIFIED_SINCE=since)
    assert answer.status == status


def test_only_successful_entries_answer_304_and_use_304_off_answers_in_full() -> None:
    missing = Prepared(entry(status=404))
    answer, body = send(missing, HTTP_IF_NONE_MATCH="*")
    assert answer.status == "404 Not Found"
    assert body == BODY
    prepared = Prepared(entry())
    answer, body = send(prepared, use_304=False, HTTP_IF_NONE_MATCH=prepared.etag)
    assert answer.status == "200 OK"
    assert body == BODY


def test_head_gets_the_headers_of_the_body_it_would_get_and_no_body() -> None:
    prepared = Prepared(entry())
    answer, body = send(prepared, REQUEST_METHOD="HEAD", HTTP_ACCEPT_ENCODING="gzip")
    assert body == b""
    assert answer.headers["Content-Length"] == str(len(prepared.gzip_body))
    assert answer.headers["Content-Encoding"] == "gzip"


def shout(body: bytes, environ: Mapping[str, Any]) -> bytes:
    return body.replace(b"Hello", b"HELLO")


def unchanged(body: bytes, environ: Mapping[str, Any]) -> bytes:
    return body


def test_a_serve_filter_that_changes_the_page_sends_it_without_validators_or_gzip() -> None:
    prepared = Prepared(entry())
    answer, body = send(
        prepared, filters=[shout], HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=prepared.etag
    )
    assert answer.status == "200 OK"
    assert body == BODY.replace(b"Hello", b"HELLO")
    assert answer.headers["Content-Length"] == str(len(body))
    for name in ("ETag", "Last-Modified", "Content-Encoding"):
        assert name not in answer.headers
    assert answer.headers["Cache-Status"] == "sitecache; hit; ttl=3500"
    head, head_body = send(prepared, filters=[shout], REQUEST_METHOD="HEAD")
    assert head_body == b""
    assert head.headers["Content-Length"] == str(len(body))


def test_a_serve_filter_that_changes_nothing_leaves_gzip_and_304_alone() -> None:
    prepared = Prepared(entry())
    answer, _ = send(prepared, filters=[unchanged], HTTP_IF_NONE_MATCH=prepared.etag)
    assert answer.status == "304 Not Modified"
    answer, body = send(prepared, filters=[unchanged], HTTP_ACCEPT_ENCODING="gzip")
    assert answer.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(body) == BODY


def test_serve_filters_see_only_html() -> None:
    prepared = Prepared(entry(content_type="application/json"))
    _, body = send(prepared, filters=[shout])
    assert body == BODY


def captured(headers: list[tuple[str, str]], chunks: list[bytes]) -> Captured:
    result = Captured()
    result.status = "200 OK"
    result.headers = headers
    result.chunks = chunks
    result.size = sum(len(chunk) for chunk in chunks)
    return result


def test_an_unstored_html_answer_goes_through_the_serve_filters() -> None:
    answer = Answer()
    page = captured([("Content-Type", "text/html"), ("ETag", '"x"'), ("Content-Length", "21")],
                    [b"<p>Hello, ", b"reader.</p>"])  # fmt: skip
    body = send_captured({}, answer.start_response, page, page.headers, [shout])
    assert b"".join(body) == b"<p>HELLO, reader.</p>"
    assert answer.headers == {"Content-Type": "text/html", "Content-Length": "21"}


def test_an_unstored_answer_past_the_buffer_is_streamed_unfiltered_and_closed() -> None:
    closed: list[bool] = []
    page = captured([("Content-Type", "text/html")], [b"<p>Hello, "])
    page.overflow = iter([b"reader.</p>"])
    page.close = lambda: closed.append(True)
    answer = Answer()
    body = b"".join(send_captured({}, answer.start_response, page, page.headers, [shout]))
    assert body == b"<p>Hello, reader.</p>"
    assert closed == [True]


@pytest.mark.parametrize(("status", "line"), [(200, "200 OK"), (404, "404 Not Found"),
                                               (299, "299 Unknown")])  # fmt: skip
def test_a_status_line_names_the_code(status: int, line: str) -> None:
    assert status_line(status) == line
