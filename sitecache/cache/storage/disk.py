"""The disk backend, the embedded default: one SQLite database in WAL mode under a directory.

Layout under the root directory (created 0700):

- ``index.sqlite3``: every entry's index row, its tag rows and its encoded bytes (`bodies`),
  written in one transaction, so a reader, a purge or a crash never sees one without the other:
  there is no file a purge cannot reach and no row whose body is missing. Running totals are
  kept by triggers so counting never scans. Named values, counters and locks live here too.
  WAL mode and a busy timeout make it safe for several worker processes writing at once.
- ``generation``: a small file whose inode and modification time are the purge generation, read
  with one ``stat`` per request. A bump sets its time forward with ``utime`` (no new disk space:
  it works on a full disk) while holding the database's write lock, so it is ordered with every
  conditional `put`.

Databases of the first layout (entry files under ``entries/``) are emptied when opened (a cache
is disposable); `housekeeping` removes the old files in bounded slices.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage.base import (
    ANY_GENERATION,
    EntryStatus,
    RemovalReport,
    StorageError,
    StorageSummary,
)
from sitecache.cache.storage.index import rewrite_expires

__all__ = ["DiskStorage"]

#: The layout version, kept in SQLite's ``user_version``.
LAYOUT_VERSION: Final = 2
#: Keys per statement (SQLite's bound on host parameters is far above it).
CHUNK: Final = 500

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    host TEXT NOT NULL,
    path TEXT NOT NULL,
    variant TEXT NOT NULL,
    status INTEGER NOT NULL,
    size INTEGER NOT NULL,
    compressed_size INTEGER NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL,
    tags TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_url ON entries (url);
CREATE INDEX IF NOT EXISTS entries_host ON entries (host);
CREATE INDEX IF NOT EXISTS entries_path ON entries (path);
CREATE INDEX IF NOT EXISTS entries_created ON entries (created);
CREATE INDEX IF NOT EXISTS entries_expires ON entries (expires) WHERE expires > 0;
CREATE TABLE IF NOT EXISTS entry_tags (
    tag TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (tag, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entry_tags_key ON entry_tags (key);
CREATE TABLE IF NOT EXISTS bodies (key TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS totals (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    entries INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    compressed_bytes INTEGER NOT NULL
);
INSERT OR IGNORE INTO totals (id, entries, bytes, compressed_bytes) VALUES (1, 0, 0, 0);
CREATE TRIGGER IF NOT EXISTS entries_insert AFTER INSERT ON entries BEGIN
    UPDATE totals SET entries = entries + (NEW.status > 0),
        bytes = bytes + NEW.size, compressed_bytes = compressed_bytes + NEW.compressed_size;
END;
CREATE TRIGGER IF NOT EXISTS entries_delete AFTER DELETE ON entries BEGIN
    UPDATE totals SET entries = entries - (OLD.status > 0),
        bytes = bytes - OLD.size, compressed_bytes = compressed_bytes - OLD.compressed_size;
    DELETE FROM entry_tags WHERE key = OLD.key;
    DELETE FROM bodies WHERE key = OLD.key;
END;
CREATE TRIGGER IF NOT EXISTS entries_update AFTER UPDATE ON entries BEGIN
    UPDATE totals SET entries = entries - (OLD.status > 0) + (NEW.status > 0),
        bytes = bytes - OLD.size + NEW.size,
        compressed_bytes = compressed_bytes - OLD.compressed_size + NEW.compressed_size;
END;
CREATE TABLE IF NOT EXISTS named_values (name TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS locks (
    name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL
);
"""

#: The first layout's entry tables: emptied when such a database is opened.
_LEGACY_RESET: Final = """
DROP TRIGGER IF EXISTS entries_delete;
DELETE FROM entry_tags;
DELETE FROM entries;
UPDATE totals SET entries = 0, bytes = 0, compressed_bytes = 0;
"""

_COLUMNS: Final = (
    "key, url, host, path, variant, status, size, compressed_size, created, expires, tags"
)
_UPSERT: Final = (
    f"INSERT INTO entries ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?) "  # noqa: S608
    "ON CONFLICT(key) DO UPDATE SET url=excluded.url, host=excluded.host, "
    "path=excluded.path, variant=excluded.variant, status=excluded.status, "
    "size=excluded.size, compressed_size=excluded.compressed_size, "
    "created=excluded.created, expires=excluded.expires, tags=excluded.tags"
)


def _row_to_info(row: tuple[Any, ...]) -> EntryInfo:
    key, url, host, path, variant, status, size, compressed, created, expires, tags = row
    return EntryInfo(
        key=key,
        url=url,
        host=host,
        path=path,
        variant=variant,
        status=status,
        size=size,
        compressed_size=compressed,
        created=created,
        expires=expires,
        tags=tuple(json.loads(tags)),
    )


