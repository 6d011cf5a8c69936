"""The SQLite layout of the disk backend: its tables, triggers and row form, created once.

Every entry's index row, its tag rows and its encoded bytes (``bodies``) live in one database,
written in one transaction. Running totals are kept by triggers so counting never scans; the
delete trigger removes an entry's tag rows and body with its index row.

Epochs: each row records the epoch it was stored under (``epoch``, the one row of the
table of that name, read by the upsert itself), and the totals are kept per epoch. Moving to a
new epoch invalidates every older row at once; GC deletes them later in slices. The same row
holds the expiry cut (``expired_before``): rows that expired before it are hidden (`HIDDEN`).

Tag rows and bodies (layout 5): both are found by the entry row's ``rowid``, not
by its key (``entry_tags (tag, id)``, ``bodies (id, data)``): an integer key is a few bytes, a
new entry's tag rows go to the end of each tag's run, and the bodies table needs no second
index on a text key. An entry's tag rows are deleted through the tags its index row lists
(``tags``, a JSON list, `TAG_ROWS`), so they need no index on ``id`` either.

A new entry row writes no tag rows at all: it joins the queue of rows the indexes have not
caught up with (``search_pending``, `sitecache.cache.storage.disk_search`), and the catch-up
(GC's housekeeping, or a tag lookup or a search finding many waiting) writes the tag rows of a
whole batch at once, a few pages per tag instead of one page per tag per stored page. A tag
lookup reads both, the tag rows and the tags of the queued rows, so it is exact whether or not
a catch-up ran. A stored page whose row exists with other tags has its tag rows rewritten at
once.

The listing order of ``GET /cache`` (newest first, then by URL, then by key) is the index
``entries_order`` on ``(epoch, neg_created, url, key)``, its columns stored in descending
order (layout 5) and read backwards: the newest row, the one every stored page adds, goes to
the right end of the B-tree, where SQLite appends a page when one is full, rather than to the
left end, where each split rewrote two or three pages. ``chunks`` cuts it into runs of
`CHUNK_MIN` to `CHUNK_MAX` rows, each with its row count, kept exact by triggers (a run that
grows past `CHUNK_MAX` is split, one that shrinks below `CHUNK_MERGE` joins the run before it):
page N is found by summing a few hundred counts and stepping at most `CHUNK_MAX` rows, so
the last page costs what the first does (an order-statistic over SQLite's own indexes).

Each index row names the rule that gave its page its lifetime (``lifetime``, layout 6: the
``max_age`` setting, the page's ``max-age``, ...), which ``GET /cache`` lists.

Every secondary index waits for the catch-up too (layout 7): the URL, path, host, listing,
age and expiry indexes are partial indexes of the rows whose ``indexed`` is 1 (`INDEXED`), and
the totals and ``chunks`` count only those rows (their triggers fire when the catch-up sets
it). A new entry row is stored with 0, so a miss writes its row, its key and its bytes and
nothing else: about 13 pages of the WAL instead of 22 for a 24 KB page, and as many fewer pages
read again after another process wrote. The catch-up sets ``indexed`` for the batch it moves
(rows in key order of each index, a few pages each). A URL, path or host lookup reads the
queued rows beside the index, as a tag lookup does (`disk_search.PENDING_ROWS`); a listing, a
count, a purge of everything or of the expired pages, and GC's steps have the catch-up run
first (`DiskStorage._index_queued`): every one of them stays exact.

Older layouts (entry files under ``entries/``, entry tables without epochs, without the
trigram index of ``search``, with tag rows and bodies found by key, without ``lifetime``, or
with secondary indexes written by every store: layouts 1 to 6) are dropped and made
again when opened: a cache is disposable; named values, counters and locks are kept. Each new
store (and each whose entries were dropped) gets a new random name, the named value
`STORE_IDENTITY`.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Final

from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage.disk_search import SEARCH_OBJECTS, SEARCH_SCHEMA
from sitecache.cache.storage.records import STORE_IDENTITY
from sitecache.sqlite_wal import enable_wal

__all__ = [
    "CHUNK_MAX",
    "COLUMNS",
    "HIDDEN",
    "INDEXED",
    "LAYOUT_VERSION",
    "LIVE",
    "TAG_ROWS",
    "UPSERT",
    "VISIBLE",
    "create_schema",
    "info_row",
    "row_to_info",
    "schema_outdated",
]

#: The layout version, kept in SQLite's ``user_version``.
LAYOUT_VERSION: Final = 7
#: Rows a chunk of the listing order keeps after a split.
CHUNK_MIN: Final = 512
#: Rows past which a chunk is split in two.
CHUNK_MAX: Final = 2 * CHUNK_MIN
#: Rows under which a chunk joins the one before it.
CHUNK_MERGE: Final = CHUNK_MIN // 8

#: The condition of a row of the current epoch (``e.epoch`` where the table is ``e``), for
#: queries that find their rows through an index on ``epoch``.
LIVE: Final = "epoch = (SELECT current FROM epoch)"
#: The same condition as a filter only (``+`` keeps the query planner from walking the whole
#: epoch through an ``epoch`` index when another index finds the rows: keys, URLs, tags).
LIVE_ROW: Final = "+epoch = (SELECT current FROM epoch)"
#: The condition of the rows in the secondary indexes, the totals and the chunks (partial
#: indexes: a query names it, as written here, for SQLite to use them): the rows the catch-up
#: moved out of the queue.
INDEXED: Final = "indexed = 1"
#: The condition of a row hidden by the expiry cut (an expired purge: GC deletes it).
HIDDEN: Final = "(expires > 0 AND expires <= (SELECT expired_before FROM epoch))"
#: The condition of a row counts, listings and lookups see.
VISIBLE: Final = f"{LIVE} AND NOT {HIDDEN}"
#: `VISIBLE` as a filter only (see `LIVE_ROW`).
VISIBLE_ROW: Final = f"{LIVE_ROW} AND NOT {HIDDEN}"

#: The chunk holding an entry row (``{row}`` is ``NEW`` or ``OLD``): the last boundary at or
#: before the row in the listing order.
_CHUNK_OF: Final = """(epoch, t, url, key) = (
        SELECT epoch, t, url, key FROM chunks WHERE epoch = {row}.epoch
        AND (t, url, key) <= ({row}.neg_created, {row}.url, {row}.key)
        ORDER BY t DESC, url DESC, key DESC LIMIT 1)"""

_TOTALS_ADD: Final = """INSERT INTO totals (epoch, entries, bytes, compressed_bytes)
        VALUES (NEW.epoch, NEW.status > 0, NEW.size, NEW.compressed_size)
        ON CONFLICT(epoch) DO UPDATE SET entries = entries + excluded.entries,
        bytes = bytes + excluded.bytes,
        compressed_bytes = compressed_bytes + excluded.compressed_bytes;"""

_TOTALS_SUBTRACT: Final = """UPDATE totals SET entries = entries - (OLD.status > 0),
        bytes = bytes - OLD.size, compressed_bytes = compressed_bytes - OLD.compressed_size
        WHERE epoch = OLD.epoch;"""

_SCHEMA: Final = f"""
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
    tags TEXT NOT NULL,
    neg_created REAL NOT NULL,
    epoch INTEGER NOT NULL,
    lifetime TEXT NOT NULL DEFAULT 'max_age',
    indexed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS entries_url ON entries (url) WHERE {INDEXED};
