"""One contract for every storage backend: memory, disk and Redis behave the same."""

from __future__ import annotations

import socket
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from sitecache.cache import CacheEntry, Storage
from sitecache.cache.entry import decode_entry, encode_entry
from sitecache.cache.storage import EntryStatus, StorageError, StorageUnavailable


def entry(url: str, *, tags: tuple[str, ...] = (), expires: float = 0.0, created: float = 1000.0,
          host: str = "example.org", variant: str = "") -> CacheEntry:  # fmt: skip
    path = "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/"
    return CacheEntry(
        url=url, host=host, path=path, variant=variant, status=200,
        headers=(("Content-Type", "text/html"),), body=f"<p>{url}</p>".encode(),
        gzip_body=b"gz", created=created, expires=expires, tags=tags, etag='"e"',
    )  # fmt: skip


def put(storage: Storage, key: str, value: CacheEntry, ttl: float | None = None) -> None:
    storage.put(key, encode_entry(value), value.info(key), ttl)


def test_a_stored_entry_reads_back_equal(storage: Storage) -> None:
    original = entry("http://example.org/a", tags=("home", "post-1"))
    put(storage, "k" * 32, original)
    assert decode_entry(storage.get("k" * 32)) == original


def test_an_unknown_key_reads_as_nothing(storage: Storage) -> None:
    assert storage.get("0" * 32) is None


def test_a_put_replaces_the_entry_and_its_index_row(storage: Storage) -> None:
    put(storage, "a" * 32, entry("http://example.org/a", tags=("old",)))
    put(storage, "a" * 32, entry("http://example.org/a", tags=("new",)))
    assert storage.keys_for("tag", ["old"]) == set()
    assert storage.keys_for("tag", ["new"]) == {"a" * 32}
    assert storage.summary(2000.0).total == 1


def test_a_put_keeps_or_rewrites_the_tag_rows_as_its_tags_require(storage: Storage) -> None:
    key, url = "a" * 32, "http://example.org/a"

    def tagged(*tags: str) -> dict[str, set[str]]:
        return {tag: storage.keys_for("tag", [tag]) for tag in tags}

    put(storage, key, entry(url, tags=("x", "y")))
    put(storage, key, entry(url, tags=("x", "y"), created=2000.0))  # regenerated: same tags
    assert tagged("x", "y") == {"x": {key}, "y": {key}}
    put(storage, key, entry(url, tags=("y", "z")))
    assert tagged("x", "y", "z") == {"x": set(), "y": {key}, "z": {key}}
    storage.delete([key])
    assert tagged("y", "z") == {"y": set(), "z": set()}
    put(storage, key, entry(url, tags=("y", "z")))
    assert tagged("y", "z") == {"y": {key}, "z": {key}}
    put(storage, key, entry(url))
    assert tagged("y", "z") == {"y": set(), "z": set()}


def test_delete_removes_entries_and_reports_what_was_there(storage: Storage) -> None:
    put(storage, "a" * 32, entry("http://example.org/a"))
    put(storage, "b" * 32, entry("http://example.org/b"))
    report = storage.delete(["a" * 32, "c" * 32])
    assert report.deleted == 1
    assert report.urls == ["http://example.org/a"]
    assert report.bytes == len(b"<p>http://example.org/a</p>") + 2
    assert storage.get("a" * 32) is None
    assert storage.get("b" * 32) is not None
    assert storage.summary(2000.0).total == 1


