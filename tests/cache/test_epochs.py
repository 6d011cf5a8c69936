"""Purges of everything in O(1) (#18): epochs, what they invalidate at once, and GC's slices."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import Client

from sitecache.cache import (
    CacheEngine,
    CacheEntry,
    CacheRules,
    DiskStorage,
    MemoryStorage,
    PageCache,
    Storage,
)
from sitecache.cache.entry import encode_entry
from sitecache.cache.storage import PendingRemoval, disk_epochs
from sitecache.cache.storage.disk_schema import CHUNK_MAX, LAYOUT_VERSION
from sitecache.cache.storage.disk_search import SEARCH_CATCH_UP
from sitecache.cache.storage.redis_listing import visible_span
from tests.cache.conftest import REDIS_URL, FakeClock, PageApp, make_storage

SITE = "http://example.org"


def entry(number: int, *, host: str = "example.org", created: float = 1000.0,
          expires: float = 0.0) -> CacheEntry:  # fmt: skip
    return CacheEntry(
        url=f"http://{host}/p{number}", host=host, path=f"/p{number}", variant="", status=200,
        headers=(("Content-Type", "text/html"),), body=b"<p>%d</p>" % number, gzip_body=b"gz",
        created=created, expires=expires, tags=(f"t{number % 7}", "all"), etag='"e"',
    )  # fmt: skip


def put(storage: Storage, number: int, **fields: Any) -> str:
    key = f"{number:032x}"
    value = entry(number, **fields)
    storage.put(key, encode_entry(value), value.info(key), None)
    return key


def leftovers(storage: Storage, backend: str) -> int:
    """Rows, bodies or keys of entries still physically held (whatever their epoch)."""
    if backend == "memory":
        assert isinstance(storage, MemoryStorage)
        return sum(len(shelf.index) for shelf in storage._invalidated) + len(storage._shelf.index)
    if backend == "disk":
        assert isinstance(storage, DiskStorage)
        connection = storage._connection()
        return sum(
            int(connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608
            for table in ("entries", "bodies", "entry_tags")
        )
    from sitecache.cache.storage.redis import RedisStorage

    assert isinstance(storage, RedisStorage)
    client = storage.client
    shared = {b"gen", b"ep", b"dead", b"c"}
    prefix = storage.prefix.encode()
    return sum(
        1
        for key in client.keys(storage.prefix + "*")
        if key.removeprefix(prefix) not in shared
        and not key.removeprefix(prefix).startswith((b"v:", b"l:"))
    )


@pytest.fixture
def engine(storage: Storage) -> CacheEngine:
    return CacheEngine(storage, CacheRules(hosts=frozenset({"example.org"})), clock=FakeClock())


# ---------------------------------------------------------------------- the purge itself
def test_a_purge_of_everything_is_a_miss_at_once_and_gc_removes_it_in_slices(
    storage: Storage, engine: CacheEngine, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [put(storage, number) for number in range(1200)]
    held = storage.summary(2000.0)
    storage.set_value("settings", b"{}")
    storage.add_counters({"hit": 3})

    def walked(*args: Any) -> Any:
        raise AssertionError("a purge of everything walked the entries")

    for name in ("delete", "keys_for", "infos", "mark_stale"):
        monkeypatch.setattr(storage, name, walked)
    result = engine.purge_all()
    monkeypatch.undo()

    assert (result.deleted, result.bytes) == (1200, held.bytes + held.compressed_bytes)
    assert (result.scope, result.urls) == ("all", [])
    assert all(storage.get(key) is None for key in keys[::37])
    assert storage.keys_for("tag", ["all"]) == set()
    assert storage.keys_for("host", None) == set()
    assert storage.summary(2000.0).total == 0
    assert storage.list_entries(0, 20, now=2000.0) == ([], 0)
    assert storage.pending_removal() == PendingRemoval(1200, result.bytes)
    # GC: a batch at a time (budget 0), the pending figure shrinking to nothing.
    slices = 0
    while storage.remove_invalidated(0.0):
        slices += 1
    assert slices > 1
    assert not storage.pending_removal()
    assert leftovers(storage, backend) == 0
    assert storage.get_value("settings") == b"{}"  # the shared state is not an epoch's
    assert storage.counters()["hit"] == 3


def test_entries_stored_after_the_purge_are_live_and_gc_leaves_them(
    storage: Storage, engine: CacheEngine
) -> None:
    old = [put(storage, number) for number in range(30)]
    engine.purge_all()
    again = put(storage, 3)  # the same key, stored anew
    new = put(storage, 100)
    assert storage.summary(2000.0).total == 2
    while storage.remove_invalidated(0.0):
        pass
    assert storage.get(again) is not None
    assert storage.get(new) is not None
    assert {storage.get(key) for key in old if key != again} == {None}
    rows, total = storage.list_entries(0, 10, now=2000.0)
    assert (sorted(info.key for info in rows), total) == (sorted([again, new]), 2)
    assert storage.keys_for("tag", ["all"]) == {again, new}


def test_two_purges_in_a_row_leave_both_epochs_to_gc(storage: Storage, engine: CacheEngine) -> None:
    for number in range(10):
        put(storage, number)
    assert engine.purge_all().deleted == 10
    for number in range(10, 15):
        put(storage, number)
    assert engine.purge_all().deleted == 5
    assert storage.pending_removal().entries == 15
    while storage.remove_invalidated(0.0):
        pass
    assert not storage.pending_removal()
    assert engine.purge_all().deleted == 0  # nothing to invalidate: nothing left behind
    assert not storage.pending_removal()


def test_the_site_is_purged_at_once_when_its_hosts_are_all_the_storage_holds(
    storage: Storage, engine: CacheEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(5):
        put(storage, number)
    assert storage.only_hosts(["example.org"])
    monkeypatch.setattr(storage, "delete", lambda keys: pytest.fail("walked"))
    result = engine.purge_site()
    monkeypatch.undo()
    assert (result.scope, result.deleted, result.urls) == ("site", 5, [])
    # Another host shares the storage: only the site's own entries go, one by one.
    put(storage, 1)
    other = put(storage, 50, host="other.org")
    assert not storage.only_hosts(["example.org"])
    assert storage.only_hosts(["example.org", "other.org"])
    result = engine.purge_site()
    assert (result.deleted, result.urls) == (1, ["http://example.org/p1"])
    assert storage.get(other) is not None


def test_a_purge_of_expired_entries_hides_them_at_once_and_gc_deletes_them(
    storage: Storage, engine: CacheEngine, backend: str
) -> None:
    engine.clock.now = 3000.0  # type: ignore[attr-defined]
    for number in range(40):  # p0..p9 expired at 1500, p10..p19 at 2995, the rest fresh
        expires = 1500.0 if number < 10 else 2995.0 if number < 20 else 0.0
        put(storage, number, created=1000.0 + number, expires=expires)
    one = entry(1, expires=1500.0)
    result = engine.purge_expired()  # before = 3000 - 10 (the stale window)
    assert (result.scope, result.deleted, result.urls) == ("expired", 10, [])
    assert result.bytes == 10 * (one.size + len(one.gzip_body))
    summary = storage.summary(3000.0)
    assert (summary.total, summary.expired) == (30, 10)  # p10..p19: expired, not yet purged
    rows, total = storage.list_entries(0, 50, now=3000.0)
    assert total == 30
    assert {info.url for info in rows} == {f"http://example.org/p{n}" for n in range(10, 40)}
    assert storage.list_entries(0, 50, now=3000.0, status="expired")[1] == 10
    assert storage.list_entries(0, 50, now=3000.0, status="fresh")[1] == 20
    assert storage.list_entries(0, 50, now=3000.0, search="p1")[1] == 10  # p10..p19 only
    assert storage.keys_for("tag", ["all"]) == {f"{n:032x}" for n in range(10, 40)}
    assert storage.pending_removal() == PendingRemoval(10, result.bytes)
    assert engine.purge_expired().deleted == 0  # nothing newly expired past the window
    put(storage, 2, created=3000.0)  # stored again: no longer hidden
    assert storage.summary(3000.0).total == 31
    while storage.remove_invalidated(0.0):
        pass
    assert not storage.pending_removal()
    assert storage.get(f"{5:032x}") is None
    assert storage.get(f"{2:032x}") is not None
    assert storage.summary(3000.0).total == 31
    assert leftovers(storage, backend) > 0  # the live ones stay


# ---------------------------------------------------------------------- other processes
@pytest.mark.parametrize("backend", ["disk", "redis"])
def test_another_process_misses_every_old_entry_right_after_the_purge(
    tmp_path: Path, backend: str
) -> None:
    namespace = f"test-{uuid.uuid4().hex}"
    stores = [make_storage(backend, tmp_path / "cache", namespace) for _ in range(2)]
    rules = CacheRules(hosts=frozenset({"example.org"}))
    app = PageApp()
    workers = [PageCache(app, engine=CacheEngine(store, rules)) for store in stores]
    clients = [Client(worker, use_cookies=False) for worker in workers]
    paths = [f"/p{number}/" for number in range(40)]
    try:
        for path in paths:
            assert "stored" in clients[0].get(path, base_url=SITE).headers["Cache-Status"]
            # The other worker holds every page in its memory tier too.
            assert (
                clients[1]
                .get(path, base_url=SITE)
                .headers["Cache-Status"]
                .startswith("sitecache; hit")
            )
        assert workers[0].purge_all().deleted == len(paths)
        for path in paths:
            answer = clients[1].get(path, base_url=SITE)
            assert answer.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored", path
        assert workers[1].engine.stats()["entries"]["total"] == len(paths)  # the new ones
    finally:
        if backend == "redis":
            stores[0].clear_namespace()  # type: ignore[attr-defined]
        for store in stores:
            store.close()


# ---------------------------------------------------------------------- listings
def reference(rows: list[Any], offset: int, limit: int) -> list[str]:
    ordered = sorted(rows, key=lambda info: (-info.created, info.url, info.key))
    return [info.key for info in ordered[offset : offset + limit]]


def assert_listings(
    storage: Storage, live: dict[str, Any], now: float, limits: tuple[int, ...] = (7, 20)
) -> None:
    """Every page (of each of ``limits`` rows) of every filter equals the reference
    ordering."""
    filters: list[tuple[dict[str, Any], Any]] = [
        ({}, lambda info: True),
        ({"status": "fresh"}, lambda info: info.is_fresh(now)),
        ({"status": "expired"}, lambda info: not info.is_fresh(now)),
        ({"search": "P1"}, lambda info: "p1" in info.url),
        ({"search": "p2", "status": "fresh"}, lambda info: "p2" in info.url and info.is_fresh(now)),
    ]
    for query, keep in filters:
        wanted = [info for info in live.values() if keep(info)]
        for limit in limits:
            for offset in range(0, len(wanted) + limit, limit):
                rows, total = storage.list_entries(offset, limit, now=now, **query)
                assert total == len(wanted), (query, total)
                assert [info.key for info in rows] == reference(wanted, offset, limit), (
                    query,
                    offset,
                    limit,
                )


def test_every_page_equals_the_reference_ordering(storage: Storage) -> None:
    live: dict[str, Any] = {}
    for number in range(90):  # distinct times (Redis orders ties by key)
        expires = 1500.0 if number % 6 == 0 else 0.0
        key = put(storage, number, created=1000.0 + number * 1.5, expires=expires)
        live[key] = entry(number, created=1000.0 + number * 1.5, expires=expires).info(key)
    for number in range(0, 90, 11):
        key = f"{number:032x}"
        storage.delete([key])
        del live[key]
    assert_listings(storage, live, now=2000.0)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Storage]:
    """A disk store in memory when the machine has a RAM file system (thousands of writes)."""
    shm = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) else None
    store = make_storage("disk", (base or tmp_path) / "cache")
    yield store
    store.close()
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)


def chunk_counts(storage: Storage) -> list[int]:
    """The row counts of the current epoch's chunks, once the catch-up moved the rows stored
    since into the listing order (layout 7: a new row waits for it)."""
    storage._index_queued()  # type: ignore[attr-defined]
    rows = storage._connection().execute(  # type: ignore[attr-defined]
        "SELECT count FROM chunks WHERE epoch = (SELECT current FROM epoch) ORDER BY t, url, key"
    )
    return [row[0] for row in rows]


def test_disk_pages_stay_exact_through_splits_merges_moves_ties_and_purges(disk: Storage) -> None:
    live: dict[str, Any] = {}

    def store(number: int, created: float, expires: float = 0.0) -> None:
        key = put(disk, number, created=created, expires=expires)
        live[key] = entry(number, created=created, expires=expires).info(key)

    for number in range(2 * CHUNK_MAX + 300):  # splits; groups of ten share their time
        store(number, 1000.0 + number // 10, 1500.0 if number % 97 == 0 else 0.0)
    assert len(chunk_counts(disk)) >= 3
    assert sum(chunk_counts(disk)) == len(live)
    assert_listings(disk, live, now=2000.0, limits=(45,))
    doomed = [f"{number:032x}" for number in range(300, 1100)]  # a run empties: merges
    disk.delete(doomed)
    for key in doomed:
        del live[key]
    for number in range(1500, 1800):  # stored again later: they move to the top
        store(number, 5000.0 + number % 3)
    counts = chunk_counts(disk)
    assert sum(counts) == len(live)
    assert max(counts) <= CHUNK_MAX
    assert_listings(disk, live, now=2000.0, limits=(60,))
    disk.invalidate_all()
    live.clear()
    for number in range(CHUNK_MAX + 10):
        store(number, 7000.0 - number // 3)
    assert_listings(disk, live, now=2000.0, limits=(100,))
    while disk.remove_invalidated(0.0):
        pass
    assert_listings(disk, live, now=2000.0, limits=(100,))


@pytest.mark.parametrize("version", [2, 3, 4, 5, 6])
def test_an_older_disk_layout_is_made_again_on_open(tmp_path: Path, version: int) -> None:
    """Layouts before 7 (4: tag rows and bodies found by key; 5: rows without the lifetime
    rule; 6: URL, path and host indexes written by every store) are dropped and made again;
    named values stay."""
    directory = tmp_path / "cache"
    storage = make_storage("disk", directory)
    put(storage, 1)
    storage.set_value("settings", b'{"max_age": 60}')
    storage.close()
    with sqlite3.connect(directory / "index.sqlite3") as connection:
        connection.execute(f"PRAGMA user_version = {version}")
    reopened = make_storage("disk", directory)
    assert reopened.summary(2000.0).total == 0
    assert reopened.get_value("settings") == b'{"max_age": 60}'  # named values are kept
    put(reopened, 2)
    assert reopened.list_entries(0, 5, now=2000.0)[1] == 1
    assert reopened.keys_for("tag", ["all"]) == {f"{2:032x}"}
    reopened.close()
    with sqlite3.connect(directory / "index.sqlite3") as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == LAYOUT_VERSION


def tag_rows(directory: Path) -> list[tuple[str, str]]:
    """The tag rows written, as (tag, key of their entry row)."""
    with sqlite3.connect(directory / "index.sqlite3") as connection:
        return sorted(
            connection.execute(
                "SELECT t.tag, e.key FROM entry_tags t JOIN entries e ON e.rowid = t.id"
            ).fetchall()
        )


def test_tag_rows_wait_for_the_catch_up_and_lookups_see_them_meanwhile(tmp_path: Path) -> None:
    """#18 point 3: a new entry writes no tag rows (the catch-up does, in batches); a tag
    lookup finds it all the same, and an expiry cut or a new epoch hides it there too.
    After the catch-up its tag rows are exactly its tags; re-tagging rewrites them at once
    (also before a catch-up), deleting or purging an entry takes them with it."""
    directory = tmp_path / "cache"
    storage = make_storage("disk", directory)
    first, second = put(storage, 1), put(storage, 2)
    assert tag_rows(directory) == []  # queued
    assert storage.keys_for("tag", ["t1"]) == {first}
    assert storage.keys_for("tag", ["all", "nothing"]) == {first, second}
    retagged = dataclasses.replace(entry(2), tags=("t6",))
    storage.put(second, encode_entry(retagged), retagged.info(second), None)  # still queued
    assert storage.keys_for("tag", ["t2", "all"]) == {first}
    assert storage.keys_for("tag", ["t6"]) == {second}
    storage.housekeeping(1.0)  # the catch-up
    assert tag_rows(directory) == [("all", first), ("t1", first), ("t6", second)]
    assert storage.keys_for("tag", ["all", "t6"]) == {first, second}
    retagged = dataclasses.replace(entry(1), tags=("t5",))
    storage.put(first, encode_entry(retagged), retagged.info(first), None)
    assert tag_rows(directory) == [("t5", first), ("t6", second)]
    third = put(storage, 3, expires=1500.0)  # queued, then hidden by the expiry cut
    assert storage.keys_for("tag", ["t3"]) == {third}
    storage.invalidate_expired(1600.0)  # (which has the catch-up move it first)
    assert storage.keys_for("tag", ["t3", "all"]) == set()
    ninth = put(storage, 9, expires=1550.0)  # queued, and hidden by the cut made before
    assert storage.keys_for("tag", ["t2", "all"]) == set()
    storage.delete([second])
    # The hidden third row's tag rows stay until GC deletes it; the queued ninth has none.
    assert tag_rows(directory) == [("all", third), ("t3", third), ("t5", first)]
    assert ninth not in storage.keys_for("host", None)
    assert storage.keys_for("tag", ["t5", "t6"]) == {first}
    fourth = put(storage, 4)
    storage.invalidate_all()  # queued and caught-up rows of the old epoch: found by neither
    assert storage.keys_for("tag", ["t5", "t4", "all"]) == set()
    assert fourth not in storage.keys_for("host", None)
    storage.close()


def test_a_tag_lookup_writes_a_long_queue_of_tag_rows_first(tmp_path: Path) -> None:
    """More queued rows than a lookup reads one by one (`SEARCH_CATCH_UP`): the lookup has the
    catch-up write their tag rows first, and finds every entry."""
    storage = make_storage("disk", tmp_path / "cache")
    keys = {put(storage, number) for number in range(SEARCH_CATCH_UP + 100)}
    assert len(tag_rows(tmp_path / "cache")) == 0
    assert storage.keys_for("tag", ["all"]) == keys
    connection = storage._connection()  # type: ignore[attr-defined]
    assert connection.execute("SELECT COUNT(*) FROM search_pending").fetchone()[0] == 0
    assert len(tag_rows(tmp_path / "cache")) == 2 * len(keys)
    storage.close()


def indexed_rows(directory: Path) -> int:
    """Entry rows in the URL, path and host indexes (moved there by the catch-up)."""
    with sqlite3.connect(directory / "index.sqlite3") as connection:
        found = connection.execute("SELECT COUNT(*) FROM entries WHERE indexed = 1").fetchone()
    return int(found[0])


def test_url_path_and_host_lookups_find_queued_rows_before_and_after_the_catch_up(
    tmp_path: Path,
) -> None:
    """Layout 7: a new entry row is in none of the URL, path and host indexes (a miss writes
    no page of them) until the catch-up; lookups by URL, path and host, and the hosts a purge
    of the site checks, find it all the same, and an expiry cut or a new epoch hides it there
    as in the indexes."""
    directory = tmp_path / "cache"
    storage = make_storage("disk", directory)
    first, second = put(storage, 1), put(storage, 2, host="other.org")
    assert indexed_rows(directory) == 0  # queued
    connection = storage._connection()  # type: ignore[attr-defined]
    plan = " ".join(
        str(row)
        for row in connection.execute(
            "EXPLAIN QUERY PLAN SELECT key FROM entries WHERE url = 'x' AND indexed = 1"
        )
    )
    assert "entries_url" in plan  # the partial index serves the lookups

    def found() -> tuple[set[str], ...]:
        return (
            storage.keys_for("url", ["http://example.org/p1", "http://other.org/p2"]),
            storage.keys_for("path", ["/p2"]),
            storage.keys_for("host", ["other.org", "nowhere.org"]),
        )

    assert found() == ({first, second}, {second}, {second})
    assert disk_epochs.hosts(connection) == {"example.org", "other.org"}
    storage.housekeeping(1.0)  # the catch-up
    assert indexed_rows(directory) == 2
    assert found() == ({first, second}, {second}, {second})
    assert disk_epochs.hosts(connection) == {"example.org", "other.org"}
    third = put(storage, 3, host="third.org", expires=1500.0)  # queued, then hidden
    assert storage.keys_for("url", ["http://third.org/p3"]) == {third}
    assert disk_epochs.hosts(connection) == {"example.org", "other.org", "third.org"}
    storage.invalidate_expired(1600.0)
    assert storage.keys_for("url", ["http://third.org/p3"]) == set()
    assert storage.keys_for("host", ["third.org"]) == set()
    fourth = put(storage, 4, host="fourth.org")
    storage.invalidate_all()  # queued and indexed rows of the old epoch: found by neither
    assert storage.keys_for("url", ["http://example.org/p1", "http://fourth.org/p4"]) == set()
    assert storage.keys_for("host", ["fourth.org", "other.org"]) == set()
    assert fourth not in storage.keys_for("path", ["/p4"])
    assert disk_epochs.hosts(connection) == set()
    storage.close()


def raw_totals(directory: Path) -> int:
    """The current epoch's page count as the totals table holds it (no catch-up)."""
    with sqlite3.connect(directory / "index.sqlite3") as connection:
        found = connection.execute(
            "SELECT entries FROM totals WHERE epoch = (SELECT current FROM epoch)"
        ).fetchone()
    return int(found[0])


