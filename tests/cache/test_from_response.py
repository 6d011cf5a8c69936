"""From the application's answer to a stored entry: what is captured, what the response
guards read of it (`response_facts`), and what `CacheEntry.from_response` keeps."""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import brotli
import pytest

from sitecache.cache.capture import call_app, response_facts
from sitecache.cache.entry import (
    DEFLATE,
    GZIP_LEVEL,
    MIN_GZIP_SIZE,
    PREFIX_SIZE,
    UNSTORED_HEADERS,
    CacheEntry,
    body_etag,
    coded_copy,
    decode_entry,
    encode_entry,
)
from sitecache.cache.vary import keyed_vary, pointer_entry, vary_values

NOW = 1_800_000_000.0
BODY = b"<p>" + b"words " * 100 + b"</p>"


def build(headers: list[tuple[str, str]], body: bytes = BODY, **options: Any) -> CacheEntry:
    values: dict[str, Any] = {"vary": (), "max_age": 3600, "compress": True, **options}
    return CacheEntry.from_response(
        200, headers, body, url="http://example.org/a/", host="example.org", path="/a/",
        variant="", now=NOW, **values,
    )  # fmt: skip


def test_per_visitor_and_per_connection_headers_are_never_stored() -> None:
    headers = [(name.title(), "x") for name in sorted(UNSTORED_HEADERS)]
    entry = build([("Content-Type", "text/html"), ("Content-Language", "fr"), *headers])
    names = {name.lower() for name, _ in entry.headers}
    assert not names & UNSTORED_HEADERS
    assert {"content-type", "content-language", "last-modified"} <= names


def test_tags_come_once_each_from_every_cache_tag_header() -> None:
    entry = build([("Cache-Tag", "post-1, home"), ("Cache-Tag", "home,,term-3")])
    assert entry.tags == ("post-1", "home", "term-3")


def test_an_entity_tag_is_kept_as_sent_and_anything_else_is_replaced_by_a_hash() -> None:
    assert build([("ETag", '"v1"')]).etag == '"v1"'
    assert build([("ETag", 'W/"v1"')]).etag == 'W/"v1"'  # a weak tag stays weak
    made = build([("ETag", "v1")]).etag
    assert made.startswith('"')
    assert made.endswith('"')
    assert made != '"v1"'
    assert build([]).etag == made  # the same body, the same tag
    assert build([], body=BODY + b"!").etag != made
    assert all(name != "ETag" for name, _ in build([("ETag", '"v1"')]).headers)


def test_last_modified_is_read_from_the_response_or_set_to_the_store_time() -> None:
    given = build([("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")])
    assert given.extra["last_modified"] == 1445412480.0
    assert ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT") in given.headers
    made = build([("Last-Modified", "yesterday")])
    assert made.extra["last_modified"] == NOW
    assert [value for name, value in made.headers if name == "Last-Modified"] == [
        "Fri, 15 Jan 2027 08:00:00 GMT"
    ]


@pytest.mark.parametrize(
    ("content_type", "size", "compress", "zipped"),
    [
        ("text/html; charset=utf-8", MIN_GZIP_SIZE, True, True),
        ("application/rss+xml", 1000, True, True),
        ("image/svg+xml", 1000, True, True),
        ("text/html", MIN_GZIP_SIZE - 1, True, False),
        ("image/png", 1000, True, False),
        ("text/html", 1000, False, False),
    ],
)
def test_compressible_bodies_are_marked_and_no_copy_is_made_on_the_miss(
    content_type: str, size: int, compress: bool, zipped: bool
) -> None:
    # #32: the miss makes no compressed copy; the first hit asking for one does.
    body = b"a" * size
    entry = build([("Content-Type", content_type)], body=body, compress=compress)
    assert entry.compressible is zipped
    assert entry.gzip_body == b""
    assert entry.codings == ()
    assert (("Vary", "Accept-Encoding") in entry.headers) is zipped
    assert decode_entry(encode_entry(entry)) == entry  # the mark is stored


def test_the_gzip_copy_is_made_for_speed_and_is_the_same_bytes_every_time() -> None:
    # #18: level 1, no file name, mtime 0: a copy costs little, and two processes making one
    # page's copy make the same bytes. ISA-L makes it where installed (standard gzip either way).
    entry = build([("Content-Type", "text/html")])
    copied = entry.with_copy("gzip", coded_copy("gzip", entry.body))
    assert GZIP_LEVEL == 1
    assert DEFLATE in {"isal_zlib", "zlib"}
    assert gzip.decompress(copied.gzip_body) == BODY
    assert zlib.decompress(copied.gzip_body, 47) == BODY  # any zlib reader
    assert copied.gzip_body[:4] == b"\x1f\x8b\x08\x00"  # gzip, deflate, no name
    assert copied.gzip_body[4:8] == b"\x00\x00\x00\x00"  # mtime 0
    assert coded_copy("gzip", BODY) == copied.gzip_body