def test_tags_urls_paths_and_hosts_find_their_keys(storage: Storage) -> None:
    put(storage, "a" * 32, entry("http://example.org/a", tags=("home", "post-1")))
    put(storage, "b" * 32, entry("http://example.org/b", tags=("post-2",)))
    put(storage, "c" * 32, entry("http://example.org/a", tags=("home",), variant="mobile"))
    put(storage, "d" * 32, entry("http://other.org/a", host="other.org"))
    assert storage.keys_for("tag", ["home"]) == {"a" * 32, "c" * 32}
    assert storage.keys_for("tag", ["post-2", "nothing"]) == {"b" * 32}
    assert storage.keys_for("url", ["http://example.org/a"]) == {"a" * 32, "c" * 32}
    assert storage.keys_for("path", ["/a"]) == {"a" * 32, "c" * 32, "d" * 32}
    assert storage.keys_for("host", ["other.org"]) == {"d" * 32}
    assert storage.keys_for("host", None) == {"a" * 32, "b" * 32, "c" * 32, "d" * 32}
    assert {info.key for info in storage.infos(["a" * 32, "z" * 32])} == {"a" * 32}


def test_counting_and_listing_go_through_the_index(storage: Storage) -> None:
    for number in range(25):
        put(storage, f"{number:032d}", entry(f"http://example.org/p{number}",
            created=1000.0 + number, expires=1500.0 if number % 5 == 0 else 0.0))  # fmt: skip
    summary = storage.summary(2000.0)
    assert (summary.total, summary.expired, summary.fresh) == (25, 5, 20)
    page, total = storage.list_entries(0, 10, now=2000.0)
    assert total == 25
    assert [info.url for info in page][:2] == ["http://example.org/p24", "http://example.org/p23"]
    second, _ = storage.list_entries(20, 10, now=2000.0)
    assert len(second) == 5
    expired, total_expired = storage.list_entries(0, 10, now=2000.0, status="expired")
    assert total_expired == 5
    assert all(not info.is_fresh(2000.0) for info in expired)
    found, total_found = storage.list_entries(0, 10, now=2000.0, search="p1")
    assert total_found == 11  # p1, p10..p19
    assert all("p1" in info.url for info in found)
    assert storage.expired_keys(2000.0, 3) == [f"{n:032d}" for n in (0, 5, 10)]


def test_the_plain_listing_is_newest_created_first_whatever_the_order_of_the_puts(
    storage: Storage,
) -> None:
    # Stored out of order (a tier copying an entry keeps its time; clocks of nodes differ),
    # stored again with an older time, and with equal times: every backend lists newest
    # created first, and its pages agree with one long page (equal times in one order).
    times = {"m": 1005.0, "c": 1001.0, "x": 1003.0, "a": 1003.0, "q": 1009.0, "b": 1001.0}
    for name, created in times.items():
        put(storage, name * 32, entry(f"http://example.org/{name}", created=created))
    put(storage, "q" * 32, entry("http://example.org/q", created=1000.0))  # again, older
    times["q"] = 1000.0
    whole, total = storage.list_entries(0, 10, now=2000.0)
    assert total == len(times)
    assert {info.key for info in whole} == {name * 32 for name in times}
    assert [info.created for info in whole] == sorted(times.values(), reverse=True)
    for size in (1, 2, 4):
        paged = [
            info.key
            for offset in range(0, len(times), size)
            for info in storage.list_entries(offset, size, now=2000.0)[0]
        ]
        assert paged == [info.key for info in whole]
    put(storage, "z" * 32, entry("http://example.org/z", created=1100.0))  # in order again
    first, _ = storage.list_entries(0, 2, now=2000.0)
    assert [info.key for info in first] == ["z" * 32, "m" * 32]


def test_mark_stale_expires_entries_now_but_keeps_them(storage: Storage) -> None:
    put(storage, "a" * 32, entry("http://example.org/a", expires=0.0))
    report = storage.mark_stale(["a" * 32], 1234.0)
    assert report.deleted == 1
    stale = decode_entry(storage.get("a" * 32))
    assert stale is not None
    assert stale.expires == 1234.0
    assert storage.summary(2000.0).expired == 1


def test_named_values_counters_and_their_reset(storage: Storage) -> None:
    assert storage.get_value("settings") is None
    storage.set_value("settings", b'{"a": 1}')
    assert storage.get_value("settings") == b'{"a": 1}'
    storage.add_counters({"hit": 2, "bypass:method": 1})
    storage.add_counters({"hit": 3})
    assert storage.counters() == {"hit": 5, "bypass:method": 1}
    storage.reset_counters()
    assert storage.counters() == {}