def test_a_miss_writes_no_index_row_and_every_reader_sees_it(tmp_path: Path) -> None:
    """Layout 7: a stored page is counted, listed and ordered only by the catch-up, which the
    listing, the counts, a purge of everything and of the expired pages, and GC's steps run
    first: they see every stored page, and a purge reports every page it hid."""
    directory = tmp_path / "cache"
    storage = make_storage("disk", directory)
    keys = [put(storage, number, created=1000.0 + number) for number in range(5)]
    assert (indexed_rows(directory), raw_totals(directory)) == (0, 0)
    assert storage.summary(2000.0).total == 5
    assert (indexed_rows(directory), raw_totals(directory)) == (5, 5)
    late = put(storage, 5, created=1100.0, expires=1500.0)
    rows, total = storage.list_entries(0, 10, now=2000.0, status="expired")
    assert ([info.key for info in rows], total) == ([late], 1)
    put(storage, 6, created=900.0)
    rows, total = storage.list_entries(0, 10, now=1200.0)
    assert [info.key for info in rows] == [late, *reversed(keys), f"{6:032x}"]
    assert total == 7
    put(storage, 7, expires=1400.0)
    assert storage.expired_keys(2000.0, 10) == [f"{7:032x}", late]
    assert storage.invalidate_expired(1600.0).deleted == 2  # the queued row too
    put(storage, 8)
    # The epoch's totals: its nine rows, the two the cut hides (not yet deleted) among them.
    assert storage.invalidate_all().deleted == 9
    assert raw_totals(directory) == 0
    storage.close()


