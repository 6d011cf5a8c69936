"""What the site's repositories need of a database, whatever the engine (SQLite or PostgreSQL).

Every query of the auth and site layers is written once, in a subset both engines run: ``?``
placeholders, ``INSERT ... ON CONFLICT ... DO UPDATE/DO NOTHING``, ``INSERT ... RETURNING id``,
``lower(column)`` for case-insensitive comparison and order, ``COALESCE``. The PostgreSQL engine
translates the placeholders (`postgres_query`) and the migrations' DDL (`postgres_ddl`); the
rest is the same text on both. Errors reach the repositories as `DatabaseError` and its two
kinds, never as an engine's own exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, Final, Protocol

from sitecache.domain_errors import StorageFullError, UnavailableError

__all__ = [
    "DatabaseError",
    "DbConnection",
    "DbCursor",
    "IntegrityError",
    "OperationalError",
    "Row",
    "SchemaVersionError",
    "StoreFull",
    "StoreUnavailable",
    "postgres_ddl",
    "postgres_query",
]


class DatabaseError(Exception):
    """The database refused or failed a statement (its message says why)."""


class IntegrityError(DatabaseError):
    """A constraint refused a write (a unique value taken, a missing referenced row)."""


class OperationalError(DatabaseError):
    """The database could not run a statement (locked, full disk, connection lost)."""


class StoreUnavailable(OperationalError, UnavailableError):
    """The site's database does not answer now: down, restarting, unreachable within the
    connect or pool timeout, or locked past the busy timeout. Requests answer 503
    ``site_unavailable`` with ``Retry-After``; nothing of the operation was kept.

    Args:
        reason: what failed (the engine's words, no password).
        retry_after: seconds after which trying again makes sense.
    """

    def __init__(self, reason: str, retry_after: int = 5) -> None:
        UnavailableError.__init__(
            self,
            "site_unavailable",
            f"The site's database does not answer right now. Try again in {retry_after} seconds.",
            retry_after,
        )
        self.reason = reason

    def __str__(self) -> str:
        return f"the site database does not answer: {self.reason}"


class StoreFull(OperationalError, StorageFullError):
    """A write found no space on the site database's disk (SQLite's ``SQLITE_FULL``, the
    file system's ``ENOSPC``, PostgreSQL's ``disk_full``): its transaction was rolled back,
    nothing was kept. Requests answer 507 ``site_storage_full``; the same write succeeds once
    space is freed.

    Args:
        reason: what failed (the engine's words).
        retry_after: seconds after which trying again makes sense.
    """

    def __init__(self, reason: str, retry_after: int = 60) -> None:
        StorageFullError.__init__(
            self,
            "site_storage_full",
            "The site's database has no space left for this change; nothing was saved. "
            "Try again once space is freed.",
            retry_after,
        )
        self.reason = reason

    def __str__(self) -> str:
        return f"the site database's disk is full: {self.reason}"


class SchemaVersionError(DatabaseError):
    """The database's schema is not the one this code runs on (newer, or older and not
    migrated); the message names both versions and the command that fixes it."""


class Row(Protocol):
    """A result row, read by position or by column name."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...

    def __len__(self) -> int: ...

    def keys(self) -> list[str]: ...


class DbCursor(Protocol):
    """The result of one statement."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class DbConnection(Protocol):
    """One engine's connection, as the repositories use it."""

    def execute(self, sql: str, parameters: Any = (), /) -> Any: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any: ...

    @property
    def in_transaction(self) -> bool: ...

    @property
    def total_changes(self) -> int: ...


_QUOTED_OR_MARK: Final = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?|%")


@lru_cache(maxsize=1024)
def postgres_query(sql: str) -> str:
    """``sql`` with its ``?`` placeholders as psycopg's ``%s`` and every ``%`` doubled (psycopg
    reads ``%`` anywhere in a statement, quoted or not); a ``?`` inside a quoted literal or
    name stays as it is. ``BEGIN IMMEDIATE`` (SQLite's write lock) is a plain ``BEGIN``."""
    if sql == "BEGIN IMMEDIATE":
        return "BEGIN"

    def replace(match: re.Match[str]) -> str:
        text = match.group(0)
        if text == "?":
            return "%s"
        return text.replace("%", "%%")

    return _QUOTED_OR_MARK.sub(replace, sql)


#: SQLite DDL spelled the PostgreSQL way, in order (the migrations' portable subset).
_DDL_REWRITES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (
        re.compile(r"\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b", re.IGNORECASE),
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    ),
    (re.compile(r"\s+COLLATE\s+NOCASE\b", re.IGNORECASE), ""),
    (re.compile(r"\bINTEGER\b", re.IGNORECASE), "BIGINT"),
    (re.compile(r"\bREAL\b", re.IGNORECASE), "DOUBLE PRECISION"),
    (re.compile(r"\bBLOB\b", re.IGNORECASE), "BYTEA"),
)


def postgres_ddl(statement: str) -> str:
    """A migration statement written for SQLite, as PostgreSQL runs it: identity ids,
    64-bit integers, doubles, ``BYTEA``; ``COLLATE NOCASE`` dropped (case-insensitive
    uniqueness is an index on ``lower(column)``, added by a migration of its own)."""
    for pattern, replacement in _DDL_REWRITES:
        statement = pattern.sub(replacement, statement)
    return statement