def test_a_lock_is_held_by_one_owner_until_released_or_expired(storage: Storage) -> None:
    assert storage.acquire_lock("preload", "one", 30)
    assert not storage.acquire_lock("preload", "two", 30)
    assert storage.acquire_lock("preload", "one", 30)  # the owner may renew
    storage.release_lock("preload", "two")  # not the owner: nothing happens
    assert not storage.acquire_lock("preload", "two", 30)
    storage.release_lock("preload", "one")
    assert storage.acquire_lock("preload", "two", 0.2)
    time.sleep(0.3)
    assert storage.acquire_lock("preload", "three", 30)


def test_the_generation_changes_on_every_bump(storage: Storage) -> None:
    first = storage.generation()
    storage.bump_generation()
    second = storage.generation()
    storage.bump_generation()
    assert len({repr(first), repr(second), repr(storage.generation())}) == 3


def test_an_entry_with_a_ttl_disappears_after_it(storage: Storage, backend: str) -> None:
    if backend == "disk":
        pytest.skip("the disk backend keeps entries until GC deletes them (expiry is in the index)")
    put(storage, "a" * 32, entry("http://example.org/a"), ttl=0.2)
    assert storage.get("a" * 32) is not None
    time.sleep(0.35)
    assert storage.get("a" * 32) is None


def test_keys_with_unusual_tags_and_urls_round_trip(storage: Storage) -> None:
    odd = entry("http://example.org/caf%C3%A9?q=a%20b", tags=("tag with space", "ü-tag", "a:b"))
    put(storage, "f" * 32, odd)
    assert storage.keys_for("tag", ["ü-tag"]) == {"f" * 32}
    assert storage.keys_for("url", ["http://example.org/caf%C3%A9?q=a%20b"]) == {"f" * 32}
    assert storage.delete(["f" * 32]).deleted == 1
    assert storage.keys_for("tag", ["ü-tag"]) == set()


