"""The disk backend, the embedded default: entry files plus an SQLite index in WAL mode.

Layout under the root directory (created 0700):

- ``entries/ab/cd/<key>``: one file per entry (prefix, JSON header, body, gzip copy; see
  `sitecache.cache.entry`), written to a temporary file in the same directory and moved into
  place with ``os.replace``, so a reader sees the old entry or the new one, never half of one.
  A torn or unknown file decodes as a miss.
- ``index.sqlite3``: the index (one row per entry, tag rows, totals kept by triggers so counting
  never scans), named values, counters and locks. WAL mode and a busy timeout make it safe for
  several gunicorn workers writing at once.
- ``generation``: a file replaced on every purge; its inode and mtime are the purge generation,
  read with one ``stat`` per request.

Order of writes: the index row, then the file (and a delete removes the files, then the rows),
so a crash in between leaves at worst a row without a file, which reads as a miss and GC
removes; never a servable file that no purge can reach.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage.base import (
    EntryStatus,
    RemovalReport,
    StorageError,
    StorageSummary,
)
from sitecache.cache.storage.index import rewrite_expires

__all__ = ["DiskStorage"]

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

_COLUMNS: Final = (
    "key, url, host, path, variant, status, size, compressed_size, created, expires, tags"
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


class DiskStorage:
    """Entries as files under ``root``, indexed in SQLite (see the module docstring)."""

    backend = "disk"

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.location = str(self.root)
        self._entries = self.root / "entries"
        self._generation_path = self.root / "generation"
        self._local = threading.local()
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._entries.mkdir(mode=0o700, exist_ok=True)
            self._connection()  # opens the index and creates its tables
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
        created = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'entries_update'"
        ).fetchone()
        if created is None:
            connection.execute("PRAGMA busy_timeout=10000")
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(_SCHEMA)
            connection.execute(f"PRAGMA busy_timeout={50 if quick else 10000}")
        connection.execute("PRAGMA synchronous=NORMAL")
        setattr(self._local, name, connection)
        setattr(self._local, f"{name}_pid", pid)
        return connection

    @contextlib.contextmanager
    def _transaction(self, quick: bool = False) -> Iterator[sqlite3.Connection]:
        connection = self._connection(quick)
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        else:
            connection.execute("COMMIT")

    def _query(self, sql: str, parameters: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._connection().execute(sql, tuple(parameters)).fetchall()
        except sqlite3.Error as exc:
            raise StorageError(f"disk cache index: {exc}") from exc

    # ------------------------------------------------------------------ entries
    def _path(self, key: str) -> Path:
        if len(key) < 8 or not key.isalnum():
            raise StorageError(f"invalid cache key {key!r}")
        return self._entries / key[:2] / key[2:4] / key

    def get(self, key: str) -> bytes | None:
        try:
            with open(self._path(key), "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"disk cache read: {exc}") from exc

    def _write_file(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = path.with_name(f".tmp-{path.name}-{secrets.token_hex(6)}")
        try:
            with open(temporary, "wb") as handle:
                handle.write(data)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise

    def put(self, key: str, data: bytes, info: EntryInfo, ttl: float | None) -> None:
        del ttl  # expiry lives in the entry and the index; GC removes what is dead
        path = self._path(key)
        try:
            # The index row first: a row without its file reads as a miss, while a file
            # without a row would be served yet unreachable for every purge.
            with self._transaction() as connection:
                connection.execute(
                    f"INSERT INTO entries ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?) "  # noqa: S608
                    "ON CONFLICT(key) DO UPDATE SET url=excluded.url, host=excluded.host, "
                    "path=excluded.path, variant=excluded.variant, status=excluded.status, "
                    "size=excluded.size, compressed_size=excluded.compressed_size, "
                    "created=excluded.created, expires=excluded.expires, tags=excluded.tags",
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
        except sqlite3.Error as exc:
            raise StorageError(f"disk cache index write: {exc}") from exc
        try:
            self._write_file(path, data)
        except OSError as exc:
            with contextlib.suppress(OSError):
                path.unlink()
            with contextlib.suppress(sqlite3.Error), self._transaction() as connection:
                connection.execute("DELETE FROM entries WHERE key = ?", (key,))
            raise StorageError(f"disk cache write: {exc}") from exc

    def _rows(self, keys: list[str]) -> list[EntryInfo]:
        rows: list[EntryInfo] = []
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
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
        wanted = sorted(set(keys))
        report = RemovalReport()
        if not wanted:
            return report
        try:
            rows = self._rows(wanted)
            for info in rows:
                report.add(info)
            # Files first: an entry whose row is gone must not stay servable.
            for key in wanted:
                with contextlib.suppress(FileNotFoundError):
                    self._path(key).unlink()
            with self._transaction() as connection:
                connection.executemany(
                    "DELETE FROM entries WHERE key = ?", [(key,) for key in wanted]
                )
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"disk cache delete: {exc}") from exc
        return report

    def mark_stale(self, keys: Iterable[str], now: float) -> RemovalReport:
        report = RemovalReport()
        try:
            for info in self._rows(sorted(set(keys))):
                report.add(info)
                if info.expires and info.expires <= now:
                    continue
                data = self.get(info.key)
                if data is not None:
                    self._write_file(self._path(info.key), rewrite_expires(data, now))
                with self._transaction() as connection:
                    connection.execute(
                        "UPDATE entries SET expires = ? WHERE key = ?", (now, info.key)
                    )
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"disk cache soft purge: {exc}") from exc
        return report

    # ------------------------------------------------------------------ index queries
    def keys_for_tags(self, tags: Iterable[str]) -> set[str]:
        wanted = sorted(set(tags))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                row[0]
                for row in self._query(
                    f"SELECT key FROM entry_tags WHERE tag IN ({marks})",  # noqa: S608
                    chunk,
                )
            )
        return found

    def keys_for_urls(self, urls: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for url in set(urls):
            found.update(
                row[0] for row in self._query("SELECT key FROM entries WHERE url = ?", [url])
            )
        return found

    def keys_for_paths(self, paths: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for path in set(paths):
            found.update(
                row[0] for row in self._query("SELECT key FROM entries WHERE path = ?", [path])
            )
        return found

    def infos(self, keys: Iterable[str]) -> list[EntryInfo]:
        return self._rows(sorted(set(keys)))

    def keys_for_hosts(self, hosts: Iterable[str] | None) -> set[str]:
        if hosts is None:
            return {row[0] for row in self._query("SELECT key FROM entries")}
        found: set[str] = set()
        for host in set(hosts):
            found.update(
                row[0] for row in self._query("SELECT key FROM entries WHERE host = ?", [host])
            )
        return found

    def expired_keys(self, before: float, limit: int) -> list[str]:
        return [
            row[0]
            for row in self._query(
                "SELECT key FROM entries WHERE expires > 0 AND expires <= ? "
                "ORDER BY expires LIMIT ?",
                (before, limit),
            )
        ]

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
        try:
            with self._transaction() as connection:
                connection.execute(
                    "INSERT INTO named_values (name, value) VALUES (?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                    (name, value),
                )
        except sqlite3.Error as exc:
            raise StorageError(f"disk cache value: {exc}") from exc

    def add_counters(self, deltas: Mapping[str, int]) -> None:
        if not deltas:
            return
        try:
            with self._transaction(quick=True) as connection:
                connection.executemany(
                    "INSERT INTO counters (name, value) VALUES (?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                    list(deltas.items()),
                )
        except sqlite3.Error as exc:
            raise StorageError(f"disk cache counters: {exc}") from exc

    def counters(self) -> dict[str, int]:
        return {name: int(value) for name, value in self._query("SELECT name, value FROM counters")}

    def reset_counters(self) -> None:
        try:
            with self._transaction() as connection:
                connection.execute("DELETE FROM counters")
        except sqlite3.Error as exc:
            raise StorageError(f"disk cache counters: {exc}") from exc

    def acquire_lock(self, name: str, owner: str, ttl: float) -> bool:
        now = time.time()
        try:
            with self._transaction(quick=True) as connection:
                cursor = connection.execute(
                    "INSERT INTO locks (name, owner, expires) VALUES (?, ?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET owner = excluded.owner, "
                    "expires = excluded.expires WHERE locks.expires <= ? OR locks.owner = ?",
                    (name, owner, now + ttl, now, owner),
                )
                return cursor.rowcount == 1
        except sqlite3.Error as exc:
            raise StorageError(f"disk cache lock: {exc}") from exc

    def release_lock(self, name: str, owner: str) -> None:
        try:
            with self._transaction() as connection:
                connection.execute("DELETE FROM locks WHERE name = ? AND owner = ?", (name, owner))
        except sqlite3.Error as exc:
            raise StorageError(f"disk cache lock: {exc}") from exc

    def generation(self) -> object:
        try:
            result = os.stat(self._generation_path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"disk cache generation: {exc}") from exc
        return (result.st_ino, result.st_mtime_ns, result.st_size)

    def bump_generation(self) -> None:
        try:
            self._write_file(self._generation_path, f"{time.time_ns()}\n".encode())
        except OSError as exc:
            raise StorageError(f"disk cache generation: {exc}") from exc

    def remove_orphans(self, older_than: float, budget: float) -> int:
        """Delete temporary files left by killed writers and files with no index row.

        Walks at most ``budget`` seconds; returns how many files went.
        """
        deadline = time.monotonic() + budget
        removed = 0
        for directory, _, names in os.walk(self._entries):
            for name in names:
                if time.monotonic() > deadline:
                    return removed
                path = Path(directory) / name
                try:
                    if path.stat().st_mtime > older_than:
                        continue
                    orphan = name.startswith(".tmp-") or not self._query(
                        "SELECT 1 FROM entries WHERE key = ?", (name,)
                    )
                    if orphan:
                        path.unlink()
                        removed += 1
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise StorageError(f"disk cache GC: {exc}") from exc
        return removed

    def close(self) -> None:
        for name in ("connection", "quick"):
            connection: sqlite3.Connection | None = getattr(self._local, name, None)
            if connection is not None:
                connection.close()
                setattr(self._local, name, None)
