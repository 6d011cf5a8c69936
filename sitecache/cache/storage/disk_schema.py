"""The SQLite layout of the disk backend: its tables, triggers and row form, created once.

Every entry's index row, its tag rows and its encoded bytes (``bodies``) live in one database,
written in one transaction. Running totals are kept by triggers so counting never scans; the
delete trigger removes an entry's tag rows and body with its index row. Databases of the first
layout (entry files under ``entries/``) are emptied when opened (a cache is disposable).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Final

from sitecache.cache.entry import EntryInfo
from sitecache.sqlite_wal import enable_wal

__all__ = ["COLUMNS", "LAYOUT_VERSION", "UPSERT", "create_schema", "info_row", "row_to_info"]

#: The layout version, kept in SQLite's ``user_version``.
LAYOUT_VERSION: Final = 2

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

#: The columns of an index row, in the order of `row_to_info` and `info_row`.
COLUMNS: Final = (
    "key, url, host, path, variant, status, size, compressed_size, created, expires, tags"
)
#: Insert or replace one index row (the parameters of `info_row`).
UPSERT: Final = (
    f"INSERT INTO entries ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?) "  # noqa: S608
    "ON CONFLICT(key) DO UPDATE SET url=excluded.url, host=excluded.host, "
    "path=excluded.path, variant=excluded.variant, status=excluded.status, "
    "size=excluded.size, compressed_size=excluded.compressed_size, "
    "created=excluded.created, expires=excluded.expires, tags=excluded.tags"
)


def row_to_info(row: tuple[Any, ...]) -> EntryInfo:
    """An index row (`COLUMNS`) as an `EntryInfo`."""
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


def info_row(key: str, info: EntryInfo) -> tuple[Any, ...]:
    """The parameters of `UPSERT` for ``info`` stored under ``key``."""
    return (
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
    )


def create_schema(connection: sqlite3.Connection) -> None:
    """Create the tables (or bring a first-layout database to this one), once.

    Raises:
        sqlite3.Error: the database could not be written.
    """
    connection.execute("PRAGMA busy_timeout=10000")
    new = connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0
    if new:
        # Free pages go back to the file system in GC's bounded slices (`housekeeping`).
        connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
    enable_wal(connection)
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
