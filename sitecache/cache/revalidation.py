"""Revalidation (RFC 9111 §4.3): asking the application whether a stale copy is still good.

A stale entry whose application gave a validator is not rendered again in full: the cache asks
the application with the request it is answering, its own preconditions (and ``Range``)
replaced by the entry's validators (`conditional_environ`: ``If-None-Match`` with the ``ETag``
the application sent, ``If-Modified-Since`` with its ``Last-Modified``). A ``304 Not
Modified`` refreshes the stored header fields (`refreshed_headers`, RFC 9111 §3.2 and §4.3.4)
and the entry is served and stored again with a new lifetime; any other answer is handled as a
miss's.

Whether a stale copy may still be served (`stale_window`): while one request revalidates it,
within the response's own ``stale-while-revalidate`` window or else the
``stale_while_revalidate`` setting, unless the response forbade it (``must-revalidate``,
``proxy-revalidate``, ``s-maxage``, ``no-cache``); and when the application fails (a 500, 502,
503 or 504, or an exception) within that window plus its ``stale-if-error``. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from sitecache.cache.entry import UNSTORED_HEADERS, StoredFreshness

__all__ = [
    "APP_FAILURES",
    "NOT_REFRESHED",
    "conditional_environ",
    "error_window",
    "refreshed_headers",
    "stale_window",
]

#: The request fields a revalidation replaces: the client's preconditions and range are its
#: own business, the cache asks about its stored copy.
_CLIENT_PRECONDITIONS: Final = (
    "HTTP_IF_NONE_MATCH",
    "HTTP_IF_MODIFIED_SINCE",
    "HTTP_IF_MATCH",
    "HTTP_IF_UNMODIFIED_SINCE",
    "HTTP_IF_RANGE",
    "HTTP_RANGE",
)

#: Fields a 304 never changes in the stored response (RFC 9111 §3.2): its length, its coding
#: (the stored bytes are what they are), the ``Vary`` the entry is keyed by, and those never
#: stored.
NOT_REFRESHED: Final = UNSTORED_HEADERS | {"content-encoding", "vary"}

#: Application answers that mean "failed": a stale copy may answer instead where allowed.
APP_FAILURES: Final = frozenset({500, 502, 503, 504})


def conditional_environ(environ: Mapping[str, Any], fresh: StoredFreshness) -> dict[str, Any]:
    """The environ of a GET asking the application whether the stored copy with these
    validators is current (the client's preconditions and range replaced)."""
    asked = {key: value for key, value in environ.items() if key not in _CLIENT_PRECONDITIONS}
    asked["REQUEST_METHOD"] = "GET"
    if fresh.etag:
        asked["HTTP_IF_NONE_MATCH"] = fresh.etag
    if fresh.last_modified:
        asked["HTTP_IF_MODIFIED_SINCE"] = fresh.last_modified
    return asked


def refreshed_headers(
    stored: Iterable[tuple[str, str]], not_modified: Iterable[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The stored header fields updated by a 304's (RFC 9111 §3.2): each field the 304 sends
    replaces the stored lines of that name, except `NOT_REFRESHED`."""
    fresh = [(name, value) for name, value in not_modified if name.lower() not in NOT_REFRESHED]
    replaced = {name.lower() for name, _ in fresh}
    return [(n, v) for n, v in stored if n.lower() not in replaced] + fresh


def stale_window(fresh: StoredFreshness, setting: int) -> int:
    """Seconds past its expiry a stale copy may be served while it is revalidated."""
    return setting if fresh.stale_window is None else fresh.stale_window


def error_window(fresh: StoredFreshness, setting: int) -> int:
    """Seconds past its expiry a stale copy may answer while the application fails (``0``
    when the response forbade serving it stale)."""
    window = stale_window(fresh, setting)
    if window == 0 and fresh.stale_window == 0:
        return 0
    return window + fresh.error_window
