"""The PostgreSQL engine of the site store: psycopg 3 and its connection pool.

Each process opens its own pool on first use (one made before a fork is never used by the
child). A thread takes one connection from the pool and keeps it, as SQLite's engine keeps a
connection per thread: the repositories run ``BEGIN``/``COMMIT`` on the connection they were
given. Connections run in autocommit mode, so a statement outside `SiteStore.transaction` is
its own transaction, exactly as on SQLite.

A connection that failed is never used again (the server restarted, the network dropped it):

- before a statement outside a transaction, a kept connection whose socket has something to
  read (the server's goodbye, or its end) is dead: it goes back to the pool, which closes it,
  and a fresh one is taken;
- a read (``SELECT``) or a ``BEGIN`` outside a transaction that fails with its connection is
  tried once more on a fresh one; any other statement that loses its connection raises
  `StoreUnavailable`, and so does every later statement of a transaction it broke, until
  that transaction's ``ROLLBACK``.

While the server does not answer, nothing waits longer than the `StoreLimits`: a connection
takes at most ``connect_timeout`` to open and a request at most ``pool_timeout`` to get one.
Once a request found it not answering, the process's requests fail at once (no thread is held
by a dead database while the page cache serves what it holds) and a thread of its own tries
the database every half second; the first connection it gets lets requests through again.
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

from sitecache.auth.db import (
    DatabaseError,
    IntegrityError,
    OperationalError,
    StoreFull,
    StoreUnavailable,
    postgres_query,
)
from sitecache.auth.outages import StoreLimits
from sitecache.domain_errors import NumberOutOfRange

if TYPE_CHECKING:  # psycopg is imported when a PostgreSQL store is opened, not before
    import psycopg
    import psycopg_pool

__all__ = ["PostgresEngine", "PostgresRow"]

logger = logging.getLogger("sitecache.auth")

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
#: Seconds between two tries of a database that did not answer (requests fail at once
#: meanwhile).
REVIVE_SECONDS: Final = 0.5
#: Statements that may run twice without harm when their connection died under them.
_RETRIED: Final = ("SELECT", "BEGIN", "PRAGMA")


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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _translate(exc: Exception, limits: StoreLimits) -> DatabaseError:
    """The store's error for a psycopg one: `StoreFull` for a full disk (SQLSTATE 53100),
    `StoreUnavailable` for every operational failure (a lost or refused connection, a
    shutdown, too many connections, a deadlock), else the store's own kind."""
    import psycopg

    message = _first_line(exc)
    if isinstance(exc, psycopg.errors.DiskFull):
        return StoreFull(message)
    if isinstance(exc, psycopg.errors.IntegrityError):
        return IntegrityError(message)
    if isinstance(exc, psycopg.errors.NumericValueOutOfRange):
        return NumberOutOfRange.past_64_bits()  # type: ignore[return-value]
    if isinstance(exc, psycopg.OperationalError | psycopg.errors.ReadOnlySqlTransaction):
        return StoreUnavailable(message, limits.retry_after)
    return DatabaseError(message)


def _is_retried(sql: str) -> bool:
    """Whether ``sql`` may run again on a fresh connection when its connection died."""
    return sql.lstrip()[:6].upper().startswith(_RETRIED)


