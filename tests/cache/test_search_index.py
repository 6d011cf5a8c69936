"""``search`` through the trigram indexes (#18 point 2): the same answers as a scan on every
backend, whatever was stored, replaced, deleted or indexed since (and whatever the disk
backend's trigram counts say), and a layout-3 or layout-4 disk cache gains the index in place."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitecache.cache import CacheEntry, DiskStorage, Storage
from sitecache.cache.entry import EntryInfo, encode_entry
from sitecache.cache.storage.base import matches_filter
from sitecache.cache.storage.disk_search import match_query
from sitecache.cache.storage.records import EntryStatus
from tests.cache.conftest import make_storage

NOW = 2000.0


def entry(url: str, number: int) -> CacheEntry:
    return CacheEntry(
        url=url, host="example.org", path="/" + url.split("/", 3)[3], variant="", status=200,
        headers=(("Content-Type", "text/html"),), body=b"<p>x</p>", gzip_body=b"",
        created=1000.0 + number % 7, expires=1500.0 if number % 3 == 0 else 0.0,
        tags=(), etag='"e"',
    )  # fmt: skip


def put(storage: Storage, key: str, value: CacheEntry) -> EntryInfo:
    info = value.info(key)
    storage.put(key, encode_entry(value), info, None)
    return info


def scan(rows: dict[str, EntryInfo], search: str, status: str | None) -> tuple[list[str], int]:
    """What the listing must answer: every stored row through `matches_filter`, in the
    listing order (newest first, then by URL, then by key)."""
    found = [
        info
        for info in rows.values()
        if matches_filter(info, NOW, search, status)  # type: ignore[arg-type]
    ]
    found.sort(key=lambda info: (-info.created, info.url, info.key))
    return [info.key for info in found], len(found)


#: URLs over a small alphabet, so that terms match often; ASCII (the disk backend folds the
#: case of ASCII letters only, as ``LIKE`` does).
PATHS = st.text(alphabet="abAB%_-/1", min_size=0, max_size=12)
TERMS = st.text(alphabet="abAB%_-/1", min_size=1, max_size=5)
#: One step: store a URL under one of eight keys, delete a key, or index what waits.
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(0, 7), PATHS),
        st.tuples(st.just("delete"), st.integers(0, 7), st.just("")),
        st.tuples(st.just("index"), st.just(0), st.just("")),
    ),
    max_size=25,
)


@pytest.mark.parametrize("backend", ["memory", "disk", "redis"])
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS, terms=st.lists(TERMS, min_size=1, max_size=4))
def test_an_indexed_search_answers_what_a_scan_answers(
    backend: str,
    tmp_path_factory: pytest.TempPathFactory,
    steps: list[tuple[str, int, str]],
    terms: list[str],
) -> None:
    storage = make_storage(backend, tmp_path_factory.mktemp("cache"))
    rows: dict[str, EntryInfo] = {}
    try:
        for number, (action, slot, path) in enumerate(steps):
            key = f"{slot:032d}"
            if action == "put":
                info = put(storage, key, entry(f"http://example.org/{path}", number))
                rows[key] = info
            elif action == "delete":
                storage.delete([key])
                rows.pop(key, None)
            else:
                storage.housekeeping(1.0)
        for term in terms:
            for status in (None, "fresh", "expired"):
                expected_keys, expected_total = scan(rows, term, status)
                rows_found, total = storage.list_entries(
                    0,
                    1000,
                    now=NOW,
                    search=term,
                    status=status,
                )
                assert [info.key for info in rows_found] == expected_keys, (term, status)
                assert total == expected_total
        if backend == "disk":  # the FTS index's own structure is sound
            connection = storage._connection()  # type: ignore[attr-defined]
            connection.execute(
                "INSERT INTO entries_search (entries_search) VALUES ('integrity-check')"
            )
    finally:
        if backend == "redis":
            storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


def test_a_search_pages_the_matches_in_the_listing_order(storage: Storage) -> None:
    for number in range(30):
        put(storage, f"{number:032d}", entry(f"http://example.org/post-{number}/", number))
    storage.housekeeping(1.0)
    put(storage, f"{99:032d}", entry("http://example.org/POST-1x/", 3))  # not yet indexed
    every, total = storage.list_entries(0, 100, now=NOW, search="post-1")
    assert total == 12  # post-1, post-10 .. post-19, POST-1x
    pages = [storage.list_entries(offset, 5, now=NOW, search="post-1") for offset in (0, 5, 10)]
    assert [info for page, _ in pages for info in page] == every
    assert {count for _, count in pages} == {12}


def test_the_redis_index_keeps_no_member_of_a_deleted_entry(tmp_path: Path) -> None:
    storage = make_storage("redis", tmp_path)
    try:
        keys = [f"{number:032d}" for number in range(5)]
        for number, key in enumerate(keys):
            put(storage, key, entry(f"http://example.org/page-{number}/", number))
        storage.housekeeping(1.0)
        client = storage.client  # type: ignore[attr-defined]
        prefix = storage.prefix  # type: ignore[attr-defined]
        # One member per suffix: 32 bytes, 32 members an entry.
        assert client.zcard(prefix + "sx") == 5 * len("http://example.org/page-0/")
        put(storage, keys[0], entry("http://example.org/moved/", 0))  # a new URL: re-queued
        assert client.hlen(prefix + "sd") == 1  # its old members, until swept
        assert storage.list_entries(0, 10, now=NOW, search="page-0")[1] == 0
        assert storage.list_entries(0, 10, now=NOW, search="moved")[1] == 1
        storage.housekeeping(1.0)
        assert client.zcard(prefix + "sx") == 4 * len("http://example.org/page-0/") + len(
            "http://example.org/moved/"
        )
        assert client.hlen(prefix + "sd") == 0
        storage.delete(keys)
        assert client.hlen(prefix + "sd") == 5
        assert storage.list_entries(0, 10, now=NOW, search="example")[1] == 0
        storage.housekeeping(1.0)
        assert client.zcard(prefix + "sx") == 0
        assert client.scard(prefix + "sq") == 0
        assert client.hlen(prefix + "su") == 0
        assert client.hlen(prefix + "sd") == 0
    finally:
        storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


def test_a_disk_search_asks_for_the_rare_trigrams_and_stays_exact(tmp_path: Path) -> None:
    storage = DiskStorage(tmp_path)
    try:
        for number in range(200):
            put(storage, f"{number:032d}", entry(f"http://example.org/post-{number}/", number))
        storage.housekeeping(1.0)
        connection = storage._connection()
        query = match_query(connection, "Post-123/")
        assert query is not None
        assert '"Pos"' not in query
        assert '"st-"' not in query
        assert '"123"' in query  # held by one
        assert match_query(connection, "po") is None  # too short: the scan
        # The counts outlive what they counted: a purge of everything (a new epoch), GC's
        # deletes, new URLs, some not indexed yet; the answers stay the scan's.
        storage.invalidate_all()
        storage.remove_invalidated(10.0)
        rows: dict[str, EntryInfo] = {}
        for number in range(30):
            key = f"{1000 + number:032d}"
            rows[key] = put(storage, key, entry(f"http://example.org/page-{number}/", number))
        storage.housekeeping(1.0)
        key = f"{2000:032d}"
        rows[key] = put(storage, key, entry("http://example.org/post-123/", 3))  # pending
        statuses: tuple[EntryStatus | None, ...] = (None, "fresh", "expired")
        for term in ("post-123/", "post-1", "page-1", "ge-2", "/pos"):
            for status in statuses:
                found, total = storage.list_entries(0, 1000, now=NOW, search=term, status=status)
                assert ([info.key for info in found], total) == scan(rows, term, status)
    finally:
        storage.close()


@pytest.mark.parametrize("backend", ["disk", "redis"])
def test_a_search_indexes_a_long_queue_first(backend: str, tmp_path: Path) -> None:
    storage = make_storage(backend, tmp_path)
    try:
        for number in range(1100):  # more than a search reads unindexed
            put(storage, f"{number:032d}", entry(f"http://example.org/post-{number}/", number))
        assert storage.list_entries(0, 5, now=NOW, search="post-109")[1] == 11
        assert storage.list_entries(0, 5, now=NOW, search="post-1099/")[1] == 1
        if backend == "redis":
            assert storage.client.scard(storage._data() + "sq") == 0  # type: ignore[attr-defined]
        else:
            connection = storage._connection()  # type: ignore[attr-defined]
            assert connection.execute("SELECT COUNT(*) FROM search_pending").fetchone()[0] == 0
    finally:
        if backend == "redis":
            storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()
