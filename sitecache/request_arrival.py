"""How much of an HTTP/1.1 request has arrived: the pure core of `sitecache.serving`'s worker.

The worker reads a connection's bytes without a thread while they trickle in, and hands the
connection to a thread when the thread will not have to wait on the client: when the request
head has arrived (up to its blank line) and, for a small body of known length, the body too
(`Arrival.READY`). A request whose body the worker does not wait for (chunked, large,
``Expect: 100-continue``, odd framing) or whose head outgrows its limit goes to a thread as soon
as its head is in, to be read there (`Arrival.STREAM`). A bare LF is the parser's to refuse at
once. gunicorn's parser stays the only judge of the request: it answers or refuses it as it
always does. No I/O here.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["DEFAULT_BODY_LIMIT", "DEFAULT_HEAD_LIMIT", "Arrival", "ArrivingRequest"]

DEFAULT_HEAD_LIMIT: Final = 32 * 1024
"""Bytes of a request head read without a thread (nginx's default largest head); past it the
parser reads on in a thread, or refuses it."""
DEFAULT_BODY_LIMIT: Final = 16 * 1024
"""The largest ``Content-Length`` body read without a thread (log-in and comment forms, most
JSON edits). With the head limit, at most 48 KiB are held per connection."""

_CRLF: Final = b"\r\n"
_HEAD_END: Final = b"\r\n\r\n"
_HAND_OVER_AT_ONCE: Final = frozenset({b"transfer-encoding", b"expect"})
"""Header names whose requests go to a thread as soon as their head is in: a chunked body
(its length is unknown) and ``Expect: 100-continue`` (the client waits for gunicorn's answer
before it sends the body)."""


class Arrival(enum.Enum):
    """Where a request stands."""

    HEAD = "head"
    """Its head has not fully arrived."""
    BODY = "body"
    """Its head has arrived; a small body of known length has not yet."""
    READY = "ready"
    """A thread can take it without waiting on the client (or it is for the parser to refuse)."""
    STREAM = "stream"
    """A thread takes it now and reads the rest (a body the worker does not wait for, a head
    over its limit) as the client sends it."""


class ArrivingRequest:
    """The bytes of one request as they arrive, scanned once each (trickling a byte at a time
    costs the same per byte as sending everything at once).

    Args:
        head_limit: bytes of head to wait for at most.
        body_limit: the largest ``Content-Length`` to wait for.
        data: bytes that arrived already (read ahead behind a previous request).
    """

    def __init__(
        self,
        *,
        head_limit: int = DEFAULT_HEAD_LIMIT,
        body_limit: int = DEFAULT_BODY_LIMIT,
        data: bytes = b"",
    ) -> None:
        self.head_limit = head_limit
        self.body_limit = body_limit
        self.data = bytearray()
        self.state = Arrival.HEAD
        self._scanned = 0  # bytes searched for the head's end and for bare LFs
        self._body_start = 0
        self._body_length = 0
        self.feed(data)

    def feed(self, chunk: bytes) -> Arrival:
        """Add bytes that arrived; the request's new `state`."""
        self.data += chunk
        if self.state is Arrival.HEAD:
            self._scan_head()
        if self.state is Arrival.BODY and len(self.data) - self._body_start >= self._body_length:
            self.state = Arrival.READY
        return self.state

    def _scan_head(self) -> None:
        # RFC 9112 section 2.2, as gunicorn reads it: one empty line may precede the request.
        start = 2 if self.data[:2] == _CRLF else 0
        begin = max(start, self._scanned - len(_HEAD_END) + 1)
        end = self.data.find(_HEAD_END, begin)
        head_stop = end + len(_CRLF) if end >= 0 else len(self.data)
        if self.data[:1] == b"\n" or _has_bare_lf(self.data, max(1, self._scanned), head_stop):
            self.state = Arrival.READY  # the parser refuses bare LFs rather than wait on them
            return
        self._scanned = len(self.data)
        if end < 0:
            if len(self.data) > self.head_limit:
                self.state = Arrival.STREAM  # the parser reads on, or refuses a head this long
            return
        self._body_start = end + len(_HEAD_END)
        length = self._body_to_wait_for(bytes(self.data[start:end]))
        if length is None:
            self.state = Arrival.STREAM
            return
        if length == 0:
            self.state = Arrival.READY
            return
        self._body_length = length
        self.state = Arrival.BODY

    def _body_to_wait_for(self, head: bytes) -> int | None:
        """The body length worth waiting for without a thread, or ``None`` to hand over now."""
        lengths: list[bytes] = []
        for line in head.split(_CRLF)[1:]:
            name, colon, value = line.partition(b":")
            name = name.lower()
            if not colon:
                continue  # the parser judges malformed lines
            if name in _HAND_OVER_AT_ONCE:
                return None
            if name == b"content-length":
                lengths.append(value.strip(b" \t"))
        if not lengths:
            return 0
        if len(lengths) > 1 or not lengths[0].isdigit() or len(lengths[0]) > 18:
            return None  # several or odd lengths: the parser's to judge, in a thread
        length = int(lengths[0])
        return length if length <= self.body_limit else None


def _has_bare_lf(data: bytearray, start: int, stop: int) -> bool:
    """Whether an LF in ``data[start:stop]`` is not preceded by a CR."""
    position = data.find(b"\n", start, stop)
    while position >= 0:
        if data[position - 1] != 0x0D:
            return True
        position = data.find(b"\n", position + 1, stop)
    return False
