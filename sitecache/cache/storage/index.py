"""Small helpers every backend's index shares: filters and the in-place expiry rewrite."""

from __future__ import annotations

from sitecache.cache.entry import EXPIRES_OFFSET, PREFIX_SIZE, EntryInfo, encode_expires
from sitecache.cache.storage.base import EntryStatus

__all__ = ["matches_filter", "rewrite_expires"]


def matches_filter(info: EntryInfo, now: float, search: str, status: EntryStatus | None) -> bool:
    """Whether an index row passes the list filters (`search` is a URL substring)."""
    if search and search.lower() not in info.url.lower():
        return False
    if status == "fresh":
        return info.is_fresh(now)
    if status == "expired":
        return not info.is_fresh(now)
    return True


def rewrite_expires(data: bytes, expires: float) -> bytes:
    """``data`` (an encoded entry) with its expiry set to ``expires``; unchanged if too short."""
    if len(data) < PREFIX_SIZE:
        return data
    return data[:EXPIRES_OFFSET] + encode_expires(expires) + data[EXPIRES_OFFSET + 8 :]
