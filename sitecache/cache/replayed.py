"""Which header fields a stored response replays on a hit, and what the cache reads of them.

`replayed_headers` keeps the fields a hit sends again: never `UNSTORED_HEADERS` (those of one
connection, RFC 9111 §3.1, those recomputed on each answer, and those of one visitor), nor the
fields a ``Connection`` field or a qualified ``no-cache``/``private`` names; it reads the purge
tags (``Cache-Tag``), the content type and coding, and the validators on the way.
Pure: no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from sitecache.cache.fields import HOP_BY_HOP, connection_named, entity_tag
from sitecache.cache.http_dates import format_http_date, parse_http_date

__all__ = ["UNSTORED_HEADERS", "Replayed", "replayed_headers", "title_case"]

#: Response headers never stored: per-connection (RFC 9111 §3.1: hop-by-hop fields and
#: those of the proxy the cache forwards through), recomputed on each answer, or per-visitor.
UNSTORED_HEADERS: Final = HOP_BY_HOP | frozenset(
    {
        "set-cookie",
        "content-length",
        "age",
        "cache-status",
        "server",
        "proxy-authenticate",
        "proxy-authentication-info",
        "proxy-authorization",
        "x-site-nonce",
    }
)


@dataclass(slots=True)
class Replayed:
    """What `replayed_headers` read of a response's headers."""

    headers: list[tuple[str, str]]
    tags: list[str]
    content_type: str = ""
    encoding: str = ""
    etag: str = ""
    last_modified: float = 0.0
    last_modified_text: str = ""


def replayed_headers(
    headers: Iterable[tuple[str, str]], now: float, omit: frozenset[str]
) -> Replayed:
    """The headers replayed on a hit of a response stored at ``now`` (a ``Last-Modified``
    of ``now`` is added when it has none; ``ETag`` and ``Vary`` are written by the caller),
    its tags, content type and coding, and its validators (the first ``ETag`` line as sent,
    the ``Last-Modified`` date)."""
    headers = list(headers)
    named = connection_named(headers)
    skipped = UNSTORED_HEADERS | named | omit if named or omit else UNSTORED_HEADERS
    found = Replayed(headers=[], tags=[], last_modified=now)
    has_last_modified = False
    for name, value in headers:
        lower = name.lower()
        if lower in skipped or lower == "vary":
            continue
        if lower == "cache-tag":
            found.tags.extend(item for item in map(str.strip, value.split(",")) if item)
        elif lower == "content-type":
            found.content_type = value.lower()
        elif lower == "content-encoding":
            found.encoding = value.strip().lower()
        elif lower == "etag":
            # An entity tag, strong or weak, is kept as sent; anything else is no validator.
            found.etag = found.etag or entity_tag(value)
            continue
        elif lower == "last-modified":
            stamp = parse_http_date(value)
            if stamp is None or has_last_modified:
                continue
            has_last_modified = True
            found.last_modified, found.last_modified_text = stamp, value
        found.headers.append((name, value))
    if not has_last_modified:
        found.headers.append(("Last-Modified", format_http_date(now)))
    return found


@functools.lru_cache(maxsize=256)
def title_case(name: str) -> str:
    """A lower-case header name in its usual spelling (``accept-language``:
    ``Accept-Language``)."""
    return "-".join(part.capitalize() for part in name.split("-"))
