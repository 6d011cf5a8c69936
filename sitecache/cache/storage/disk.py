"""The disk backend, the embedded default: one SQLite database in WAL mode under a directory.

Layout under the root directory (created 0700):

- ``index.sqlite3``: every entry's index row and its encoded bytes (`bodies`), written in one
  transaction, so a reader, a purge or a crash never sees one without the other: there is no
  file a purge cannot reach and no row whose body is missing
  (`sitecache.cache.storage.disk_schema`). A new entry's tag rows, its rows of the secondary
  indexes and its share of the totals are written later, in batches (layout 7: a miss writes
  its row, its key and its bytes); lookups read the rows still waiting beside the indexes, the
  other readers have the batches written first: the queue entry is written in the row's own
  transaction. Named values, counters and locks live here too.
  WAL mode and a busy timeout make it safe for several worker processes writing at once.
- ``fill.lock``: the locks of misses being rendered, one byte each, held by the rendering
  process's open file (`sitecache.cache.storage.file_locks`; Linux), so a miss writes no lock
  rows. Elsewhere they are rows of ``locks`` like the other named locks.
- ``generation``: a small file whose inode and modification time are the purge generation, read
  with one ``stat`` per request. A bump sets its time forward with ``utime`` (no new disk space:
  it works on a full disk) while holding the database's write lock, so it is ordered with every
  conditional `put`.

The primitives of `StorageBase` are one SQL statement each (lookups: one ``IN`` query per 500
values); SQLite's and the file system's errors become `StorageError` through
`StorageBase.translate_errors`. `housekeeping` removes the files of the first layout and
returns free pages in bounded slices.

Every row records the epoch it was stored under and every query reads only the current one
(`disk_schema.LIVE`, a subquery of the same statement: a lookup pays no second query), so
`invalidate_all` is one short transaction at any size; `remove_invalidated` deletes the old
epochs' rows in transactions of `batch_size` rows. Listing pages: `disk_listing`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import struct
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage import disk_epochs
from sitecache.cache.storage.base import (
    ANY_GENERATION,
    Dimension,
    EntryStatus,
    LockStore,
    StorageBase,
    StorageError,
    StorageUnusable,
)
from sitecache.cache.storage.disk_connections import GENERATION_TEXT, IndexConnections
from sitecache.cache.storage.disk_listing import expired_page, search_page, visible_page
from sitecache.cache.storage.disk_schema import (
    COLUMNS,
    INDEXED,
    LIVE,
    LIVE_ROW,
    TAG_ROWS,
    UPSERT,
    VISIBLE,
    VISIBLE_ROW,
    info_row,
    row_to_info,
)
from sitecache.cache.storage.disk_search import (
    PENDING_ROWS,
    PENDING_TAGGED,
    SEARCH_CATCH_UP,
    add_gram_counts,
    catch_up,
    gram_counts,
    pending_count,
)
from sitecache.cache.storage.file_locks import FileLocks
from sitecache.cache.storage.index import rewrite_expires

__all__ = ["DiskStorage"]

#: `VISIBLE` of the table ``e`` (after ``+e.``: a filter only, see `disk_schema.LIVE_ROW`).
_VISIBLE_E: Final = (
    f"{LIVE} AND NOT (e.expires > 0 AND e.expires <= (SELECT expired_before FROM epoch))"  # noqa: S608
)


def _indexed_or_queued(column: str, visible: str) -> str:
    """The lookup of the visible rows whose ``column`` is one of ``{marks}`` (numbered
    parameters, read twice): through the column's partial index, and among the queued rows
    the catch-up has not put in it yet (`PENDING_ROWS`)."""
    pending = PENDING_ROWS.format(column=column, marks="{marks}")
    return (
        f"SELECT key FROM entries WHERE {column} IN ({{marks}}) AND {INDEXED} "  # noqa: S608
        f"AND {visible} UNION SELECT key FROM ({pending} AND +e.{_VISIBLE_E})"
    )


#: What `DiskStorage._lookup` asks for each dimension (``{marks}``: one numbered parameter per
#: value, ``?1`` on, each read twice: in the index and among the queued rows).
_LOOKUP: Final[dict[str, str]] = {
    # The tag rows, and the queued rows whose tag rows are not written yet (`PENDING_TAGGED`).
    "tag": "SELECT e.key FROM entry_tags t JOIN entries e ON e.rowid = t.id "  # noqa: S608
    f"WHERE t.tag IN ({{marks}}) AND +e.{_VISIBLE_E} "
    f"UNION SELECT key FROM ({PENDING_TAGGED} AND +e.{_VISIBLE_E})",
    "url": _indexed_or_queued("url", VISIBLE_ROW),
    "path": _indexed_or_queued("path", VISIBLE_ROW),
    "host": _indexed_or_queued("host", VISIBLE),
}

#: The body of a key, when its row is of the current epoch (one statement per lookup).
_GET: Final = (
    "SELECT b.data FROM entries e JOIN bodies b ON b.id = e.rowid "  # noqa: S608
    f"WHERE e.key = ?1 AND +e.{LIVE}"
)


#: The row a put replaces: its rowid, tags, whether it is of the current epoch, its times.
_OLD_ROW: Final = f"SELECT rowid, tags, {LIVE}, created, expires FROM entries WHERE key = ?"  # noqa: S608
#: The two times of `sitecache.cache.entry.CacheEntry.times`.
_TIMES: Final = struct.Struct(">dd")

#: Where `info_row` puts the tags (a JSON list) in an index row.
_TAGS: Final = COLUMNS.split(", ").index("tags")


def _marks(values: list[str]) -> str:
    return ",".join("?" * len(values))


def _numbered_marks(values: list[str]) -> str:
    return ",".join(f"?{number}" for number in range(1, len(values) + 1))


class DiskStorage(StorageBase):
    """Entries and their index in one SQLite database under ``root`` (see the module docstring)."""

    backend = "disk"
    storage_errors: ClassVar[tuple[type[BaseException], ...]] = (sqlite3.Error, OSError)
    error_label: ClassVar[str] = "disk cache"
    #: Values per lookup query (SQLite's bound on host parameters is far above it).
    lookup_batch_size: ClassVar[int | None] = 500

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.location = str(self.root)
        self._legacy_entries = self.root / "entries"
        self._generation_path = self.root / "generation"
        self._generation_file = str(self._generation_path)  # stat()ed on every request
        self._fill_locks = FileLocks(self.root / "fill.lock") if FileLocks.available() else None
        # Opens the index (a damaged one is moved aside, the cache then starts empty); a store
        # that cannot be used at all is not fatal: every call fails fast until it can.
        self._index = IndexConnections(self.root, self._generation_path, self._reset)
        self._index.start()

    # ------------------------------------------------------------------ connections
    def _connection(self, quick: bool = False) -> sqlite3.Connection:
        """This thread's connection (`IndexConnections.connection`); ``quick`` ones give up
        on a lock after 50 ms (they serve the request path: counters, regeneration locks),
        the others wait up to 10 s."""
        return self._index.connection(quick)

    def recover(self, error: BaseException, what: str) -> StorageUnusable | None:
        """A damaged index is moved aside (the cache starts empty), an unwritable store is
        given up until it can be written, a full disk fails this write
        (`IndexConnections.recover`)."""
        return self._index.recover(error, what)

    def warnings(self) -> list[tuple[str, str]]:
        """The store cannot be used now, or its index was moved aside
        (`IndexConnections.warnings`)."""
        return self._index.warnings()

    @contextlib.contextmanager
    def _transaction(self, quick: bool = False) -> Iterator[sqlite3.Connection]:
        connection = self._connection(quick)
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            if connection.in_transaction:  # SQLite may have rolled back already (SQLITE_FULL)
                connection.execute("ROLLBACK")
            raise
        else:
            connection.execute("COMMIT")

    def _query(self, sql: str, parameters: Any = ()) -> list[tuple[Any, ...]]:
        return self._connection().execute(sql, parameters).fetchall()

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection inside one read transaction (its reads agree)."""
        connection = self._connection()
        connection.execute("BEGIN")
        try:
            yield connection
        finally:
            if connection.in_transaction:
                connection.execute("COMMIT")

    # ------------------------------------------------------------------ entries
    def get(self, key: str, generation: object = None) -> bytes | None:
        del generation  # the epoch is read by the query itself
        with self.translate_errors("read"):
            row = self._connection().execute(_GET, (key,)).fetchone()
        return bytes(row[0]) if row is not None else None

    def put(
        self,
        key: str,
        data: bytes,
        info: EntryInfo,
        ttl: float | None,
        *,
        generation: object = ANY_GENERATION,
        replaces: bytes | None = None,
        release: tuple[str, str] | None = None,
    ) -> bool:
        del ttl  # expiry lives in the entry and the index; GC removes what is dead
        del release  # the fill locks are the rendering process's file locks: it frees them
        row = info_row(key, info)
        with self.translate_errors("write"), self._transaction() as connection:
            # Under the write lock, which `bump_generation` takes too: no purge can begin
            # between this check and the commit.
            if generation is not ANY_GENERATION and self.generation() != generation:
                return False
            old = connection.execute(_OLD_ROW, (key,)).fetchone()
            if replaces is not None and (
                old is None or not old[2] or old[3:] != _TIMES.unpack(replaces)
            ):
                return False  # not the entry this store-back read (see `Storage.put`)
            cursor = connection.execute(UPSERT, row)
            if old is None:
                # A new row: the insert trigger queued it, and the catch-up writes its tag
                # rows (`disk_search.catch_up`); a tag lookup reads its tags meanwhile.
                rowid = cursor.lastrowid
            else:
                # Tag rows only when they change (a regenerated page keeps its tags): each
                # tag is a page of the tag index written to the WAL. No tag row outlives
                # its entry row.
                rowid, old_tags = old[0], old[1]
                if old_tags != row[_TAGS]:
                    stale = f"DELETE FROM entry_tags WHERE {TAG_ROWS}"  # noqa: S608
                    connection.execute(stale, (rowid, old_tags))
                    connection.executemany(
                        "INSERT OR IGNORE INTO entry_tags (tag, id) VALUES (?, ?)",
                        [(tag, rowid) for tag in info.tags],
                    )
            connection.execute(
                "INSERT INTO bodies (id, data) VALUES (?, ?) "
                "ON CONFLICT(id) DO UPDATE SET data = excluded.data",
                (rowid, data),
            )
        return True

    def _rows(self, keys: list[str]) -> list[EntryInfo]:
        sql = (
            f"SELECT {COLUMNS} FROM entries WHERE key IN ({_marks(keys)}) AND {LIVE_ROW} "  # noqa: S608
            "ORDER BY key"
        )
        return [row_to_info(row) for row in self._query(sql, keys)]

    def _delete_rows(self, keys: list[str]) -> list[EntryInfo]:
        with self._transaction():
            rows = self._rows(keys)  # rows of an invalidated epoch go too, uncounted
            # The trigger removes the tag rows and the bodies with the index rows.
            self._query(f"DELETE FROM entries WHERE key IN ({_marks(keys)})", keys)  # noqa: S608
        return rows

    def _stale_rows(self, keys: list[str], now: float) -> list[EntryInfo]:
        with self._transaction() as connection:
            rows = self._rows(keys)
            for info in rows:
                if not info.is_fresh(now):
                    continue
                body = connection.execute(
                    "SELECT b.id, b.data FROM entries e JOIN bodies b ON b.id = e.rowid "
                    "WHERE e.key = ?",
                    (info.key,),
                ).fetchone()
                if body is not None:
                    connection.execute(
                        "UPDATE bodies SET data = ? WHERE id = ?",
                        (rewrite_expires(bytes(body[1]), now), body[0]),
                    )
                connection.execute("UPDATE entries SET expires = ? WHERE key = ?", (now, info.key))
        return rows

    # ------------------------------------------------------------------ index queries
    def _lookup(self, dimension: Dimension, values: list[str]) -> set[str]:
        """The keys of the visible rows matching ``values``; the lookup first has the catch-up
        index the queued rows when many wait (it reads the others one by one)."""
        self._catch_up_search(SEARCH_CATCH_UP, float("inf"))
        sql = _LOOKUP[dimension].format(marks=_numbered_marks(values))
        return {row[0] for row in self._query(sql, values)}

    def _all_keys(self) -> set[str]:
        return {row[0] for row in self._query(f"SELECT key FROM entries WHERE {VISIBLE}")}  # noqa: S608

    def _soonest_expiring(self, before: float, limit: int) -> list[str]:
        self._index_queued()
        sql = (
            f"SELECT key FROM entries WHERE {LIVE} AND {INDEXED} "  # noqa: S608
            "AND expires > 0 AND expires <= ? ORDER BY expires, key LIMIT ?"
        )
        return [row[0] for row in self._query(sql, (before, limit))]

    def _oldest_stored(self, limit: int) -> list[str]:
        self._index_queued()
        sql = (
            f"SELECT key FROM entries WHERE {LIVE} AND {INDEXED} "  # noqa: S608
            "ORDER BY created, key LIMIT ?"
        )
        return [row[0] for row in self._query(sql, (limit,))]

    def _newest(self, offset: int, limit: int) -> tuple[list[EntryInfo], int]:
        self._index_queued()
        with self._snapshot() as connection:
            return visible_page(connection, offset, limit, disk_epochs.cut(connection))

    def _matching(
        self, offset: int, limit: int, now: float, search: str, status: EntryStatus | None
    ) -> tuple[list[EntryInfo], int]:
        """The filters through the indexes (`disk_listing`), once the rows stored since the
        last catch-up are in them (`_index_queued`)."""
        self._index_queued()
        with self._snapshot() as connection:
            cut = disk_epochs.cut(connection)
            if search:
                return search_page(connection, offset, limit, now, search, status, cut)
            if status == "expired":
                return expired_page(connection, offset, limit, now, cut)
            return visible_page(connection, offset, limit, max(now, cut))

    def _every_row(self) -> list[EntryInfo]:
        sql = f"SELECT {COLUMNS} FROM entries WHERE {VISIBLE}"  # noqa: S608
        return [row_to_info(row) for row in self._query(sql)]

    def _counts(self, now: float) -> tuple[int, int, int, int]:
        self._index_queued()
        with self._snapshot() as connection:
            found = connection.execute(
                f"SELECT entries, bytes, compressed_bytes FROM totals WHERE {LIVE}"  # noqa: S608
            ).fetchone()
            total, size, compressed = found if found is not None else (0, 0, 0)
            cut = disk_epochs.cut(connection)
            if cut > 0:  # less what an expired purge hid (until GC has deleted it)
                pages, hidden, hidden_compressed = disk_epochs.hidden_totals(connection)
                total, size, compressed = (
                    total - pages,
                    size - hidden,
                    compressed - hidden_compressed,
                )
            sql = (
                f"SELECT COUNT(*) FROM entries WHERE {LIVE} AND {INDEXED} "  # noqa: S608
                "AND expires > ? AND expires <= ? AND status > 0"
            )
            expired = connection.execute(sql, (cut, now)).fetchone()[0]
        return int(total), int(expired), int(size), int(compressed)

    # ------------------------------------------------------------------ epochs
    def _invalidate(self) -> tuple[int, int]:
        self._index_queued()  # their pages and bytes are in the totals it reports
        with self._transaction() as connection:
            return disk_epochs.invalidate(connection)

    def _invalidate_expired(self, before: float) -> tuple[int, int]:
        self._index_queued()
        with self._transaction() as connection:
            return disk_epochs.invalidate_expired(connection, before)

    def _only_hosts(self, hosts: list[str]) -> bool:
        return disk_epochs.hosts(self._connection()) <= set(hosts)

    def _pending(self) -> tuple[int, int]:
        self._index_queued()
        with self._snapshot() as connection:
            return disk_epochs.pending(connection)

    def _remove_invalidated_batch(self) -> int:
        # Reads first: the timers ask every second, and most of the time nothing is queued
        # and nothing is left (no write lock taken for nothing).
        self._index_queued()
        if not disk_epochs.anything_left(self._connection()):
            return 0
        with self._transaction() as connection:
            return disk_epochs.remove_batch(connection, self.batch_size)

    # ------------------------------------------------------------------ shared state
    def get_value(self, name: str) -> bytes | None:
        with self.translate_errors("value"):
            rows = self._query("SELECT value FROM named_values WHERE name = ?", (name,))
        return bytes(rows[0][0]) if rows else None

    def set_value(self, name: str, value: bytes) -> None:
        with self.translate_errors("value"), self._transaction() as connection:
            connection.execute(
                "INSERT INTO named_values (name, value) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                (name, value),
            )

    def add_counters(self, deltas: Mapping[str, int]) -> None:
        if not deltas:
            return
        with self.translate_errors("counters"), self._transaction(quick=True) as connection:
            connection.executemany(
                "INSERT INTO counters (name, value) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                list(deltas.items()),
            )

    def counters(self) -> dict[str, int]:
        with self.translate_errors("counters"):
            rows = self._query("SELECT name, value FROM counters")
        return {name: int(value) for name, value in rows}

    def reset_counters(self) -> None:
        with self.translate_errors("counters"), self._transaction() as connection:
            connection.execute("DELETE FROM counters")

    def acquire_lock(self, name: str, owner: str, ttl: float) -> bool:
        now = time.time()
        with self.translate_errors("lock"), self._transaction(quick=True) as connection:
            cursor = connection.execute(
                "INSERT INTO locks (name, owner, expires) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET owner = excluded.owner, "
                "expires = excluded.expires WHERE locks.expires <= ? OR locks.owner = ?",
                (name, owner, now + ttl, now, owner),
            )
            return cursor.rowcount == 1

    def lock_owner(self, name: str) -> str | None:
        sql = "SELECT owner FROM locks WHERE name = ? AND expires > ?"
        with self.translate_errors("lock"):
            rows = self._query(sql, (name, time.time()))
        return str(rows[0][0]) if rows else None

    def release_lock(self, name: str, owner: str) -> None:
        with self.translate_errors("lock"), self._transaction() as connection:
            connection.execute("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))

    def fill_locks(self) -> LockStore:
        """The lock file's locks where the platform has them (no write transaction per
        miss), else the index's."""
        return self if self._fill_locks is None else self._fill_locks

    def generation(self) -> object:
        # PERF: one stat per request, with no context manager around it.
        if self._index.unusable is not None:
            self._index.check_usable()  # raises StorageUnusable while it cannot be used
        try:
            result = os.stat(self._generation_file)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"{self.error_label} generation: {exc}") from exc
        return (result.st_ino, result.st_mtime_ns, result.st_size)

    def bump_generation(self) -> None:
        with self.translate_errors("generation"), self._transaction():
            # Under the write lock (ordered with every conditional put); utime needs no free
            # space, so a purge still reaches every process when the disk is full.
            try:
                previous = os.stat(self._generation_file).st_mtime_ns
            except FileNotFoundError:
                self._generation_path.write_bytes(GENERATION_TEXT)
                previous = os.stat(self._generation_file).st_mtime_ns
            stamp = max(time.time_ns(), previous + 1)
            os.utime(self._generation_file, ns=(stamp, stamp))

    # ------------------------------------------------------------------ upkeep
    def housekeeping(self, budget: float) -> int:
        """Remove files of the first layout and return free pages, for at most ``budget``
        seconds; how many files and pages went.

        Raises:
            StorageError: the directory or the database could not be written.
        """
        deadline = time.monotonic() + budget
        with self.translate_errors("housekeeping"):
            removed, done = self._remove_legacy_files(deadline)
            if not done:
                return removed
            self._catch_up_search(0, deadline)  # the search and tag indexes, in batches
            connection = self._connection()
            free = int(connection.execute("PRAGMA freelist_count").fetchone()[0])
            if free > 256:
                # 256 pages (1 MiB) at a time keeps the write lock short.
                connection.execute("PRAGMA incremental_vacuum(256)")
                removed += min(free, 256)
        return removed

    def _index_queued(self) -> None:
        """Move every queued row into the indexes that wait for the catch-up (listing, age,
        expiry, totals: what the readers of those read), before such a read."""
        self._catch_up_search(0, float("inf"))

    def _catch_up_search(self, above: int, deadline: float) -> int:
        """Move the rows waiting for the search and tag indexes into them
        (`disk_search.catch_up`), a batch per transaction, each batch's trigrams counted after
        it (`gram_counts`), when more than ``above`` wait, until none is left or ``deadline``
        (monotonic) passed; how many moved."""
        moved = 0
        with self._snapshot() as connection:
            waiting = pending_count(connection)
        if waiting <= above:
            return 0
        while time.monotonic() < deadline:
            with self._transaction() as connection:
                done, urls = catch_up(connection)
            if urls:  # counted outside the write lock, then added in a short transaction
                counts = gram_counts(urls)
                with self._transaction() as connection:
                    add_gram_counts(connection, counts)
            moved += done
            if done == 0:
                break
        return moved

    def _remove_legacy_files(self, deadline: float) -> tuple[int, bool]:
        """Unlink the first layout's entry files until ``deadline``; how many went and
        whether none is left."""
        if not self._legacy_entries.exists():
            return 0, True
        removed = 0
        for directory, _, names in os.walk(self._legacy_entries, topdown=False):
            for name in names:
                if time.monotonic() > deadline:
                    return removed, False
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(directory, name))
                    removed += 1
        shutil.rmtree(self._legacy_entries, ignore_errors=True)
        return removed, True

    def close(self) -> None:
        if self._fill_locks is not None:
            self._fill_locks.close()
        self._index.close()
