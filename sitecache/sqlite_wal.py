"""SQLite's write-ahead log switched on safely when several processes open one new database.

Switching a database to WAL answers "database is locked" at once, without the busy timeout,
while a sibling process (another worker booting beside it) holds a lock on the same new file;
every store that switches its database to WAL goes through `enable_wal`, which waits it out.
"""

from __future__ import annotations

import sqlite3
import time

__all__ = ["enable_wal"]


def enable_wal(connection: sqlite3.Connection, wait: float = 10.0) -> None:
    """Put the database in WAL mode, waiting up to ``wait`` seconds for other processes.

    Switching the journal mode answers "database is locked" at once, without the busy
    timeout, while another connection (a sibling worker opening the same new database) holds
    a lock; it is retried until the switch is done or ``wait`` runs out.

    Raises:
        sqlite3.OperationalError: the database stayed locked for ``wait`` seconds.
    """
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            if connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                return
            connection.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