def test_copies_in_both_codings_read_back_and_keep_the_entrys_times() -> None:
    entry = build([("Content-Type", "text/html")])
    copied = entry.with_copy("gzip", coded_copy("gzip", BODY))
    copied = copied.with_copy("br", coded_copy("br", BODY))
    assert brotli.decompress(copied.copy("br")) == BODY
    assert copied.times == entry.times
    back = decode_entry(encode_entry(copied))
    assert back == copied
    assert back is not None
    assert back.copy("br") == copied.copy("br")
    assert copied.info("k").compressed_size == len(copied.gzip_body) + len(copied.copy("br"))
    with pytest.raises(ValueError, match="zstd"):
        coded_copy("zstd", BODY)


def test_the_entrys_own_etag_changes_with_the_body_and_with_each_store() -> None:
    first = body_etag(BODY, 1000.0)
    assert first.startswith('"')
    assert first.endswith('"')
    assert body_etag(BODY, 1000.0) == first  # a function of the bytes and the time
    assert body_etag(BODY + b" ", 1000.0) != first
    assert body_etag(BODY.replace(b"words", b"wordz", 1), 1000.0) != first  # same length
    assert body_etag(BODY, 1000.000001) != first  # another render, another tag


def test_the_entry_checksum_is_zlibs_crc32_whichever_deflate_made_it() -> None:
    # Entries written by a process with ISA-L and one without read each other's bytes.
    entry = build([("Content-Type", "text/html")])
    data = encode_entry(entry)
    checksum = struct.unpack_from(">I", data, PREFIX_SIZE - 4)[0]
    assert checksum == zlib.crc32(data[PREFIX_SIZE:])
    assert decode_entry(data) == entry
    torn = data[:-1] + bytes([data[-1] ^ 1])
    assert decode_entry(torn) is None


def test_the_vary_header_names_the_keyed_headers_and_accept_encoding_once() -> None:
    entry = build([("Content-Type", "text/html"), ("Vary", "whatever")],
                  vary=("accept-language", "accept-encoding"))  # fmt: skip
    assert [value for name, value in entry.headers if name == "Vary"] == [
        "Accept-Language, Accept-Encoding"
    ]
    assert keyed_vary(("accept-language", "accept-encoding")) == ("accept-language",)


def test_max_age_zero_keeps_an_entry_fresh_until_purged() -> None:
    assert build([], max_age=0).expires == 0.0
    assert build([], max_age=60).expires == NOW + 60


def test_a_pointer_names_the_vary_headers_and_holds_nothing_else() -> None:
    entry = build([("Content-Type", "text/html")])
    pointer = pointer_entry(entry, ("accept-language",))
    assert pointer.is_pointer
    assert (pointer.url, pointer.expires, pointer.vary) == (entry.url, entry.expires,
                                                            ("accept-language",))  # fmt: skip
    assert pointer.body == pointer.gzip_body == b""
    assert vary_values(
        {"HTTP_ACCEPT_LANGUAGE": " fr ", "CONTENT_TYPE": "text/plain"},
        ("accept-language", "content-type", "x-missing"),
    ) == ["fr", "text/plain", None]


def app_answering(headers: list[tuple[str, str]], status: str = "200 OK") -> Any:
    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response(status, headers)
        return [b"page"]

    return app


def test_response_facts_read_the_headers_the_guards_need() -> None:
    captured = call_app(app_answering([
        ("Set-Cookie", "a=1"), ("Vary", "Accept-Language, accept-language"),
        ("Content-Encoding", " GZIP "), ("X-Site-Page-Type", "home, frontpage"),
        ("Cache-Control", "private, max-age=60"),
    ]), {}, 1000)  # fmt: skip
    facts = response_facts(captured)
    assert facts.status == 200
    assert facts.has_set_cookie
    assert facts.vary == ("accept-language",)
    assert facts.content_encoding == "gzip"
    assert facts.page_types == {"home", "frontpage"}
    assert facts.cache_control == {"private", "max-age"}
    assert facts.body_length == 4


def test_an_unreadable_status_line_is_a_500_for_the_guards() -> None:
    captured = call_app(app_answering([], status="OK"), {}, 1000)
    assert response_facts(captured).status == 500


def test_a_body_past_the_limit_stays_in_the_app_iterator_and_is_closed_once_sent() -> None:
    closed: list[bool] = []

    class Body:
        def __iter__(self) -> Iterator[bytes]:
            yield from (b"12345", b"67890", b"abc")

        def close(self) -> None:
            closed.append(True)

    def app(environ: dict[str, Any], start_response: Any) -> Body:
        start_response("200 OK", [])
        return Body()

    captured = call_app(app, {}, 8)
    assert captured.overflow is not None
    assert captured.size == 10
    assert closed == []
    assert b"".join(captured.body_iterable()) == b"1234567890abc"
    assert closed == [True]


def test_an_app_that_fails_while_streaming_is_closed_and_its_error_raised() -> None:
    closed: list[bool] = []

    class Body:
        def __iter__(self) -> Iterator[bytes]:
            yield b"part"
            raise RuntimeError("template error")

        def close(self) -> None:
            closed.append(True)

    def app(environ: dict[str, Any], start_response: Any) -> Body:
        start_response("200 OK", [])
        return Body()

    with pytest.raises(RuntimeError, match="template error"):
        call_app(app, {}, 1000)
    assert closed == [True]
