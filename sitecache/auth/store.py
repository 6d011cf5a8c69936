"""The site store: an SQLite database under the data directory, with versioned migrations.

The database (``site.db``) is created on first use. Its schema version is SQLite's
``user_version``; each migration in `MIGRATIONS` runs once, inside a transaction, so a crash
leaves the previous version intact. WAL mode and a busy timeout let several gunicorn workers
share the file. Connections are per process and thread: one opened before a fork is never used
by the child.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from sitecache.domain_errors import InvalidValueError
from sitecache.sqlite_wal import enable_wal

__all__ = ["MIGRATIONS", "SiteStore", "make_private_directory", "sql_values"]


_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def sql_values(values: Iterable[Any]) -> list[Any]:
    """Bound parameters with every integer clamped to SQLite's 64 bits, as PHP clamps an
    integer cast: an id, page or offset beyond them (REST arguments are Python integers,
    never clamped) finds nothing instead of raising `OverflowError`."""
    return [
        min(max(value, _INT64_MIN), _INT64_MAX)
        if value.__class__ is int and not _INT64_MIN <= value <= _INT64_MAX
        else value
        for value in values
    ]


def make_private_directory(path: Path) -> None:
    """Create ``path`` (and its parents) for the site's data, mode 0700.

    A directory that already exists but is empty (``mkdir var`` before ``sitecache init``) is
    made 0700 too; one holding files is the owner's choice and left as it is.
    """
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    # SECURITY: the secret key and the database must not sit in a world-readable directory.
    if path.stat().st_mode & 0o077 and not any(path.iterdir()):
        os.chmod(path, 0o700)


MIGRATIONS: Final[tuple[tuple[int, str], ...]] = (
    (
        1,
        """
        CREATE TABLE users (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            login         TEXT NOT NULL UNIQUE COLLATE NOCASE,
            email         TEXT NOT NULL UNIQUE COLLATE NOCASE,
            display_name  TEXT NOT NULL,
            role          TEXT NOT NULL,
            password_hash TEXT NOT NULL,
            registered    INTEGER NOT NULL
        );
        CREATE TABLE sessions (
            token_hash TEXT PRIMARY KEY,
            user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created    INTEGER NOT NULL,
            expires    INTEGER NOT NULL,
            remember   INTEGER NOT NULL,
            ip         TEXT NOT NULL DEFAULT '',
            user_agent TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX sessions_by_user ON sessions(user_id);
        CREATE INDEX sessions_by_expiry ON sessions(expires);
        CREATE TABLE app_passwords (
            uuid          TEXT PRIMARY KEY,
            user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            app_id        TEXT NOT NULL DEFAULT '',
            name          TEXT NOT NULL,
            password_hash TEXT NOT NULL,
            created       INTEGER NOT NULL,
            last_used     INTEGER,
            last_ip       TEXT
        );
        CREATE INDEX app_passwords_by_user ON app_passwords(user_id);
        CREATE TABLE login_throttle (
            scope        TEXT NOT NULL,
            key          TEXT NOT NULL,
            failures     INTEGER NOT NULL,
            last_failure INTEGER NOT NULL,
            next_allowed INTEGER NOT NULL,
            PRIMARY KEY (scope, key)
        );
        CREATE TABLE options (
            name  TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    ),
    (
        2,
        """
        ALTER TABLE users ADD COLUMN slug TEXT NOT NULL DEFAULT '';
        ALTER TABLE users ADD COLUMN url TEXT NOT NULL DEFAULT '';
        ALTER TABLE users ADD COLUMN first_name TEXT NOT NULL DEFAULT '';
        ALTER TABLE users ADD COLUMN last_name TEXT NOT NULL DEFAULT '';
        ALTER TABLE users ADD COLUMN nickname TEXT NOT NULL DEFAULT '';
        ALTER TABLE users ADD COLUMN description TEXT NOT NULL DEFAULT '';
        ALTER TABLE users ADD COLUMN locale TEXT NOT NULL DEFAULT '';
        UPDATE users SET
            slug = lower(replace(replace(replace(login, ' ', '-'), '.', '-'), '@', '')),
            nickname = login;
        UPDATE users SET slug = slug || '-' || id
            WHERE slug = '' OR slug IN (
                SELECT slug FROM users GROUP BY slug HAVING COUNT(*) > 1
            );
        CREATE INDEX users_by_slug ON users(slug)
        """,
    ),
)
"""``(version, SQL)`` pairs, applied in order; never edit one that has shipped, add another."""


class _SiteConnection(sqlite3.Connection):
    """A connection whose statements refuse, as a domain error, an integer SQLite cannot hold.

    Request arguments are Python integers (never clamped, README "The schema engine"): an id,
    a page or an offset past 2**63 - 1 names no row, and is a 400 ``rest_invalid_param`` (as
    WordPress, whose PHP integers stop there, refuses it) rather than an OverflowError.
    """

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except OverflowError as exc:
            raise InvalidValueError(
                "rest_invalid_param", "A number given is too large (at most 9223372036854775807)."
            ) from exc


class SiteStore:
    """The site's SQLite database.

    Args:
        path: the database file (its directory is created with mode 0700).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._migrate_lock = threading.Lock()
        self._migrated = False

    def _open(self) -> sqlite3.Connection:
        make_private_directory(self.path.parent)
        connection = sqlite3.connect(
            self.path,
            timeout=10.0,
            isolation_level=None,
            check_same_thread=True,
            factory=_SiteConnection,
        )
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA busy_timeout = 10000")
        enable_wal(connection)
        connection.execute("PRAGMA synchronous = NORMAL")
        return connection

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (opened lazily; a forked child opens its own), with every
        migration applied."""
        connection = self._thread_connection()
        if not self._migrated:
            self.migrate(connection)
        return connection

    def _thread_connection(self) -> sqlite3.Connection:
        pid = os.getpid()
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None or getattr(self._local, "pid", None) != pid:
            connection = self._open()
            self._local.connection = connection
            self._local.pid = pid
            if self.path.stat().st_mode & 0o077:
                os.chmod(self.path, 0o600)
        return connection

    def migrate(self, connection: sqlite3.Connection | None = None) -> int:
        """Apply every pending migration; returns the schema version."""
        with self._migrate_lock:
            connection = connection or self._thread_connection()
            version = int(connection.execute("PRAGMA user_version").fetchone()[0])
            for target, script in MIGRATIONS:
                if target <= version:
                    continue
                connection.execute("BEGIN IMMEDIATE")
                try:
                    # Re-read under the write lock: another worker may have migrated already.
                    current = int(connection.execute("PRAGMA user_version").fetchone()[0])
                    if current < target:
                        for statement in _statements(script):
                            connection.execute(statement)
                        connection.execute(f"PRAGMA user_version = {int(target)}")
                    connection.execute("COMMIT")
                except BaseException:
                    connection.execute("ROLLBACK")
                    raise
                version = target
            self._migrated = True
            return version

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed on success, rolled back on any exception."""
        connection = self.connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            # SQLite rolls back by itself on some errors (SQLITE_FULL: a full disk); a second
            # ROLLBACK would then hide the real error behind "no transaction is active".
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (no semicolons inside our literals)."""
    return [statement.strip() for statement in script.split(";") if statement.strip()]
