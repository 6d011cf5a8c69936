"""A disposable cache is never fatal (#29): a damaged, foreign or unwritable disk index.

A damaged index (corrupt pages, not a database, another program's tables) found when it is
opened or by any statement is moved aside as ``index.sqlite3.corrupt-<UTC time>`` once, the
cache starts empty, and every instance reopens on the new index; while the store cannot be
used at all, every call fails at once with `StorageUnusable` and one call a second tries again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from sitecache.cache import CacheEngine, DiskStorage
from sitecache.cache.entry import CacheEntry, encode_entry
from sitecache.cache.purging import PurgeResult
from sitecache.cache.storage import StorageUnusable, disk_connections
from sitecache.cache.storage.disk_recovery import failure_kind, quarantined_copies
from sitecache.cache.storage.disk_schema import LAYOUT_VERSION

HEADER = b"SQLite format 3\x00"


def entry(number: int, size: int = 3000) -> CacheEntry:
    url = f"http://example.org/page-{number}"
    return CacheEntry(
        url=url, host="example.org", path=f"/page-{number}", variant="", status=200,
        headers=(("Content-Type", "text/html"),), body=b"x" * size, gzip_body=b"",
        created=1000.0 + number, expires=0.0, tags=(f"post-{number}", "home"), etag='"e"',
    )  # fmt: skip


def fill(storage: DiskStorage, count: int = 200) -> list[str]:
    keys = [f"{number:032x}" for number in range(count)]
    for number, key in enumerate(keys):
        page = entry(number)
        assert storage.put(key, encode_entry(page), page.info(key), None)
    return keys


def settle(directory: Path) -> None:
    """Every page of the index in the database file itself (no WAL left to hide a page)."""
    with contextlib.closing(sqlite3.connect(directory / "index.sqlite3")) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def overwrite(path: Path, offset: int, size: int) -> None:
    with path.open("r+b") as file:
        file.seek(offset)
        file.write(os.urandom(size))


def copies(directory: Path) -> list[Path]:
    return quarantined_copies(directory / "index.sqlite3")


# ---------------------------------------------------------------------- at open
@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda path: overwrite(path, 0, 100), id="header"),
        pytest.param(lambda path: path.write_bytes(b"not a database at all\n" * 300), id="text"),
        pytest.param(lambda path: overwrite(path, 4096, path.stat().st_size - 8192), id="pages"),
    ],
)
def test_a_damaged_index_is_moved_aside_at_open_and_the_cache_starts_empty(
    tmp_path: Path, damage: Any
) -> None:
    storage = DiskStorage(tmp_path)
    keys = fill(storage)
    storage.close()
    settle(tmp_path)
    damage(tmp_path / "index.sqlite3")

    reopened = DiskStorage(tmp_path)  # the first draft raised "file is not a database" here
    kinds = set()
    for _ in range(2):  # damaged pages are found by the first read of them
        try:
            found = [reopened.get(key) for key in keys]
            break
        except StorageUnusable as unusable:
            kinds.add(unusable.kind)
    assert kinds <= {"damaged"}
    assert found == [None] * len(keys)  # empty, and usable
    [moved] = copies(tmp_path)
    assert moved.name.startswith("index.sqlite3.corrupt-")
    assert moved.name.endswith("Z")
    page = entry(1)
    assert reopened.put("k" * 32, encode_entry(page), page.info("k" * 32), None)
    assert reopened.get("k" * 32) == encode_entry(page)
    assert [code for code, _ in reopened.warnings()] == ["cache_storage_rebuilt"]
    reopened.close()


def test_another_programs_database_under_the_index_name_is_moved_aside(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "index.sqlite3") as foreign:
        foreign.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, what TEXT)")
        foreign.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")  # even claiming our layout
    storage = DiskStorage(tmp_path)  # the first draft failed on every call
    assert storage.acquire_lock("regen:a", "me", 30)
    assert len(copies(tmp_path)) == 1
    # Tables that are not ours found while serving (another program wrote into the file).
    with sqlite3.connect(tmp_path / "index.sqlite3") as foreign:
        foreign.execute("DROP TABLE locks")
        foreign.execute("CREATE TABLE locks (id INTEGER PRIMARY KEY, what TEXT)")
    with pytest.raises(StorageUnusable) as raised:
        storage.acquire_lock("regen:b", "me", 30)
    assert raised.value.kind == "damaged"
    assert storage.acquire_lock("regen:b", "me", 30)  # the new, empty index
    assert len(copies(tmp_path)) == 1  # the newest copy only
    storage.close()


# ---------------------------------------------------------------------- while serving
def test_damage_found_while_serving_is_moved_aside_once_and_every_instance_reopens(
    tmp_path: Path,
) -> None:
    first, second = DiskStorage(tmp_path), DiskStorage(tmp_path)
    keys = fill(first)
    assert second.get(keys[0]) is not None
    before = first.generation()
    resets: list[str] = []
    first.on_reset(resets.append)
    first.close()  # the next call opens a connection that reads the damaged file
    settle(tmp_path)
    overwrite(tmp_path / "index.sqlite3", 4096, (tmp_path / "index.sqlite3").stat().st_size - 8192)

    with pytest.raises(StorageUnusable) as raised:
        first.keys_for("host", None)  # walks every page
    assert raised.value.kind == "damaged"
    assert "corrupt-" in str(raised.value)
    assert "starts empty" in str(raised.value)
    [reset] = resets
    assert "moved aside" in reset
    # The generation moved: memory tiers forget, renders begun before are refused.
    assert first.generation() != before
    # The other instance (another worker) reopens on the new index before its next call.
    assert second.get(keys[0]) is None
    assert second.keys_for("host", None) == set()
    page = entry(7)
    assert second.put("n" * 32, encode_entry(page), page.info("n" * 32), None)
    assert first.get("n" * 32) == encode_entry(page)
    assert len(copies(tmp_path)) == 1
    first.close()
    second.close()


def test_a_render_begun_before_the_index_was_moved_aside_is_not_stored(tmp_path: Path) -> None:
    storage = DiskStorage(tmp_path)
    fill(storage, 20)
    generation = storage.generation()  # a request reads it before rendering
    storage.close()
    settle(tmp_path)
    overwrite(tmp_path / "index.sqlite3", 0, 100)
    other = DiskStorage(tmp_path)  # another process finds the damage and moves it aside
    page = entry(3)
    assert not storage.put("r" * 32, encode_entry(page), page.info("r" * 32), None,
                           generation=generation)  # fmt: skip
    assert other.get("r" * 32) is None
    storage.close()
    other.close()


def test_only_the_newest_quarantined_copy_is_kept(tmp_path: Path) -> None:
    for _ in range(3):
        storage = DiskStorage(tmp_path)
        fill(storage, 5)
        storage.close()
        settle(tmp_path)
        overwrite(tmp_path / "index.sqlite3", 0, 100)
        time.sleep(0.01)
    DiskStorage(tmp_path).close()
    DiskStorage(tmp_path).close()
    names = sorted(path.name for path in tmp_path.iterdir() if "corrupt" in path.name)
    assert len(copies(tmp_path)) == 1
    assert all(name.startswith(copies(tmp_path)[0].name) for name in names)


# ---------------------------------------------------------------------- cannot be used
def test_an_index_that_cannot_be_moved_aside_fails_fast_until_it_can(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = DiskStorage(tmp_path)
    fill(storage, 5)
    storage.close()
    settle(tmp_path)
    overwrite(tmp_path / "index.sqlite3", 0, 100)

    def read_only(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(disk_connections, "quarantine", read_only)
    monkeypatch.setattr(disk_connections, "RETRY_INTERVAL", 0.2)
    broken = DiskStorage(tmp_path)  # boots anyway
    started = time.monotonic()
    for _ in range(50):
        with pytest.raises(StorageUnusable) as raised:
            broken.generation()
        assert raised.value.kind == "damaged"
    assert time.monotonic() - started < 0.5  # fast: no open, no SQL per call
    [(code, message)] = broken.warnings()
    assert code == "cache_storage_unusable"
    assert "cannot be moved aside" in message
    assert "Read-only file system" in message

    monkeypatch.undo()  # the directory is writable again
    monkeypatch.setattr(disk_connections, "RETRY_INTERVAL", 0.2)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            broken.generation()
            break
        except StorageUnusable:
            time.sleep(0.05)
    else:
        pytest.fail("the store did not come back once the index could be moved aside")
    assert broken.get("0" * 32) is None
    assert len(copies(tmp_path)) == 1
    broken.close()


def test_a_cache_directory_that_is_a_file_boots_and_fails_every_call_fast(
    tmp_path: Path,
) -> None:
    (tmp_path / "cache").write_text("a file", encoding="utf-8")
    storage = DiskStorage(tmp_path / "cache")
    with pytest.raises(StorageUnusable):
        storage.get("a" * 32)
    with pytest.raises(StorageUnusable):
        storage.generation()
    assert storage.warnings()[0][0] == "cache_storage_unusable"
    storage.close()


# ---------------------------------------------------------------------- the engine
def test_the_engine_tells_its_purge_listeners_when_the_store_started_empty(
    tmp_path: Path,
) -> None:
    storage = DiskStorage(tmp_path)
    fill(storage, 5)
    storage.close()
    settle(tmp_path)
    overwrite(tmp_path / "index.sqlite3", 0, 100)
    # Moved aside while opened: told to the engine's listeners once it has some.
    engine = CacheEngine(DiskStorage(tmp_path))
    told: list[PurgeResult] = []
    engine.purge_listeners.append(told.append)
    assert told == []  # the engine itself was told before its listeners came
    engine.storage.close()
    settle(tmp_path)
    overwrite(tmp_path / "index.sqlite3", 0, 100)
    other = DiskStorage(tmp_path)  # found by someone else: this engine reopens silently
    assert engine.load("0" * 32) is None
    other.close()
    # Found by this engine's own storage: a purge of everything for the listeners.
    engine.storage.close()
    settle(tmp_path)
    overwrite(tmp_path / "index.sqlite3", 0, 100)
    with pytest.raises(StorageUnusable):
        engine.load("0" * 32)
    assert [result.scope for result in told] == ["all"]
    assert engine.counters.pending().get("purge:storage_reset") == 2  # at open, and now
    engine.close()


# ---------------------------------------------------------------------- the kinds, as data
@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (sqlite3.DatabaseError("file is not a database"), None),  # no code: not judged
        (OSError(errno.ENOSPC, "No space left on device"), "full"),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), "full"),
        (OSError(errno.EROFS, "Read-only file system"), "unwritable"),
        (OSError(errno.EACCES, "Permission denied"), "unwritable"),
        (OSError(errno.ENOENT, "No such file"), None),
        (sqlite3.OperationalError("no such table: entries"), "damaged"),
        (sqlite3.OperationalError("table locks has no column named owner"), "damaged"),
        (sqlite3.OperationalError("database is locked"), None),
        (ValueError("not ours"), None),
    ],
)
def test_failure_kinds(error: BaseException, kind: str | None) -> None:
    assert failure_kind(error) == kind


def test_sqlites_own_codes_are_judged_by_their_number(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite3"
    path.write_bytes(b"garbage" * 1000)
    with pytest.raises(sqlite3.DatabaseError) as raised:
        sqlite3.connect(path).execute("PRAGMA user_version").fetchone()
    assert failure_kind(raised.value) == "damaged"
    sqlite3.connect(tmp_path / "y.sqlite3").close()
    read_only = sqlite3.connect(f"file:{tmp_path / 'y.sqlite3'}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as raised:
        read_only.execute("CREATE TABLE t (x)")
    assert failure_kind(raised.value) == "unwritable"
    read_only.close()