def _chunks(keys: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(keys), CHUNK):
        yield keys[start : start + CHUNK]


class DiskStorage:
    """Entries and their index in one SQLite database under ``root`` (see the module docstring)."""

    backend = "disk"

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.location = str(self.root)
        self._legacy_entries = self.root / "entries"
        self._generation_path = self.root / "generation"
        self._generation_file = str(self._generation_path)  # stat()ed on every request
        self._local = threading.local()
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._connection()  # opens the index and creates its tables
            if not self._generation_path.exists():
                self._generation_path.write_bytes(b"sitecache purge generation\n")
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"cannot open the disk cache at {self.root}: {exc}") from exc

    # ------------------------------------------------------------------ connections
    def _connection(self, quick: bool = False) -> sqlite3.Connection:
        """This thread's connection; ``quick`` ones give up on a lock after 50 ms (they serve
        the request path: counters, regeneration locks), the others wait up to 10 s."""
        name = "quick" if quick else "connection"
        pid = os.getpid()
        connection: sqlite3.Connection | None = getattr(self._local, name, None)
        if connection is not None and getattr(self._local, f"{name}_pid", None) == pid:
            return connection
        path = self.root / "index.sqlite3"
        connection = sqlite3.connect(path, timeout=0.05 if quick else 10, isolation_level=None)
        with contextlib.suppress(OSError):
            path.chmod(0o600)
        connection.execute(f"PRAGMA busy_timeout={50 if quick else 10000}")
        # The schema (a write) only when missing: a new connection must not wait on a writer.
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version != LAYOUT_VERSION:
            self._create(connection)
            connection.execute(f"PRAGMA busy_timeout={50 if quick else 10000}")
        connection.execute("PRAGMA synchronous=NORMAL")
        setattr(self._local, name, connection)
        setattr(self._local, f"{name}_pid", pid)
        return connection

    def _create(self, connection: sqlite3.Connection) -> None:
        """Create the tables (or bring a first-layout database to this one), once."""
        connection.execute("PRAGMA busy_timeout=10000")
        new = connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0
        if new:
            # Free pages go back to the file system in GC's bounded slices (`housekeeping`).
            connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version != LAYOUT_VERSION:
                legacy = connection.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries'"
                ).fetchone()
                if legacy is not None:
                    for statement in _LEGACY_RESET.split(";"):
                        if statement.strip():
                            connection.execute(statement)
                for statement in _statements(_SCHEMA):
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version={LAYOUT_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise

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

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Report a database or file-system failure as a `StorageError` naming ``what``."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(f"disk cache {what}: {exc}") from exc

    def _query(self, sql: str, parameters: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._errors("index"):
            return self._connection().execute(sql, tuple(parameters)).fetchall()

    # ------------------------------------------------------------------ entries
    def get(self, key: str) -> bytes | None:
        with self._errors("read"):
            row = (
                self._connection()
                .execute("SELECT data FROM bodies WHERE key = ?", (key,))
                .fetchone()
            )
        return bytes(row[0]) if row is not None else None

    def put(
        self,
        key: str,
        data: bytes,
        info: EntryInfo,
        ttl: float | None,
        *,
        generation: object = ANY_GENERATION,
    ) -> bool:
        del ttl  # expiry lives in the entry and the index; GC removes what is dead
        with self._errors("write"), self._transaction() as connection:
            # Under the write lock, which `bump_generation` takes too: no purge can begin
            # between this check and the commit.
            if generation is not ANY_GENERATION and self.generation() != generation:
                return False
            connection.execute(
                _UPSERT,
                (
                    key,
                    info.url,
                    info.host,
                    info.path,
                    info.variant,
                    info.status,
                    info.size,
                    info.compressed_size,
                    info.created,
                    info.expires,
                    json.dumps(list(info.tags)),
                ),
            )
            connection.execute("DELETE FROM entry_tags WHERE key = ?", (key,))
            connection.executemany(
                "INSERT OR IGNORE INTO entry_tags (tag, key) VALUES (?, ?)",
                [(tag, key) for tag in info.tags],
            )
            connection.execute(
                "INSERT INTO bodies (key, data) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET data = excluded.data",
                (key, data),
            )
        return True

    def _rows(self, keys: list[str]) -> list[EntryInfo]:
        rows: list[EntryInfo] = []
        for chunk in _chunks(keys):
            marks = ",".join("?" * len(chunk))
            rows.extend(
                _row_to_info(row)
                for row in self._query(
                    f"SELECT {_COLUMNS} FROM entries WHERE key IN ({marks})",  # noqa: S608
                    chunk,
                )
            )
        return rows

    def delete(self, keys: Iterable[str]) -> RemovalReport:
        report = RemovalReport()
        for chunk in _chunks(sorted(set(keys))):
            marks = ",".join("?" * len(chunk))
            with self._errors("delete"), self._transaction() as connection:
                rows = connection.execute(
                    f"SELECT {_COLUMNS} FROM entries WHERE key IN ({marks})",  # noqa: S608
                    chunk,
                ).fetchall()
                # The trigger removes the tag rows and the bodies with the index rows.
                connection.execute(f"DELETE FROM entries WHERE key IN ({marks})", chunk)  # noqa: S608
            for row in rows:
                report.add(_row_to_info(row))
        return report

    def mark_stale(self, keys: Iterable[str], now: float) -> RemovalReport:
        report = RemovalReport()
        for chunk in _chunks(sorted(set(keys))):
            with self._errors("soft purge"), self._transaction() as connection:
                for info in self._rows(chunk):
                    report.add(info)
                    if info.expires and info.expires <= now:
                        continue
                    row = connection.execute(
                        "SELECT data FROM bodies WHERE key = ?", (info.key,)
                    ).fetchone()
                    if row is not None:
                        connection.execute(
                            "UPDATE bodies SET data = ? WHERE key = ?",
                            (rewrite_expires(bytes(row[0]), now), info.key),
                        )
                    connection.execute(
                        "UPDATE entries SET expires = ? WHERE key = ?", (now, info.key)
                    )
        return report

    # ------------------------------------------------------------------ index queries
    def _keys_where(self, column: str, values: Iterable[str]) -> set[str]:
        wanted = sorted(set(values))
        found: set[str] = set()
        table = "entry_tags" if column == "tag" else "entries"
        for chunk in _chunks(wanted):
            marks = ",".join("?" * len(chunk))
            found.update(
                row[0]
                for row in self._query(
                    f"SELECT key FROM {table} WHERE {column} IN ({marks})",  # noqa: S608
                    chunk,
                )
            )
        return found

    def keys_for_tags(self, tags: Iterable[str]) -> set[str]:
        return self._keys_where("tag", tags)

    def keys_for_urls(self, urls: Iterable[str]) -> set[str]:
        return self._keys_where("url", urls)

    def keys_for_paths(self, paths: Iterable[str]) -> set[str]:
        return self._keys_where("path", paths)

    def infos(self, keys: Iterable[str]) -> list[EntryInfo]:
        return self._rows(sorted(set(keys)))

    def keys_for_hosts(self, hosts: Iterable[str] | None) -> set[str]:
        if hosts is None:
            return {row[0] for row in self._query("SELECT key FROM entries")}
        return self._keys_where("host", hosts)

    def expired_keys(self, before: float, limit: int) -> list[str]:
        return [
            row[0]
            for row in self._query(
                "SELECT key FROM entries WHERE expires > 0 AND expires <= ? "
                "ORDER BY expires LIMIT ?",
                (before, limit),
            )
        ]

    def eviction_candidates(self, limit: int) -> list[str]:
        keys = [
            row[0]
            for row in self._query(
                "SELECT key FROM entries WHERE expires > 0 ORDER BY expires LIMIT ?", (limit,)
            )
        ]
        if len(keys) < limit:
            keys += [
                row[0]
                for row in self._query(
                    "SELECT key FROM entries WHERE expires = 0 ORDER BY created LIMIT ?",
                    (limit - len(keys),),
                )
            ]
        return keys

    def list_entries(
        self,
        offset: int,
        limit: int,
        *,
        now: float,
        search: str = "",
        status: EntryStatus | None = None,
    ) -> tuple[list[EntryInfo], int]:
        conditions = ["status > 0"]
        parameters: list[Any] = []
        if search:
            escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            conditions.append("url LIKE ? ESCAPE '\\'")
            parameters.append(f"%{escaped}%")
        if status == "fresh":
            conditions.append("(expires = 0 OR expires > ?)")
            parameters.append(now)
        elif status == "expired":
            conditions.append("(expires > 0 AND expires <= ?)")
            parameters.append(now)
        where = " AND ".join(conditions)
        if not search and status is None:
            total = int(self._query("SELECT entries FROM totals WHERE id = 1")[0][0])
        else:
            total = int(
                self._query(f"SELECT COUNT(*) FROM entries WHERE {where}", parameters)[0][0]  # noqa: S608
            )
        rows = self._query(
            f"SELECT {_COLUMNS} FROM entries WHERE {where} "  # noqa: S608
            "ORDER BY created DESC, url LIMIT ? OFFSET ?",
            [*parameters, limit, offset],
        )
        return [_row_to_info(row) for row in rows], total

    def summary(self, now: float) -> StorageSummary:
        entries, size, compressed = self._query(
            "SELECT entries, bytes, compressed_bytes FROM totals WHERE id = 1"
        )[0]
        expired = int(
            self._query(
                "SELECT COUNT(*) FROM entries WHERE expires > 0 AND expires <= ? AND status > 0",
                (now,),
            )[0][0]
        )
        return StorageSummary(
            total=int(entries),
            fresh=int(entries) - expired,
            expired=expired,
            bytes=int(size),
            compressed_bytes=int(compressed),
        )

    # ------------------------------------------------------------------ shared state
    def get_value(self, name: str) -> bytes | None:
        rows = self._query("SELECT value FROM named_values WHERE name = ?", (name,))
        return bytes(rows[0][0]) if rows else None

    def set_value(self, name: str, value: bytes) -> None:
        with self._errors("value"), self._transaction() as connection:
            connection.execute(
                "INSERT INTO named_values (name, value) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                (name, value),
            )

    def add_counters(self, deltas: Mapping[str, int]) -> None:
        if not deltas:
            return
        with self._errors("counters"), self._transaction(quick=True) as connection:
            connection.executemany(
                "INSERT INTO counters (name, value) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                list(deltas.items()),
            )

    def counters(self) -> dict[str, int]:
        return {name: int(value) for name, value in self._query("SELECT name, value FROM counters")}

    def reset_counters(self) -> None:
        with self._errors("counters"), self._transaction() as connection:
            connection.execute("DELETE FROM counters")

    def acquire_lock(self, name: str, owner: str, ttl: float) -> bool:
        now = time.time()
        with self._errors("lock"), self._transaction(quick=True) as connection:
            cursor = connection.execute(
                "INSERT INTO locks (name, owner, expires) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET owner = excluded.owner, "
                "expires = excluded.expires WHERE locks.expires <= ? OR locks.owner = ?",
                (name, owner, now + ttl, now, owner),
            )
            return cursor.rowcount == 1

    def lock_owner(self, name: str) -> str | None:
        rows = self._query(
            "SELECT owner FROM locks WHERE name = ? AND expires > ?", (name, time.time())
        )
        return str(rows[0][0]) if rows else None

    def release_lock(self, name: str, owner: str) -> None:
        with self._errors("lock"), self._transaction() as connection:
            connection.execute("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))

    def generation(self) -> object:
        try:
            result = os.stat(self._generation_file)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"disk cache generation: {exc}") from exc
        return (result.st_ino, result.st_mtime_ns, result.st_size)

    def bump_generation(self) -> None:
        with self._errors("generation"), self._transaction():
            # Under the write lock (ordered with every conditional put); utime needs no free
            # space, so a purge still reaches every process when the disk is full.
            try:
                previous = os.stat(self._generation_file).st_mtime_ns
            except FileNotFoundError:
                self._generation_path.write_bytes(b"sitecache purge generation\n")
                previous = os.stat(self._generation_file).st_mtime_ns
            stamp = max(time.time_ns(), previous + 1)
            os.utime(self._generation_file, ns=(stamp, stamp))

    def housekeeping(self, budget: float) -> int:
        """Remove files of the first layout and return free pages, for at most ``budget``
        seconds; how many files and pages went."""
        deadline = time.monotonic() + budget
        removed = 0
        if self._legacy_entries.exists():
            with self._errors("housekeeping"):
                for directory, _, names in os.walk(self._legacy_entries, topdown=False):
                    for name in names:
                        if time.monotonic() > deadline:
                            return removed
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(os.path.join(directory, name))
                            removed += 1
                shutil.rmtree(self._legacy_entries, ignore_errors=True)
        with self._errors("housekeeping"):
            connection = self._connection()
            free = int(connection.execute("PRAGMA freelist_count").fetchone()[0])
            if free > 256:
                # 256 pages (1 MiB) at a time keeps the write lock short.
                connection.execute("PRAGMA incremental_vacuum(256)")
                removed += min(free, 256)
        return removed

    def close(self) -> None:
        for name in ("connection", "quick"):
            connection: sqlite3.Connection | None = getattr(self._local, name, None)
            if connection is not None:
                connection.close()
                setattr(self._local, name, None)


def _statements(script: str) -> list[str]:
    """Split the schema into statements, keeping trigger bodies (``BEGIN ... END;``) whole."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.strip().splitlines():
        current.append(line)
        text = "\n".join(current).strip()
        if text.upper().startswith("CREATE TRIGGER"):
            if text.upper().endswith("END;"):
                statements.append(text)
                current = []
        elif text.endswith(";"):
            statements.append(text)
            current = []
    if current and "\n".join(current).strip():
        statements.append("\n".join(current).strip())
    return statements