class PostgresConnection:
    """This thread's pooled psycopg connection with the interface the repositories use; the
    psycopg connection under it is replaced when it dies (see the module docstring)."""

    def __init__(self, engine: PostgresEngine, connection: psycopg.Connection[Any]) -> None:
        self._engine = engine
        self._connection: psycopg.Connection[Any] | None = connection
        self._changes = 0
        self._trace: Callable[[str], object] | None = None
        #: a transaction was open when the connection died: refused until its ROLLBACK
        self._lost_transaction = False

    def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        """Call ``callback`` with each statement's text before it runs (as sqlite3 does)."""
        self._trace = callback

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this connection (one lost with its connection
        is not: nothing is left to roll back)."""
        from psycopg.pq import TransactionStatus

        raw = self._connection
        if raw is None or raw.closed or raw.broken:
            return False
        return raw.info.transaction_status != TransactionStatus.IDLE

    @property
    def total_changes(self) -> int:
        """How many writing statements this connection ran (a marker that moves on a write)."""
        return self._changes

    def alive(self) -> bool:
        """Whether the psycopg connection can take a statement: open, not broken, and (when
        idle) with nothing from the server waiting on its socket (after a restart the server's
        goodbye or the socket's end is there). A cheap poll of the socket, no round trip."""
        raw = self._connection
        if raw is None or raw.closed or raw.broken:
            return False
        if self.in_transaction:
            return True
        try:
            readable, _, _ = select.select([raw.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    def _raw(self) -> psycopg.Connection[Any]:
        """The psycopg connection to run the next statement on (a fresh one when the last
        died outside a transaction).

        Raises:
            StoreUnavailable: the transaction was lost with its connection, or no fresh
                connection could be had.
        """
        if self._lost_transaction:
            raise StoreUnavailable(
                "the connection was lost during a transaction", self._engine.limits.retry_after
            )
        raw = self._connection
        if raw is not None and not self.alive():
            self._drop(dead=True)
            raw = None
        if raw is None:
            raw = self._connection = self._engine.take()
        return raw

    def _drop(self, *, dead: bool = False) -> None:
        """Give the psycopg connection back to the pool (which discards it when closed or
        broken); ``dead``: closed first (its socket says the server is gone, which the pool
        cannot know, and would hand it out again)."""
        raw, self._connection = self._connection, None
        if raw is not None:
            if dead and not raw.closed:
                raw.close()
            self._engine.give_back(raw)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        """Run ``sql`` (``?`` placeholders); the cursor, or a `DatabaseError`.

        Raises:
            StoreUnavailable: the database does not answer (a read or ``BEGIN`` outside a
                transaction was tried once more on a fresh connection first).
            StoreFull: no space is left for the write.
        """
        import psycopg

        if self._trace is not None:
            self._trace(sql)
        if self._lost_transaction and sql.strip().upper() == "ROLLBACK":
            self._lost_transaction = False  # nothing is left of it on the server
            return None
        query = postgres_query(sql)
        values = _bounded(parameters)
        if not sql.lstrip()[:6].upper().startswith("SELECT"):
            self._changes += 1
        for attempt in (1, 2):
            raw = self._raw()
            in_transaction = self.in_transaction
            try:
                return raw.execute(query, values, prepare=False)
            except psycopg.Error as exc:
                if not raw.broken and not raw.closed:
                    if isinstance(exc, psycopg.errors.InFailedSqlTransaction):
                        raise OperationalError(str(exc)) from exc
                    raise _translate(exc, self._engine.limits) from exc
                # The connection died under the statement.
                self._drop()
                if in_transaction:
                    self._lost_transaction = True
                elif attempt == 1 and _is_retried(sql):
                    continue
                raise _translate(exc, self._engine.limits) from exc
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        """Run ``sql`` once per parameter set.

        Raises:
            StoreUnavailable: the database does not answer.
            StoreFull: no space is left for the writes.
        """
        import psycopg

        self._changes += 1
        raw = self._raw()
        in_transaction = self.in_transaction
        cursor = raw.cursor()
        try:
            cursor.executemany(postgres_query(sql), [_bounded(values) for values in parameters])
        except psycopg.Error as exc:
            if raw.broken or raw.closed:
                self._drop()
                self._lost_transaction = in_transaction
            raise _translate(exc, self._engine.limits) from exc
        return cursor

    def close(self) -> None:
        """Give the connection back to the pool."""
        self._engine.discard(self)

    @property
    def raw(self) -> psycopg.Connection[Any]:
        """The psycopg connection (tests and the migration lock use it).

        Raises:
            StoreUnavailable: no connection could be had.
        """
        return self._raw()


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
        limits: how long opening a connection and waiting for one may take.
    """

    def __init__(self, url: str, max_size: int = 16, limits: StoreLimits | None = None) -> None:
        self.url = url
        self.max_size = max_size
        self.limits = limits or StoreLimits()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._pool: psycopg_pool.ConnectionPool[Any] | None = None
        self._pool_pid = 0
        #: the process (pid) in which the database did not answer: its requests fail at once
        #: until its reviver thread reaches the database again (0: it answers)
        self._failing_pid = 0
        self._failing_since = 0.0
        self._revive_lock = threading.Lock()
        self._closed = False

    def _configure(self, connection: psycopg.Connection[Any]) -> None:
        connection.autocommit = True
        connection.row_factory = _row_factory

    @property
    def failing(self) -> bool:
        """Whether this process found the database not answering and has not reached it
        since (its requests then fail at once)."""
        return self._failing_pid == os.getpid()

    def _unavailable(self, reason: object) -> StoreUnavailable:
        """The error of a database that did not answer; from now on this process's requests
        fail at once while a thread of its own tries the database every `REVIVE_SECONDS`."""
        error = StoreUnavailable(
            f"PostgreSQL at {redacted(self.url)}: {reason}", self.limits.retry_after
        )
        with self._revive_lock:
            if not self.failing and not self._closed:
                self._failing_pid = os.getpid()
                self._failing_since = time.monotonic()
                logger.warning("%s; requests that need it answer 503 until it answers", error)
                threading.Thread(
                    target=self._revive, name="sitecache-db-revive", daemon=True
                ).start()
        return error

    def _fail_fast(self) -> StoreUnavailable:
        return StoreUnavailable(
            f"PostgreSQL at {redacted(self.url)} did not answer a moment ago",
            self.limits.retry_after,
        )

    def _revive(self) -> None:
        """Try the database every `REVIVE_SECONDS` until it gives a connection again, then
        let requests through (within about a second of its return)."""
        import psycopg_pool

        while not self._closed:
            time.sleep(REVIVE_SECONDS)
            try:
                pool = self.pool(reviving=True)
                pool.putconn(pool.getconn(timeout=self.limits.pool_timeout))
            except (StoreUnavailable, psycopg_pool.PoolTimeout):
                continue
            except Exception:  # pragma: no cover - an unexpected failure: keep trying
                logger.exception("the site database reviver failed; trying again")
                continue
            with self._revive_lock:
                down = time.monotonic() - self._failing_since
                self._failing_pid = 0
            logger.warning(
                "PostgreSQL at %s answers again (after %.1f s)", redacted(self.url), down
            )
            return

    def pool(self, *, reviving: bool = False) -> psycopg_pool.ConnectionPool[Any]:
        """This process's pool, opened on first use.

        Raises:
            StoreUnavailable: the server does not answer within the connect timeout (at once
                when it did not a moment ago, unless ``reviving``).
        """
        pid = os.getpid()
        with self._lock:
            if self._pool is None or self._pool_pid != pid:
                import psycopg
                import psycopg_pool

                if self.failing and not reviving:
                    # Another thread found the server down while this one waited.
                    raise self._fail_fast()
                limits = self.limits
                # One direct attempt first: a server that is down is one clear error at once,
                # not a pool retrying (and logging each retry) for its whole timeout.
                try:
                    psycopg.connect(self.url, connect_timeout=limits.connect_seconds).close()
                except psycopg.Error as exc:
                    raise self._unavailable(f"does not answer: {_first_line(exc)}") from exc

                pool = psycopg_pool.ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=self.max_size,
                    kwargs={"connect_timeout": limits.connect_seconds},
                    configure=self._configure,
                    check=psycopg_pool.ConnectionPool.check_connection,
                    timeout=limits.pool_timeout,
                    # A lost connection is replaced within seconds of the server's return,
                    # not after the pool's default back-off of minutes.
                    reconnect_timeout=limits.connect_seconds + limits.pool_timeout,
                    open=False,
                    name=f"sitecache-{pid}",
                )
                try:
                    pool.open(wait=True, timeout=limits.connect_seconds + limits.pool_timeout)
                except psycopg_pool.PoolTimeout as exc:
                    pool.close(timeout=0)
                    raise self._unavailable(f"does not answer: {exc}") from exc
                self._pool = pool
                self._pool_pid = pid
                self._closed = False
            return self._pool

    def take(self) -> psycopg.Connection[Any]:
        """A psycopg connection of the pool, waiting at most the pool timeout; at once an
        error while this process finds the database not answering (see `failing`).

        Raises:
            StoreUnavailable: no connection within the pool timeout, or the database does
                not answer.
        """
        import psycopg_pool

        if self.failing:
            raise self._fail_fast()
        try:
            raw: psycopg.Connection[Any] = self.pool().getconn(timeout=self.limits.pool_timeout)
        except psycopg_pool.PoolTimeout as exc:
            raise self._unavailable(f"no connection within {self.limits.pool_timeout:g} s") from exc
        return raw

    def give_back(self, raw: psycopg.Connection[Any]) -> None:
        """Return ``raw`` to this process's pool (closed there when broken)."""
        pool = self._pool
        if pool is not None and self._pool_pid == os.getpid():
            pool.putconn(raw)

    def connection(self) -> PostgresConnection:
        """This thread's connection (taken from the pool on first use, and again whenever the
        one it held died).

        Raises:
            StoreUnavailable: no connection could be had.
        """
        found: PostgresConnection | None = getattr(self._local, "connection", None)
        if found is not None and getattr(self._local, "pid", 0) == os.getpid():
            if found.alive():
                return found
            self.discard(found, dead=True)
        found = PostgresConnection(self, self.take())
        self._local.connection = found
        self._local.pid = os.getpid()
        return found

    def discard(self, connection: PostgresConnection, *, dead: bool = False) -> None:
        """Give ``connection`` back (``dead``: closed first; the pool replaces it)."""
        if getattr(self._local, "connection", None) is connection:
            self._local.connection = None
        connection._drop(dead=dead)

    def close(self) -> None:
        """Close this process's pool (and stop trying a database that does not answer)."""
        self._closed = True
        self._failing_pid = 0
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
