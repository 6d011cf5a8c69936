"""The in-place expiry rewrite a soft purge applies to stored bytes (memory and disk)."""

from __future__ import annotations

from sitecache.cache.entry import EXPIRES_OFFSET, PREFIX_SIZE, encode_expires

__all__ = ["rewrite_expires"]


def rewrite_expires(data: bytes, expires: float) -> bytes:
    """``data`` (an encoded entry) with its expiry set to ``expires``; unchanged if too short."""
    if len(data) < PREFIX_SIZE:
        return data
    return data[:EXPIRES_OFFSET] + encode_expires(expires) + data[EXPIRES_OFFSET + 8 :]
