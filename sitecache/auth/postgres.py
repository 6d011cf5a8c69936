"""The PostgreSQL engine of the site store: psycopg 3 and its connection pool.

Each process opens its own pool on first use (one made before a fork is never used by the
child). A thread takes one connection from the pool and keeps it, as SQLite's engine keeps a
connection per thread: the repositories run ``BEGIN``/``COMMIT`` on the connection they were
given. Connections run in autocommit mode, so a statement outside `SiteStore.transaction` is
its own transaction, exactly as on SQLite. A connection that broke (the server restarted) goes
back to the pool, which replaces it, and the statement is retried once when no transaction was
open.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from sitecache.auth.db import (
    DatabaseError,
    IntegrityError,
    OperationalError,
    postgres_query,
)
from sitecache.domain_errors import NumberOutOfRange

if TYPE_CHECKING:  # psycopg is imported when a PostgreSQL store is opened, not before
    import psycopg
    import psycopg_pool

__all__ = ["PostgresEngine", "PostgresRow"]

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


class PostgresRow(tuple[Any, ...]):
    """A row read by position or by column name (what `sqlite3.Row` offers)."""

    _names: tuple[str, ...]

    def __new__(cls, names: tuple[str, ...], values: Iterable[Any]) -> PostgresRow:
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._names.index(key))
            except ValueError:
                raise IndexError(f"no such column: {key}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self._names)


def _row_factory(cursor: Any) -> Any:
    names = tuple(column.name for column in cursor.description or ())
    return lambda values: PostgresRow(names, values)


def _translate(exc: Exception) -> DatabaseError:
    import psycopg

    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, psycopg.errors.IntegrityError):
        return IntegrityError(message)
    if isinstance(exc, psycopg.errors.NumericValueOutOfRange):
        return NumberOutOfRange.past_64_bits()  # type: ignore[return-value]
    if isinstance(exc, psycopg.OperationalError):
        return OperationalError(message)
    return DatabaseError(message)


class PostgresConnection:
    """One pooled psycopg connection with the interface the repositories use."""

    def __init__(self, engine: PostgresEngine, connection: psycopg.Connection[Any]) -> None:
        self._engine = engine
        self._connection = connection
        self._changes = 0
        self._trace: Callable[[str], object] | None = None

    def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        """Call ``callback`` with each statement's text before it runs (as sqlite3 does)."""
        self._trace = callback

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this connection."""
        from psycopg.pq import TransactionStatus

        return self._connection.info.transaction_status != TransactionStatus.IDLE

    @property
    def total_changes(self) -> int:
        """How many writing statements this connection ran (a marker that moves on a write)."""
        return self._changes

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        """Run ``sql`` (``?`` placeholders); the cursor, or a `DatabaseError`."""
        import psycopg

        if self._trace is not None:
            self._trace(sql)
        query = postgres_query(sql)
        values = _bounded(parameters)
        if not sql.lstrip()[:6].upper().startswith("SELECT"):
            self._changes += 1
        try:
            return self._connection.execute(query, values, prepare=False)
        except psycopg.Error as exc:
            if isinstance(exc, psycopg.OperationalError) and self._connection.broken:
                self._engine.discard(self)
            if isinstance(exc, psycopg.errors.InFailedSqlTransaction):
                raise OperationalError(str(exc)) from exc
            raise _translate(exc) from exc

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        """Run ``sql`` once per parameter set."""
        import psycopg

        self._changes += 1
        cursor = self._connection.cursor()
        try:
            cursor.executemany(postgres_query(sql), [_bounded(values) for values in parameters])
        except psycopg.Error as exc:
            raise _translate(exc) from exc
        return cursor

    def close(self) -> None:
        """Give the connection back to the pool."""
        self._engine.discard(self)

    @property
    def raw(self) -> psycopg.Connection[Any]:
        """The psycopg connection (tests and the migration lock use it)."""
        return self._connection


def _bounded(parameters: Any) -> Any:
    """The parameters as PostgreSQL takes them (booleans as 0 and 1, as SQLite stores them).

    Raises:
        NumberOutOfRange: an integer past 64 bits, refused as SQLite's engine refuses it
            (the repositories clamp the ones that may be that large: `sql_values`).
    """
    if isinstance(parameters, dict):
        return parameters
    values = []
    for value in parameters:
        if value.__class__ is bool:
            value = int(value)
        elif value.__class__ is int and not _INT64_MIN <= value <= _INT64_MAX:
            raise NumberOutOfRange.past_64_bits()
        values.append(value)
    return values


class PostgresEngine:
    """A pool of connections to the database at ``url`` (``postgresql://...``), per process.

    Args:
        url: a libpq connection URL.
        max_size: connections the pool may hold (one per serving thread, plus spare).
    """

    def __init__(self, url: str, max_size: int = 16) -> None:
        self.url = url
        self.max_size = max_size
        self._lock = threading.Lock()
        self._local = threading.local()
        self._pool: psycopg_pool.ConnectionPool[Any] | None = None
        self._pool_pid = 0

    def _configure(self, connection: psycopg.Connection[Any]) -> None:
        connection.autocommit = True
        connection.row_factory = _row_factory

    def pool(self) -> psycopg_pool.ConnectionPool[Any]:
        """This process's pool, opened on first use."""
        pid = os.getpid()
        with self._lock:
            if self._pool is None or self._pool_pid != pid:
                import psycopg
                import psycopg_pool

                # One direct attempt first: a server that is down is one clear error at once,
                # not a pool retrying (and logging each retry) for its whole timeout.
                try:
                    psycopg.connect(self.url, connect_timeout=5).close()
                except psycopg.Error as exc:
                    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else exc
                    raise OperationalError(
                        f"PostgreSQL at {redacted(self.url)} does not answer: {reason}"
                    ) from exc

                self._pool = psycopg_pool.ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=self.max_size,
                    configure=self._configure,
                    check=psycopg_pool.ConnectionPool.check_connection,
                    open=False,
                    name=f"sitecache-{pid}",
                )
                try:
                    self._pool.open(wait=True, timeout=10.0)
                except psycopg_pool.PoolTimeout as exc:
                    self._pool = None
                    raise OperationalError(
                        f"PostgreSQL at {redacted(self.url)} does not answer: {exc}"
                    ) from exc
                self._pool_pid = pid
            return self._pool

    def connection(self) -> PostgresConnection:
        """This thread's connection (taken from the pool on first use)."""
        found: PostgresConnection | None = getattr(self._local, "connection", None)
        if found is not None and getattr(self._local, "pid", 0) == os.getpid():
            if not found.raw.closed and not found.raw.broken:
                return found
            self.discard(found)
        import psycopg_pool

        try:
            raw = self.pool().getconn(timeout=30.0)
        except psycopg_pool.PoolTimeout as exc:
            raise OperationalError(f"no PostgreSQL connection free: {exc}") from exc
        found = PostgresConnection(self, raw)
        self._local.connection = found
        self._local.pid = os.getpid()
        return found

    def discard(self, connection: PostgresConnection) -> None:
        """Give ``connection`` back (a broken one is replaced by the pool)."""
        if getattr(self._local, "connection", None) is connection:
            self._local.connection = None
        pool = self._pool
        if pool is not None and self._pool_pid == os.getpid():
            pool.putconn(connection.raw)

    def close(self) -> None:
        """Close this process's pool."""
        with self._lock:
            if self._pool is not None and self._pool_pid == os.getpid():
                self._pool.close()
            self._pool = None
            self._local = threading.local()


def redacted(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
