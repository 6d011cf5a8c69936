"""How long the site store waits for its database, and which engine failures are outages.

A request that needs the site's database never waits for it longer than these limits
(`StoreLimits`): PostgreSQL's connect timeout and the pool's wait, SQLite's busy timeout. Past
them, and whenever the engine says the database is down, restarting, unreachable, locked or out
of space, the store raises `StoreUnavailable` (503 ``site_unavailable``) or `StoreFull` (507
``site_storage_full``) rather than an engine's exception: the edges (REST, the pages, the
command line) answer them with a JSON error or the site's message page and ``Retry-After``.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sitecache.auth.db import (
    DatabaseError,
    IntegrityError,
    OperationalError,
    StoreFull,
    StoreUnavailable,
)

__all__ = ["StoreLimits", "disk_nearly_full", "sqlite_error"]


@dataclass(frozen=True, slots=True)
class StoreLimits:
    """How long the site store waits for its database (seconds), and what it tells clients.

    Attributes:
        connect_timeout: PostgreSQL: how long opening one connection may take (libpq's
            ``connect_timeout``: whole seconds, at least 2).
        pool_timeout: PostgreSQL: how long a request waits for a connection of the pool.
        busy_timeout: SQLite: how long a statement waits for another process's write lock.
        retry_after: the ``Retry-After`` of a 503 answered while the database does not answer.
    """

    connect_timeout: float = 2.0
    pool_timeout: float = 2.0
    busy_timeout: float = 4.0
    retry_after: int = 5

    @property
    def connect_seconds(self) -> int:
        """`connect_timeout` as libpq takes it (whole seconds, at least 2)."""
        return max(2, round(self.connect_timeout))


#: SQLite's primary result codes that mean an outage rather than a mistake.
_SQLITE_BUSY: Final = 5
_SQLITE_LOCKED: Final = 6
_SQLITE_READONLY: Final = 8
_SQLITE_IOERR: Final = 10
_SQLITE_FULL: Final = 13
_SQLITE_CANTOPEN: Final = 14

#: Free bytes under which an I/O error of a write is taken for a full disk (SQLite reports
#: some ``ENOSPC`` as ``SQLITE_IOERR_WRITE``, never naming the errno).
NEARLY_FULL_BYTES: Final = 256 * 1024

_SQLITE_ERRORS: Final[tuple[tuple[type[sqlite3.Error], type[DatabaseError]], ...]] = (
    (sqlite3.IntegrityError, IntegrityError),
    (sqlite3.OperationalError, OperationalError),
    (sqlite3.Error, DatabaseError),
)


def disk_nearly_full(path: Path) -> bool:
    """Whether the file system holding ``path`` has (almost) no space left for its user."""
    try:
        stats = os.statvfs(path if path.is_dir() else path.parent)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < NEARLY_FULL_BYTES


def sqlite_error(exc: sqlite3.Error, path: Path, limits: StoreLimits) -> DatabaseError:
    """The store's error for a SQLite failure on the database at ``path``: `StoreFull` for a
    full disk, `StoreUnavailable` for a database locked past the busy timeout, read-only or
    unopenable, else `IntegrityError`, `OperationalError` or `DatabaseError` as sqlite3's
    own kind."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    retry_after = limits.retry_after
    if code == _SQLITE_FULL or (code == _SQLITE_IOERR and disk_nearly_full(path)):
        return StoreFull(f"{exc} ({path})")
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return StoreUnavailable(
            f"{exc}: another process held it past the busy timeout "
            f"({limits.busy_timeout:g} s, {path})",
            retry_after,
        )
    if code in (_SQLITE_READONLY, _SQLITE_CANTOPEN, _SQLITE_IOERR):
        return StoreUnavailable(f"{exc} ({path})", retry_after)
    for kind, ours in _SQLITE_ERRORS:
        if isinstance(exc, kind):
            return ours(str(exc))
    return DatabaseError(str(exc))  # pragma: no cover - sqlite3.Error is the last kind