CREATE INDEX IF NOT EXISTS entries_host ON entries (host, epoch) WHERE {INDEXED};
CREATE INDEX IF NOT EXISTS entries_path ON entries (path) WHERE {INDEXED};
CREATE INDEX IF NOT EXISTS entries_order
    ON entries (epoch, neg_created DESC, url DESC, key DESC) WHERE status > 0 AND {INDEXED};
CREATE INDEX IF NOT EXISTS entries_age ON entries (epoch, created) WHERE {INDEXED};
CREATE INDEX IF NOT EXISTS entries_expiry ON entries (epoch, expires)
    WHERE expires > 0 AND {INDEXED};
CREATE TABLE IF NOT EXISTS entry_tags (
    tag TEXT NOT NULL,
    id INTEGER NOT NULL,
    PRIMARY KEY (tag, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bodies (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS epoch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    current INTEGER NOT NULL,
    expired_before REAL NOT NULL
);
INSERT OR IGNORE INTO epoch (id, current, expired_before) VALUES (1, 1, 0);
CREATE TABLE IF NOT EXISTS totals (
    epoch INTEGER PRIMARY KEY,
    entries INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    compressed_bytes INTEGER NOT NULL
);
INSERT OR IGNORE INTO totals (epoch, entries, bytes, compressed_bytes) VALUES (1, 0, 0, 0);
CREATE TABLE IF NOT EXISTS chunks (
    epoch INTEGER NOT NULL,
    t REAL NOT NULL,
    url TEXT NOT NULL,
    key TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (epoch, t, url, key)
) WITHOUT ROWID;
INSERT OR IGNORE INTO chunks (epoch, t, url, key, count) VALUES (1, -9e999, '', '', 0);
CREATE TRIGGER IF NOT EXISTS entries_insert AFTER INSERT ON entries
WHEN NEW.indexed = 1 BEGIN
    {_TOTALS_ADD}
END;
CREATE TRIGGER IF NOT EXISTS entries_insert_order AFTER INSERT ON entries
WHEN NEW.status > 0 AND NEW.indexed = 1 BEGIN
    UPDATE chunks SET count = count + 1 WHERE {_CHUNK_OF.format(row="NEW")};
END;
CREATE TRIGGER IF NOT EXISTS entries_indexed AFTER UPDATE OF indexed ON entries
WHEN OLD.indexed = 0 AND NEW.indexed = 1 BEGIN
    {_TOTALS_ADD}
END;
CREATE TRIGGER IF NOT EXISTS entries_indexed_order AFTER UPDATE OF indexed ON entries
WHEN NEW.status > 0 AND OLD.indexed = 0 AND NEW.indexed = 1 BEGIN
    UPDATE chunks SET count = count + 1 WHERE {_CHUNK_OF.format(row="NEW")};
END;
CREATE TRIGGER IF NOT EXISTS entries_delete AFTER DELETE ON entries BEGIN
    DELETE FROM entry_tags WHERE id = OLD.rowid AND tag IN (SELECT value FROM json_each(OLD.tags));
    DELETE FROM bodies WHERE id = OLD.rowid;
END;
CREATE TRIGGER IF NOT EXISTS entries_delete_totals AFTER DELETE ON entries
WHEN OLD.indexed = 1 BEGIN
    {_TOTALS_SUBTRACT}
END;
CREATE TRIGGER IF NOT EXISTS entries_delete_order AFTER DELETE ON entries
WHEN OLD.status > 0 AND OLD.indexed = 1 BEGIN
    UPDATE chunks SET count = count - 1 WHERE {_CHUNK_OF.format(row="OLD")};
END;
CREATE TRIGGER IF NOT EXISTS entries_update AFTER UPDATE OF epoch, status, size, compressed_size
ON entries WHEN OLD.indexed = 1 AND NEW.indexed = 1 BEGIN
    {_TOTALS_SUBTRACT}
    {_TOTALS_ADD}
END;
CREATE TRIGGER IF NOT EXISTS entries_update_order_old
AFTER UPDATE OF epoch, neg_created, url, status ON entries
WHEN OLD.status > 0 AND OLD.indexed = 1 AND NEW.indexed = 1 BEGIN
    UPDATE chunks SET count = count - 1 WHERE {_CHUNK_OF.format(row="OLD")};
END;
CREATE TRIGGER IF NOT EXISTS entries_update_order_new
AFTER UPDATE OF epoch, neg_created, url, status ON entries
WHEN NEW.status > 0 AND OLD.indexed = 1 AND NEW.indexed = 1 BEGIN
    UPDATE chunks SET count = count + 1 WHERE {_CHUNK_OF.format(row="NEW")};
END;
CREATE TRIGGER IF NOT EXISTS chunks_split AFTER UPDATE OF count ON chunks
WHEN NEW.count > {CHUNK_MAX} BEGIN
    INSERT INTO chunks (epoch, t, url, key, count)
        SELECT NEW.epoch, neg_created, url, key, NEW.count - {CHUNK_MIN} FROM entries
        WHERE epoch = NEW.epoch AND status > 0 AND {INDEXED}
        AND (neg_created, url, key) >= (NEW.t, NEW.url, NEW.key)
        ORDER BY neg_created, url, key LIMIT 1 OFFSET {CHUNK_MIN};
    UPDATE chunks SET count = {CHUNK_MIN}
        WHERE epoch = NEW.epoch AND t = NEW.t AND url = NEW.url AND key = NEW.key;
END;
CREATE TRIGGER IF NOT EXISTS chunks_merge AFTER UPDATE OF count ON chunks
WHEN NEW.count < {CHUNK_MERGE} AND NEW.t > -9e999 BEGIN
    UPDATE chunks SET count = count + NEW.count WHERE (epoch, t, url, key) = (
        SELECT epoch, t, url, key FROM chunks WHERE epoch = NEW.epoch
        AND (t, url, key) < (NEW.t, NEW.url, NEW.key)
        ORDER BY t DESC, url DESC, key DESC LIMIT 1);
    DELETE FROM chunks
        WHERE epoch = NEW.epoch AND t = NEW.t AND url = NEW.url AND key = NEW.key;
END;
CREATE TABLE IF NOT EXISTS named_values (name TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS locks (
    name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL
);
"""  # noqa: S608 (constants only)

#: The entry tables of older layouts: dropped (with their indexes and triggers) when such a
#: database is opened, then made again.
_OLD_TABLES: Final = (
    "entries",
    "entry_tags",
    "bodies",
    "totals",
    "chunks",
    "epoch",
    *SEARCH_OBJECTS,
)

#: The tag rows of the entry row ``?1`` (its rowid) whose index row lists the tags ``?2`` (a
#: JSON list): found by the primary key, with no index on ``id``.
TAG_ROWS: Final = "id = ?1 AND tag IN (SELECT value FROM json_each(?2))"

#: The columns of an index row, in the order of `row_to_info` and `info_row`.
COLUMNS: Final = (
    "key, url, host, path, variant, status, size, compressed_size, created, expires, tags, lifetime"
)
#: Insert or replace one index row (the parameters of `info_row`). The row is stamped with the
#: current epoch and its listing position (``-created``) here, so every write records them.
UPSERT: Final = (
    f"INSERT INTO entries ({COLUMNS}, neg_created, epoch) "  # noqa: S608
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, -?9, "
    "(SELECT current FROM epoch)) "
    "ON CONFLICT(key) DO UPDATE SET url=excluded.url, host=excluded.host, "
    "path=excluded.path, variant=excluded.variant, status=excluded.status, "
    "size=excluded.size, compressed_size=excluded.compressed_size, "
    "created=excluded.created, expires=excluded.expires, tags=excluded.tags, "
    "lifetime=excluded.lifetime, neg_created=excluded.neg_created, epoch=excluded.epoch"
)


def row_to_info(row: tuple[Any, ...]) -> EntryInfo:
    """An index row (`COLUMNS`) as an `EntryInfo`."""
    key, url, host, path, variant, status, size, compressed, created, expires, tags, life = row
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
        lifetime=life,
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
        info.lifetime,
    )


def create_schema(connection: sqlite3.Connection) -> None:
    """Create the tables (or drop an older layout's entry tables and make them again), once.

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
        if connection.execute("PRAGMA user_version").fetchone()[0] != LAYOUT_VERSION:
            for table in _OLD_TABLES:
                connection.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _statements(_SCHEMA + SEARCH_SCHEMA):
                connection.execute(statement)
            # A new store (or one whose entries were just dropped): a new name, so that what
            # others kept of the old one's entries (static copies) is known to be orphaned.
            connection.execute(
                "INSERT OR REPLACE INTO named_values (name, value) "
                "VALUES (?, CAST(lower(hex(randomblob(16))) AS BLOB))",
                (STORE_IDENTITY,),
            )
            connection.execute(f"PRAGMA user_version={LAYOUT_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def schema_outdated(connection: sqlite3.Connection) -> bool:
    """Whether `create_schema` has work to do here: a new database or another layout version
    (one read, no write: a new connection never waits)."""
    return bool(connection.execute("PRAGMA user_version").fetchone()[0] != LAYOUT_VERSION)


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