def test_a_url_lookup_indexes_a_long_queue_first(tmp_path: Path) -> None:
    """More queued rows than a lookup reads one by one (`SEARCH_CATCH_UP`): a URL lookup has
    the catch-up put them in the indexes first, and finds its entry."""
    storage = make_storage("disk", tmp_path / "cache")
    keys = [put(storage, number) for number in range(SEARCH_CATCH_UP + 100)]
    assert indexed_rows(tmp_path / "cache") == 0
    assert storage.keys_for("url", ["http://example.org/p7"]) == {keys[7]}
    assert indexed_rows(tmp_path / "cache") == len(keys)
    storage.close()


# ---------------------------------------------------------------------- Redis's epochs
def test_redis_removes_the_first_layouts_keys_and_keeps_the_shared_ones(tmp_path: Path) -> None:
    storage = make_storage("redis", tmp_path)
    try:
        client = storage.client  # type: ignore[attr-defined]
        prefix = storage.prefix  # type: ignore[attr-defined]
        for number in range(5):
            put(storage, number)
        storage.set_value("preload", b"x")
        assert storage.acquire_lock("timers", "me", 30)
        assert client.exists(prefix + "i")  # epoch 0 is the namespace's own prefix
        token = storage.generation()
        assert token.epoch is None  # type: ignore[attr-defined]
        storage.invalidate_all()
        assert storage.generation().epoch == b"1"  # type: ignore[attr-defined]
        key = put(storage, 9)
        assert client.exists(f"{prefix}1:e:{key}")
        while storage.remove_invalidated(0.0):
            pass
        assert not client.exists(prefix + "i")
        assert not client.keys(prefix + "e:*")
        assert storage.get_value("preload") == b"x"
        assert storage.lock_owner("timers") == "me"
        assert storage.get(key) is not None
        assert storage.get(key, storage.generation()) is not None
    finally:
        storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