def test_a_disk_entry_whose_index_write_fails_is_never_served(tmp_path: Path) -> None:
    from sitecache.cache import DiskStorage

    storage = DiskStorage(tmp_path)
    blocker = sqlite3.connect(tmp_path / "index.sqlite3", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    storage._connection().execute("PRAGMA busy_timeout=50")
    with pytest.raises(StorageError):
        put(storage, "a" * 32, entry("http://example.org/a"))
    blocker.execute("ROLLBACK")
    blocker.close()
    assert storage.get("a" * 32) is None
    storage.close()


def test_a_busy_disk_index_never_holds_counters_or_locks_for_long(tmp_path: Path) -> None:
    from sitecache.cache import DiskStorage

    storage = DiskStorage(tmp_path)
    assert storage._connection(quick=True).execute("PRAGMA busy_timeout").fetchone() == (50,)
    blocker = sqlite3.connect(tmp_path / "index.sqlite3", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    with pytest.raises(StorageError):
        storage.add_counters({"hit": 1})
    with pytest.raises(StorageError):
        storage.acquire_lock("regen:x", "me", 30)
    blocker.execute("ROLLBACK")
    blocker.close()
    storage.close()


# ---------------------------------------------------------------------- publication (#15)
def test_a_put_made_under_an_older_generation_is_refused(storage: Storage) -> None:
    seen = storage.generation()
    storage.bump_generation()  # a purge began after the page was rendered
    value = entry("http://example.org/a", tags=("post-1",))
    refused = storage.put("a" * 32, encode_entry(value), value.info("a" * 32), None,
                          generation=seen)  # fmt: skip
    assert refused is False
    assert storage.get("a" * 32) is None
    assert storage.keys_for("tag", ["post-1"]) == set()
    assert storage.summary(2000.0).total == 0
    now = storage.generation()
    assert storage.put("a" * 32, encode_entry(value), value.info("a" * 32), None, generation=now)
    assert decode_entry(storage.get("a" * 32)) == value


def test_an_unconditional_put_stores_whatever_the_generation(storage: Storage) -> None:
    storage.bump_generation()
    value = entry("http://example.org/a")
    assert storage.put("a" * 32, encode_entry(value), value.info("a" * 32), None) is True
    assert storage.get("a" * 32) is not None


def test_a_lock_names_its_owner_until_released_or_expired(storage: Storage) -> None:
    assert storage.lock_owner("fill:x") is None
    assert storage.acquire_lock("fill:x", "one", 0.3)
    assert storage.lock_owner("fill:x") == "one"
    storage.release_lock("fill:x", "one")
    assert storage.lock_owner("fill:x") is None
    assert storage.acquire_lock("fill:x", "two", 0.2)
    time.sleep(0.3)
    assert storage.lock_owner("fill:x") is None


def test_puts_and_purges_racing_leave_nothing_a_purge_cannot_reach(storage: Storage) -> None:
    """Writers (each with the generation it read first) and purgers of the same keys run
    together; afterwards one purge of everything must leave no entry readable."""
    import threading

    from sitecache.cache import CacheEngine

    engine = CacheEngine(storage)
    keys = [f"{number:032x}" for number in range(12)]
    stop = threading.Event()
    failures: list[BaseException] = []

    def writer(offset: int) -> None:
        number = offset
        while not stop.is_set():
            key = keys[number % len(keys)]
            value = entry(f"http://example.org/{key}", tags=("t", f"k{number % 3}"))
            seen = storage.generation()
            try:
                storage.put(key, encode_entry(value), value.info(key), None, generation=seen)
            except Exception as exc:  # a busy disk index may refuse; anything else fails
                if "locked" not in str(exc) and "busy" not in str(exc):
                    failures.append(exc)
            number += 1

    def purger() -> None:
        number = 0
        while not stop.is_set():
            try:
                engine.purge_tags([f"k{number % 3}"])
            except Exception as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    failures.append(exc)
            number += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    threads.append(threading.Thread(target=purger))
    for thread in threads:
        thread.start()
    time.sleep(0.6)
    stop.set()
    for thread in threads:
        thread.join()
    assert not failures, failures
    engine.purge_all()
    assert [key for key in keys if storage.get(key) is not None] == []
    assert storage.summary(2000.0).total == 0


def test_eviction_candidates_are_the_soonest_to_expire_then_the_oldest(storage: Storage) -> None:
    put(storage, "a" * 32, entry("http://example.org/a", expires=5000.0, created=10.0))
    put(storage, "b" * 32, entry("http://example.org/b", expires=3000.0, created=20.0))
    put(storage, "c" * 32, entry("http://example.org/c", expires=0.0, created=30.0))
    put(storage, "d" * 32, entry("http://example.org/d", expires=0.0, created=5.0))
    assert storage.eviction_candidates(2) == ["b" * 32, "a" * 32]
    assert storage.eviction_candidates(10) == ["b" * 32, "a" * 32, "d" * 32, "c" * 32]


# ---------------------------------------------------------------------- the base's composites
def test_eviction_crosses_from_expiring_to_never_expiring_entries_in_one_order(
    storage: Storage,
) -> None:
    """Expiring entries older than never-expiring ones are not taken twice; equal times are
    ordered by key."""
    assert storage.eviction_candidates(5) == []
    put(storage, "a" * 32, entry("http://example.org/a", expires=5000.0, created=10.0))
    put(storage, "b" * 32, entry("http://example.org/b", expires=3000.0, created=20.0))
    put(storage, "e" * 32, entry("http://example.org/e", expires=3000.0, created=1.0))
    put(storage, "c" * 32, entry("http://example.org/c", expires=0.0, created=30.0))
    put(storage, "f" * 32, entry("http://example.org/f", expires=0.0, created=5.0))
    put(storage, "d" * 32, entry("http://example.org/d", expires=0.0, created=5.0))
    assert storage.eviction_candidates(0) == []
    assert storage.eviction_candidates(1) == ["b" * 32]
    assert storage.eviction_candidates(4) == ["b" * 32, "e" * 32, "a" * 32, "d" * 32]
    assert storage.eviction_candidates(6) == [key * 32 for key in "beadfc"]
    assert storage.eviction_candidates(60) == [key * 32 for key in "beadfc"]
    assert storage.expired_keys(4000.0, 10) == ["b" * 32, "e" * 32]
    assert storage.expired_keys(2999.0, 10) == []


def test_keys_for_each_dimension_past_a_batch_of_values(storage: Storage) -> None:
    put(storage, "a" * 32, entry("http://example.org/a", tags=("t-1",)))
    put(storage, "b" * 32, entry("http://other.org/b", tags=("t-700",), host="other.org"))
    many = [f"absent-{number}" for number in range(1200)]  # several lookup batches on disk
    assert storage.keys_for("tag", [*many, "t-1", "t-700"]) == {"a" * 32, "b" * 32}
    assert storage.keys_for("url", [*many, "http://other.org/b"]) == {"b" * 32}
    assert storage.keys_for("path", iter([*many, "/a", "/a"])) == {"a" * 32}
    assert storage.keys_for("host", [*many, "example.org"]) == {"a" * 32}
    assert storage.keys_for("host", None) == {"a" * 32, "b" * 32}
    for dimension in ("tag", "url", "path", "host"):
        assert storage.keys_for(dimension, []) == set()
    with pytest.raises(ValueError, match="needs values"):
        storage.keys_for("tag", None)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="unknown"):
        storage.keys_for("variant", ["mobile"])  # type: ignore[call-overload]


def test_batched_deletes_soft_purges_and_rows_report_each_entry_once(storage: Storage) -> None:
    keys = [f"{number:032x}" for number in range(1100)]  # three batches of 500
    for key in keys[::250]:
        put(storage, key, entry(f"http://example.org/{key}", expires=1500.0 if key == keys[0]
            else 0.0))  # fmt: skip
    stored = keys[::250]
    assert [info.key for info in storage.infos([*reversed(keys), keys[0]])] == stored
    stale = storage.mark_stale([*keys, *keys], 2000.0)
    assert (stale.deleted, len(stale.urls)) == (5, 5)
    rows = {info.key: info.expires for info in storage.infos(stored)}
    assert rows[keys[0]] == 1500.0  # already expired: its expiry stays
    assert {rows[key] for key in stored[1:]} == {2000.0}
    assert decode_entry(storage.get(stored[1])).expires == 2000.0  # type: ignore[union-attr]
    assert storage.mark_stale(["z" * 32], 2000.0).deleted == 0
    removed = storage.delete(reversed(keys))
    assert removed.deleted == 5
    assert sorted(removed.urls) == sorted(f"http://example.org/{key}" for key in stored)
    assert storage.delete(keys).deleted == 0
    assert storage.summary(2000.0).total == 0


def test_vary_pointers_are_neither_counted_nor_listed(storage: Storage) -> None:
    pointer = CacheEntry(url="http://example.org/a", host="example.org", path="/a", variant="",
                         status=0, headers=(), body=b"", gzip_body=b"", created=1000.0,
                         expires=1500.0, vary=("accept-language",))  # fmt: skip
    put(storage, "p" * 32, pointer)
    put(storage, "a" * 32, entry("http://example.org/a", expires=1500.0))
    summary = storage.summary(2000.0)
    assert (summary.total, summary.expired, summary.fresh) == (1, 1, 0)
    assert storage.summary(1000.0).expired == 0
    storage.mark_stale(["p" * 32, "a" * 32], 1200.0)
    assert storage.summary(1300.0).expired == 1
    for status in (None, "expired"):
        rows, total = storage.list_entries(0, 10, now=2000.0, status=status)
        assert ([info.key for info in rows], total) == (["a" * 32], 1)
    assert storage.delete(["p" * 32]).deleted == 1
    assert storage.summary(2000.0).expired == 1


def test_list_filters_agree_on_case_wildcards_and_pages(storage: Storage) -> None:
    urls = ["http://example.org/100%", "http://example.org/a_b", "http://example.org/axb",
            "http://example.org/Post", "http://example.org/post-2"]  # fmt: skip
    for number, url in enumerate(urls):
        put(storage, f"{number:032d}", entry(url, created=1000.0 + number,
            expires=1500.0 if number % 2 else 0.0))  # fmt: skip

    def listed(offset: int = 0, limit: int = 10, **filters: Any) -> tuple[list[str], int]:
        rows, total = storage.list_entries(offset, limit, now=2000.0, **filters)
        return [info.url.rsplit("/", 1)[1] for info in rows], total

    assert listed(search="%") == (["100%"], 1)
    assert listed(search="_") == (["a_b"], 1)
    assert listed(search="POST") == (["post-2", "Post"], 2)
    assert listed(search="post", status="fresh") == (["post-2"], 1)
    assert listed(search="post", status="expired") == (["Post"], 1)
    assert listed(status="fresh") == (["post-2", "axb", "100%"], 3)
    assert listed(1, 2, status="fresh") == (["axb", "100%"], 3)
    assert listed(1, 2) == (["Post", "axb"], 5)
    assert listed(9, 2) == ([], 5)
    assert listed(9, 2, search="/a") == ([], 2)
    assert listed(1, 1, search="/a") == (["a_b"], 2)


# ---------------------------------------------------------------------- a failing store
INFO = entry("http://example.org/a").info("a" * 32)
#: Every storage method that reaches the store, as a call on a storage.
CALLS: dict[str, Callable[[Storage], object]] = {
    "get": lambda s: s.get("a" * 32),
    "put": lambda s: put(s, "a" * 32, entry("http://example.org/a")),
    "conditional put": lambda s: s.put("a" * 32, b"x", INFO, None, generation=b"1"),
    "delete": lambda s: s.delete(["a" * 32]),
    "mark_stale": lambda s: s.mark_stale(["a" * 32], 1.0),
    "keys_for": lambda s: s.keys_for("tag", ["t"]),
    "keys_for every host": lambda s: s.keys_for("host", None),
    "infos": lambda s: s.infos(["a" * 32]),
    "expired_keys": lambda s: s.expired_keys(1.0, 5),
    "eviction_candidates": lambda s: s.eviction_candidates(5),
    "list_entries": lambda s: s.list_entries(0, 5, now=1.0),
    "list_entries filtered": lambda s: s.list_entries(0, 5, now=1.0, search="a"),
    "summary": lambda s: s.summary(1.0),
    "get_value": lambda s: s.get_value("settings"),
    "set_value": lambda s: s.set_value("settings", b"{}"),
    "add_counters": lambda s: s.add_counters({"hit": 1}),
    "counters": lambda s: s.counters(),
    "reset_counters": lambda s: s.reset_counters(),
    "acquire_lock": lambda s: s.acquire_lock("x", "me", 1.0),
    "lock_owner": lambda s: s.lock_owner("x"),
    "release_lock": lambda s: s.release_lock("x", "me"),
    "generation": lambda s: s.generation(),
    "bump_generation": lambda s: s.bump_generation(),
}


class BrokenConnection:
    """A SQLite connection to a database that fails on every statement."""

    in_transaction = False

    def execute(self, *args: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    executemany = execute


@pytest.fixture(params=("disk", "redis"))  # memory cannot fail
def failing(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Storage]:
    """A disk store whose database and generation file fail, or a Redis that is not there."""
    if request.param == "disk":
        from sitecache.cache import DiskStorage

        storage: Any = DiskStorage(tmp_path / "cache")
        monkeypatch.setattr(storage, "_connection", lambda quick=False: BrokenConnection())
        storage._generation_file = str(tmp_path / "cache" / "index.sqlite3" / "generation")
    else:
        from sitecache.cache.storage.redis import RedisStorage

        with socket.socket() as probe:  # a port nothing listens on
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        storage = RedisStorage(f"redis://127.0.0.1:{port}/0", "gone", timeout=0.2)
    yield storage
    monkeypatch.undo()
    storage.close()


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_failing_store_raises_only_storage_errors_naming_the_store(
    failing: Storage, call: Callable[[Storage], object]
) -> None:
    with pytest.raises(StorageError) as caught:
        call(failing)
    if failing.backend == "redis":
        assert type(caught.value) is StorageUnavailable
        assert str(caught.value).startswith("Redis ")
        assert isinstance(caught.value.__cause__, redis.ConnectionError)
    else:
        assert type(caught.value) is StorageError
        assert str(caught.value).startswith("disk cache ")
        assert isinstance(caught.value.__cause__, (sqlite3.Error, OSError))


@pytest.mark.parametrize("search", ["\x00", "post\x00", "\x00post", "\x00\x00\x00x"])
def test_a_search_holding_a_nul_matches_nothing(storage: Storage, search: str) -> None:
    # No stored URL holds a NUL; SQLite's LIKE would stop at it and match everything.
    for number, url in enumerate(["http://example.org/post", "http://example.org/other"]):
        put(storage, f"{number:032d}", entry(url, created=1000.0 + number))
    assert storage.list_entries(0, 10, now=2000.0, search=search) == ([], 0)
    assert storage.list_entries(0, 10, now=2000.0, search=search, status="fresh") == ([], 0)


def test_an_offset_far_past_the_end_lists_nothing_and_counts_all(storage: Storage) -> None:
    # The farthest offset the reports ask (2**62, however large the page): no backend
    # overflows adding the page size to it.
    put(storage, "1" * 32, entry("http://example.org/a"))
    cases: list[tuple[str, EntryStatus | None]] = [
        ("", None),
        ("a", None),
        ("exa", None),
        ("", "fresh"),
    ]
    for search, status in cases:
        found = storage.list_entries(2**62, 100, now=2000.0, search=search, status=status)
        assert found == ([], 1)


def test_announcements_reach_every_reader_of_a_shared_store_in_order(
    storage: Storage, backend: str
) -> None:
    start = storage.announcements(None)
    if backend != "redis":  # one machine's store: nothing to follow
        storage.announce(b"x")
        assert start is None
        assert storage.announcements("0") is None
        return
    assert start is not None
    assert (start.records, start.complete) == ([], True)
    storage.announce(b"a")
    storage.announce(b"b")
    later = storage.announcements(start.cursor)
    assert later is not None
    assert (later.records, later.complete) == ([b"a", b"b"], True)
    quiet = storage.announcements(later.cursor)
    assert quiet is not None
    assert (quiet.records, quiet.cursor, quiet.complete) == ([], later.cursor, True)
    assert storage.announcements(None) == quiet  # where a new reader starts


def test_a_reader_learns_of_announcements_it_can_no_longer_read(
    storage: Storage, backend: str
) -> None:
    if backend != "redis":
        pytest.skip("one machine's store announces nothing")
    from sitecache.cache.storage.redis import RedisStorage

    assert isinstance(storage, RedisStorage)
    start = storage.announcements(None)
    assert start is not None
    for record in (b"a", b"b", b"c"):
        storage.announce(record)
    storage.client.xtrim(storage._key("an"), maxlen=1, approximate=False)
    gap = storage.announcements(start.cursor)
    assert gap is not None
    assert (gap.records, gap.complete) == ([b"c"], False)
    storage.clear_namespace()  # its numbers start again
    cleared = storage.announcements(gap.cursor)
    assert cleared is not None
    assert (cleared.records, cleared.complete) == ([], False)


def test_a_store_back_replaces_only_the_very_entry_it_read(storage: Storage) -> None:
    # #32: a compressed copy made by a hit is stored back over the entry that hit read, never
    # over a purged entry, one a soft purge made stale, another render, or another epoch's.
    key = "s" * 32
    value = entry("http://example.org/a", tags=("post-1",), expires=5000.0)
    put(storage, key, value)
    richer = value.with_copy("br", b"brotli bytes")

    def store_back(read: CacheEntry) -> bool:
        return storage.put(key, encode_entry(richer), richer.info(key), None,
                           replaces=read.times)  # fmt: skip

    assert store_back(entry("http://example.org/a", expires=5000.0, created=999.0)) is False
    assert decode_entry(storage.get(key)) == value
    assert store_back(value) is True
    assert decode_entry(storage.get(key)) == richer
    storage.mark_stale([key], 2000.0)
    assert store_back(value) is False  # the soft purge stands
    stale = decode_entry(storage.get(key))
    assert stale is not None
    assert stale.expires == 2000.0
    storage.delete([key])
    assert store_back(value) is False  # the purge stands
    assert storage.get(key) is None
    assert storage.keys_for("tag", ["post-1"]) == set()
    put(storage, key, value)
    storage.invalidate_all()
    assert store_back(value) is False  # a purge of everything stands
    assert storage.get(key) is None


def test_a_put_frees_the_fill_lock_it_names_where_the_backend_can(storage: Storage) -> None:
    value = entry("http://example.org/a")
    for generation in (storage.generation(), b"an older generation"):
        assert storage.acquire_lock("fill:k", "me", 30)
        storage.put("k" * 32, encode_entry(value), value.info("k" * 32), None,
                    generation=generation, release=("fill:k", "me"))  # fmt: skip
        expected = None if storage.frees_locks_in_put else "me"
        assert storage.lock_owner("fill:k") == expected  # stored or refused alike
        storage.release_lock("fill:k", "me")
    assert storage.acquire_lock("fill:k", "another", 30)
    storage.put("k" * 32, encode_entry(value), value.info("k" * 32), None,
                release=("fill:k", "me"))  # fmt: skip
    assert storage.lock_owner("fill:k") == "another"  # never someone else's


def test_an_entry_put_as_itself_reads_back_equal_as_an_entry_and_as_bytes(
    storage: Storage,
) -> None:
    # put_entry / get_entry: what the cache stores and reads its pages with, on every backend.
    key, value = "e" * 32, entry("http://example.org/a", tags=("post-1",), expires=5000.0)
    assert storage.put_entry(key, value, None, generation=storage.generation())
    assert storage.get_entry(key) == value
    assert decode_entry(storage.get(key)) == value
    assert storage.keys_for("tag", ["post-1"]) == {key}
    assert storage.get_entry("0" * 32) is None
    seen = storage.generation()
    storage.bump_generation()
    assert storage.put_entry("f" * 32, value, None, generation=seen) is False
    assert storage.get_entry("f" * 32) is None


def test_an_entry_stored_back_as_itself_replaces_only_the_very_entry_it_read(
    storage: Storage,
) -> None:
    key = "s" * 32
    value = entry("http://example.org/a", tags=("post-1",), expires=5000.0)
    assert storage.put_entry(key, value, None)
    richer = value.with_copy("br", b"brotli bytes")
    other = entry("http://example.org/a", expires=5000.0, created=999.0)
    assert storage.put_entry(key, richer, None, replaces=other.times) is False
    assert storage.get_entry(key) == value
    assert storage.put_entry(key, richer, None, replaces=value.times) is True
    assert storage.get_entry(key) == richer
    storage.mark_stale([key], 2000.0)
    assert storage.put_entry(key, richer, None, replaces=richer.times) is False
    stale = storage.get_entry(key)
    assert stale is not None
    assert stale.expires == 2000.0
    assert decode_entry(storage.get(key)) == stale
    storage.delete([key])
    assert storage.put_entry(key, richer, None, replaces=richer.times) is False
    assert storage.get_entry(key) is None
