"""`sitecache.request_arrival`: when a request has arrived, so a thread can take it (#15
point 11). Each row is what a client sent and where its request stands after each piece."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitecache.request_arrival import Arrival, ArrivingRequest

HEAD, BODY, READY, STREAM = Arrival.HEAD, Arrival.BODY, Arrival.READY, Arrival.STREAM
GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


def post(length: int, extra: bytes = b"") -> bytes:
    return b"POST /f HTTP/1.1\r\nHost: x\r\n" + extra + b"Content-Length: %d\r\n\r\n" % length


CASES: list[tuple[str, list[bytes], list[Arrival]]] = [
    ("nothing yet", [b""], [HEAD]),
    ("a whole GET at once", [GET], [READY]),
    ("a GET trickled", [b"GET / HT", b"TP/1.1\r\nHost: x\r", b"\n", b"\r", b"\n"],
     [HEAD, HEAD, HEAD, HEAD, READY]),
    ("a head without fields", [b"GET / HTTP/1.0\r\n\r\n"], [READY]),
    ("one empty line before the request", [b"\r\n", GET], [HEAD, READY]),
    ("an empty line split", [b"\r", b"\n" + GET], [HEAD, READY]),
    ("a small body after its head", [post(5), b"ab", b"cde"], [BODY, BODY, READY]),
    ("a small body with the head", [post(5) + b"abcde"], [READY]),
    ("more than the body (pipelined)", [post(2) + b"ab" + GET], [READY]),
    ("Content-Length: 0", [post(0)], [READY]),
    ("a body over the limit", [post(16_385)], [STREAM]),
    ("a body just at the limit", [post(16_384)], [BODY]),
    ("a chunked body", [b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"], [STREAM]),
    ("Expect: 100-continue", [post(10, b"Expect: 100-continue\r\n")], [STREAM]),
    ("header names in any case", [b"POST / HTTP/1.1\r\ncOnTeNt-LeNgTh: 3\r\n\r\n", b"abc"],
     [BODY, READY]),
    ("two Content-Lengths", [post(3, b"Content-Length: 3\r\n")], [STREAM]),
    ("a Content-Length that is not a number", [post(0).replace(b"0", b"-1")], [STREAM]),
    ("a Content-Length with spaces around", [b"POST / HTTP/1.1\r\nContent-Length:  2 \r\n\r\n"],
     [BODY]),
    ("a bare LF in the head", [b"GET / HTTP/1.1\nHost: x\n\n"], [READY]),
    ("a bare LF first", [b"\n"], [READY]),
    ("a bare LF after a trickled CR", [b"GET / HTTP/1.1\r", b"\nHost: x\n"], [HEAD, READY]),
    ("a head over the limit", [b"GET / HTTP/1.1\r\n" + b"X-a: b\r\n" * 4200], [STREAM]),
    ("a bare LF in the body is the body's", [post(3) + b"a\nb"], [READY]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("chunks", "states"),
    [(chunks, states) for _, chunks, states in CASES],
    ids=[name for name, _, _ in CASES],
)
def test_a_request_is_ready_once_a_thread_need_not_wait_for_it(
    chunks: list[bytes], states: list[Arrival]
) -> None:
    request = ArrivingRequest()
    assert [request.feed(chunk) for chunk in chunks] == states
    assert bytes(request.data) == b"".join(chunks)


def test_read_ahead_bytes_count_from_the_start() -> None:
    assert ArrivingRequest(data=GET).state is READY
    assert ArrivingRequest(data=post(4) + b"ab").state is BODY


def test_the_limits_are_the_callers() -> None:
    assert ArrivingRequest(body_limit=4, data=post(5)).state is STREAM
    assert ArrivingRequest(head_limit=10, data=b"GET / HTTP/1.1\r\n").state is STREAM


def test_feeding_a_ready_request_changes_nothing() -> None:
    request = ArrivingRequest(data=GET)
    assert request.feed(b"GET /next HTTP/1.1\r\n") is READY


REQUESTS = st.one_of(
    st.just(GET),
    st.just(post(7) + b"1234567"),
    st.just(b"\r\n" + GET),
    st.binary(max_size=300),
    st.lists(
        st.sampled_from([b"GET / HTTP/1.1", b"\r\n", b"\r", b"\n", b"Content-Length: 4",
                         b"Transfer-Encoding: chunked", b"x", b"\r\n\r\n", b"abcd"]),
        max_size=30,
    ).map(b"".join),
)  # fmt: skip


@given(data=REQUESTS, cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=12))
def test_how_bytes_are_split_does_not_change_the_verdict(data: bytes, cuts: list[int]) -> None:
    """A trickling client gets the same verdict as one sending everything at once, and a
    request never goes back to an earlier state."""
    whole = ArrivingRequest(data=data).state
    pieces = [
        data[a:b] for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), len(data)], strict=True)
    ]
    request = ArrivingRequest()
    order = [HEAD, BODY, READY]
    seen = HEAD
    for piece in pieces:
        state = request.feed(piece)
        if state is not STREAM and seen is not STREAM:
            assert order.index(state) >= order.index(seen)
        seen = state
    if whole is READY and data.count(b"\n") != data.count(b"\r\n"):
        # A bare LF: refused as soon as it is seen, so pieces may be refused earlier still.
        assert seen is READY
    else:
        assert seen is whole
