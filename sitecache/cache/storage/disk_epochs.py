"""The epochs of the disk backend: the SQL of its invalidations and of GC's removal.

Each function runs on a connection the caller holds in a transaction (a write) or a snapshot
(a read), so `sitecache.cache.storage.disk.DiskStorage` keeps the connection handling. The
rows they read and count are those of the age and expiry indexes and of the totals (layout 7:
the rows the search catch-up moved there); the caller has the catch-up run first.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from sitecache.cache.storage.disk_schema import HIDDEN, INDEXED, LIVE

__all__ = [
    "anything_left",
    "cut",
    "hidden_totals",
    "hosts",
    "invalidate",
    "invalidate_expired",
    "pending",
    "remove_batch",
]

#: Every host that has a row of the current epoch: a skip over the host index (one step per
#: distinct host, whatever the number of rows), and the hosts of the queued rows the catch-up
#: has not put in that index yet (`sitecache.cache.storage.disk_search.PENDING_ROWS`).
_HOSTS: Final = f"""
WITH RECURSIVE seen(host) AS (
    SELECT MIN(host) FROM entries WHERE {INDEXED}
    UNION ALL
    SELECT (SELECT MIN(host) FROM entries WHERE host > seen.host AND {INDEXED}) FROM seen
    WHERE seen.host IS NOT NULL
)
SELECT host FROM seen WHERE host IS NOT NULL
AND EXISTS (SELECT 1 FROM entries WHERE entries.host = seen.host AND {INDEXED}
    AND entries.{LIVE})
UNION SELECT e.host FROM search_pending p CROSS JOIN entries e ON e.rowid = p.id
WHERE +e.{LIVE}
"""  # noqa: S608


#: Rows of older epochs (and their bookkeeping).
_OLD: Final = "epoch < (SELECT current FROM epoch)"
#: Entry rows of older epochs (through the age index: its rows, the caller has the catch-up
#: move the queued ones into it first).
_OLD_ROWS: Final = f"{_OLD} AND {INDEXED}"
#: Rows the expiry cut hides (through the expiry index, as `_OLD_ROWS`).
_HIDDEN_ROWS: Final = f"{LIVE} AND {INDEXED} AND {HIDDEN}"
#: Delete a batch of the rows matching a condition (the delete trigger takes each row's tags,
#: body and share of its epoch's totals).
_DELETE: Final = "DELETE FROM entries WHERE rowid IN (SELECT rowid FROM entries WHERE {} LIMIT ?)"


def cut(connection: sqlite3.Connection) -> float:
    """The expiry cut: entries that expired at or before it are hidden (0: none)."""
    return float(connection.execute("SELECT expired_before FROM epoch").fetchone()[0])


def hidden_totals(connection: sqlite3.Connection) -> tuple[int, int, int]:
    """Pages, bytes and compressed bytes the expiry cut hides (through the expiry index)."""
    pages, size, compressed = connection.execute(
        "SELECT COALESCE(SUM(status > 0), 0), COALESCE(SUM(size), 0), "  # noqa: S608
        f"COALESCE(SUM(compressed_size), 0) FROM entries WHERE {_HIDDEN_ROWS}"
    ).fetchone()
    return int(pages), int(size), int(compressed)


def invalidate(connection: sqlite3.Connection) -> tuple[int, int]:
    """Move to the next epoch; the pages and bytes the old one held (from its totals)."""
    current = int(connection.execute("SELECT current FROM epoch").fetchone()[0])
    found = connection.execute(
        "SELECT entries, bytes + compressed_bytes FROM totals WHERE epoch = ?", (current,)
    ).fetchone()
    following = current + 1
    connection.execute("UPDATE epoch SET current = ?", (following,))
    connection.execute(
        "INSERT OR IGNORE INTO totals (epoch, entries, bytes, compressed_bytes) "
        "VALUES (?, 0, 0, 0)",
        (following,),
    )
    connection.execute(
        "INSERT OR IGNORE INTO chunks (epoch, t, url, key, count) VALUES (?, ?, '', '', 0)",
        (following, -float("inf")),
    )
    # The old epoch's rows leave the listing order now (its chunks go with it).
    connection.execute("DELETE FROM chunks WHERE epoch = ?", (current,))
    entries, size = found if found is not None else (0, 0)
    return int(entries), int(size)


def invalidate_expired(connection: sqlite3.Connection, before: float) -> tuple[int, int]:
    """Move the expiry cut to ``before`` when later; the pages and bytes it newly hides."""
    old = cut(connection)
    if before <= old:
        return 0, 0
    pages, size = connection.execute(
        "SELECT COALESCE(SUM(status > 0), 0), COALESCE(SUM(size + compressed_size), 0) "  # noqa: S608
        f"FROM entries WHERE {LIVE} AND {INDEXED} AND expires > ? AND expires <= ?",
        (max(old, 0.0), before),
    ).fetchone()
    connection.execute("UPDATE epoch SET expired_before = ?", (before,))
    return int(pages), int(size)


def hosts(connection: sqlite3.Connection) -> set[str]:
    """The hosts of the current epoch's rows."""
    return {row[0] for row in connection.execute(_HOSTS)}


def pending(connection: sqlite3.Connection) -> tuple[int, int]:
    """Pages and bytes older epochs and the rows the expiry cut hides still hold."""
    entries, size = connection.execute(
        "SELECT COALESCE(SUM(entries), 0), COALESCE(SUM(bytes + compressed_bytes), 0) "  # noqa: S608
        f"FROM totals WHERE {_OLD}"
    ).fetchone()
    pages, hidden, hidden_compressed = hidden_totals(connection)
    return int(entries) + pages, int(size) + hidden + hidden_compressed


def anything_left(connection: sqlite3.Connection) -> bool:
    """Whether `remove_batch` has anything to do (a read)."""
    left = connection.execute(
        f"SELECT EXISTS (SELECT 1 FROM entries WHERE {_OLD_ROWS}), "  # noqa: S608
        f"EXISTS (SELECT 1 FROM totals WHERE {_OLD}), "
        f"EXISTS (SELECT 1 FROM entries WHERE {_HIDDEN_ROWS})"
    ).fetchone()
    return any(left)


def remove_batch(connection: sqlite3.Connection, size: int) -> int:
    """Delete up to ``size`` rows of older epochs, else (their bookkeeping dropped) of the
    rows the expiry cut hides; how many went (at least 1 while anything was left)."""
    removed = connection.execute(_DELETE.format(_OLD_ROWS), (size,)).rowcount
    if not removed:
        connection.execute(f"DELETE FROM totals WHERE {_OLD}")  # noqa: S608
        connection.execute(f"DELETE FROM chunks WHERE {_OLD}")  # noqa: S608
        removed = connection.execute(_DELETE.format(_HIDDEN_ROWS), (size,)).rowcount
    return max(1, int(removed))