def test_redis_namespaces_with_glob_characters_are_swept_alone(tmp_path: Path) -> None:
    from sitecache.cache.storage.redis import RedisStorage

    plain = make_storage("redis", tmp_path)
    odd = RedisStorage(REDIS_URL, f"t[*]?-{uuid.uuid4().hex}")
    try:
        put(odd, 1)
        put(plain, 1)
        odd.invalidate_all()
        while odd.remove_invalidated(0.0):
            pass
        assert plain.get(f"{1:032x}") is not None
        assert odd.get(f"{1:032x}") is None
    finally:
        for store in (odd, plain):
            store.clear_namespace()  # type: ignore[attr-defined]
            store.close()


@given(
    hidden=st.sets(st.integers(min_value=0, max_value=60)),
    offset=st.integers(min_value=0, max_value=70),
    limit=st.integers(min_value=1, max_value=20),
)
def test_the_fresh_page_span_skips_exactly_the_hidden_ranks(
    hidden: set[int], offset: int, limit: int
) -> None:
    ranks = sorted(hidden)
    start, stop = visible_span(ranks, offset, limit)
    shown = [rank for rank in range(stop + 50) if rank not in hidden]
    assert [rank for rank in range(start, stop) if rank not in hidden] == shown[
        offset : offset + limit
    ]
    assert start == shown[offset]
