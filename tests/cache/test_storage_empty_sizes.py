"""Entries with an empty body or no gzip copy are stored, counted and removed like any other.

Redis once refused to delete them: its script wrote ``-0`` for the size, which ``HINCRBY``
rejects as "not an integer", so a small page (no gzip copy) or a ``Vary`` pointer could never be
purged.
"""

from __future__ import annotations

from sitecache.cache import CacheEntry, Storage
from sitecache.cache.entry import encode_entry


def stored(storage: Storage, key: str, body: bytes, gzip_body: bytes, status: int) -> None:
    value = CacheEntry(
        url=f"http://example.org/{key[:4]}", host="example.org", path=f"/{key[:4]}",
        variant="", status=status, headers=(), body=body, gzip_body=gzip_body,
        created=1000.0, expires=0.0, tags=("small",),
    )  # fmt: skip
    storage.put(key, encode_entry(value), value.info(key), None)


def test_an_entry_without_a_gzip_copy_can_be_purged_by_tag(storage: Storage) -> None:
    stored(storage, "a" * 32, b"<p>tiny</p>", b"", 200)
    report = storage.delete(storage.keys_for("tag", ["small"]))
    assert report.deleted == 1
    assert report.bytes == len(b"<p>tiny</p>")
    assert storage.get("a" * 32) is None
    summary = storage.summary(2000.0)
    assert (summary.total, summary.bytes, summary.compressed_bytes) == (0, 0, 0)


def test_a_pointer_with_no_body_can_be_deleted(storage: Storage) -> None:
    stored(storage, "b" * 32, b"", b"", 0)
    stored(storage, "c" * 32, b"<p>page</p>", b"gz", 200)
    assert storage.delete(["b" * 32]).deleted == 1
    assert storage.get("b" * 32) is None
    summary = storage.summary(2000.0)
    assert (summary.total, summary.bytes, summary.compressed_bytes) == (1, 11, 2)
