"""Byte ranges of stored responses (RFC 9110 §14): a ``Range`` request answered 206 from a
whole stored response.

The cache stores whole responses only (a 206 is never stored). A GET that asks for one byte
range of a stored 200 (``bytes=0-99``, ``bytes=100-``, ``bytes=-100``) is answered ``206
Partial Content`` with ``Content-Range``, cut from the stored body; anything else (several
ranges, another unit, a range past the end, a malformed value, an ``If-Range`` that does not
match the stored validator) is answered with the whole response, as RFC 9110 allows a server
to. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from sitecache.cache.http_dates import parse_http_date

__all__ = ["if_range_matches", "single_range"]

_RANGE: Final = re.compile(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", re.IGNORECASE | re.ASCII)


def single_range(value: str, length: int) -> tuple[int, int] | None:
    """The one satisfiable byte range ``(first, last)`` (inclusive) a ``Range`` value asks of
    a representation of ``length`` bytes, or ``None`` when the whole is to be sent."""
    match = _RANGE.fullmatch(value)
    if match is None or length <= 0:
        return None
    first_text, last_text = match.groups()
    if not first_text:
        if not last_text or int(last_text) == 0:
            return None
        return max(0, length - int(last_text)), length - 1
    first = int(first_text)
    last = int(last_text) if last_text else length - 1
    if first > last or first >= length:
        return None
    return first, min(last, length - 1)


def if_range_matches(value: str, etag: str, last_modified: str) -> bool:
    """Whether an ``If-Range`` value names the stored representation: its entity tag by
    strong comparison (a weak tag never matches), or exactly its ``Last-Modified`` date."""
    value = value.strip()
    if value.startswith(('"', "W/")):
        return not value.startswith("W/") and not etag.startswith("W/") and value == etag
    stamp = parse_http_date(value)
    return stamp is not None and bool(last_modified) and stamp == parse_http_date(last_modified)
