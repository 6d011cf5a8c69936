"""Byte ranges (RFC 9110 §14) cut from whole stored pages, as tables."""

from __future__ import annotations

import pytest

from sitecache.cache.ranges import if_range_matches, single_range
from tests.cache.conftest import PageApp
from tests.cache.test_middleware import build, get

# (Range value, representation length, the one range sent, or None: the whole)
RANGE_CASES: list[tuple[str, int, tuple[int, int] | None]] = [
    ("bytes=0-1", 11, (0, 1)),
    ("bytes=1-", 11, (1, 10)),
    ("bytes=-1", 11, (10, 10)),
    ("bytes=-50", 11, (0, 10)),
    ("bytes=5-500", 11, (5, 10)),
    ("BYTES = 2 - 3", 11, (2, 3)),
    ("bytes=11-", 11, None),  # past the end
    ("bytes=3-2", 11, None),
    ("bytes=-0", 11, None),
    ("bytes=0-1,3-4", 11, None),  # several: the whole
    ("items=0-1", 11, None),
    ("bytes=a-b", 11, None),
    ("bytes=0-1", 0, None),
]


@pytest.mark.parametrize(("value", "length", "expected"), RANGE_CASES)
def test_one_satisfiable_byte_range_is_cut_anything_else_sends_the_whole(
    value: str, length: int, expected: tuple[int, int] | None
) -> None:
    assert single_range(value, length) == expected


LAST_MODIFIED = "Sat, 01 Jan 2000 00:00:00 GMT"


@pytest.mark.parametrize(
    ("value", "etag", "matches"),
    [
        ('"v1"', '"v1"', True),
        ('"v2"', '"v1"', False),
        ('W/"v1"', 'W/"v1"', False),  # a weak tag never validates a range
        ('"v1"', 'W/"v1"', False),
        (LAST_MODIFIED, '"v1"', True),
        ("Sat, 01 Jan 2000 00:00:01 GMT", '"v1"', False),
        ("not a date", '"v1"', False),
    ],
)
def test_if_range_compares_strongly(value: str, etag: str, matches: bool) -> None:
    assert if_range_matches(value, etag, LAST_MODIFIED) is matches


def test_a_range_of_a_stored_page_is_answered_206_from_it(page_app: PageApp) -> None:
    cache = build(page_app)
    whole = get(cache, "/a/").data
    part = get(cache, "/a/", Range="bytes=6-11", Accept_Encoding="gzip")
    assert part.status_code == 206
    assert part.data == whole[6:12]
    assert part.headers["Content-Range"] == f"bytes 6-11/{len(whole)}"
    assert part.headers["Content-Length"] == "6"
    assert "Content-Encoding" not in part.headers
    assert part.headers["Cache-Status"] == "sitecache; hit; ttl=3600"
    assert page_app.calls == 1


@pytest.mark.parametrize(
    "headers",
    [
        {"Range": "bytes=0-1,4-5"},
        {"Range": "bytes=99999-"},
        {"Range": "bytes=0-1", "If-Range": '"not-this-one"'},
    ],
)
def test_a_range_it_will_not_cut_gets_the_whole_page(
    page_app: PageApp, headers: dict[str, str]
) -> None:
    cache = build(page_app)
    whole = get(cache, "/a/").data
    answer = get(cache, "/a/", **{name.replace("-", "_"): value for name, value in headers.items()})
    assert answer.status_code == 200
    assert answer.data == whole


def test_a_range_on_a_miss_goes_to_the_app_and_its_partial_answer_is_not_stored(
    page_app: PageApp,
) -> None:
    page_app.status = "206 Partial Content"
    page_app.headers += [("Content-Range", "bytes 0-9/1000"), ("Cache-Control", "max-age=60")]
    cache = build(page_app)
    answer = get(cache, "/a/", Range="bytes=0-9")
    assert answer.status_code == 206
    assert page_app.seen[-1]["HTTP_RANGE"] == "bytes=0-9"
    assert answer.headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=status"
    assert cache.engine.stats()["entries"]["total"] == 0
