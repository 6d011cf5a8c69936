"""The site store: SQLite under the data directory (the default) or a shared PostgreSQL.

SQLite (``site.db``) is created on first use; WAL mode and a busy timeout let several gunicorn
workers share the file. PostgreSQL (`database_url`, `sitecache.auth.postgres`) lets several
machines share one site. Connections are per process and thread on both: one opened before a
fork is never used by the child.

Each component (the auth tables here, the content tables in `sitecache.site.migrations`) has
its list of ``(version, SQL)`` migrations, each run once inside a transaction (a crash leaves
the previous version intact). SQLite stores migrate themselves on first use; a PostgreSQL store,
shared by nodes that may run different releases during an upgrade, is migrated by
``sitecache init`` or ``sitecache migrate`` and only checked by a serving node, which refuses a
schema newer or older than its code (`SchemaVersionError`).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, cast

from sitecache.auth.db import (
    DatabaseError,
    DbConnection,
    SchemaVersionError,
    StoreFull,
    StoreUnavailable,
    postgres_ddl,
)
from sitecache.auth.outages import StoreLimits, sqlite_error
from sitecache.auth.postgres import PostgresEngine, redacted
from sitecache.domain_errors import NumberOutOfRange
from sitecache.sqlite_wal import enable_wal

__all__ = [
    "AUTH_COMPONENT",
    "MIGRATIONS",
    "SiteStore",
    "is_postgres_url",
    "make_private_directory",
    "sql_values",
]

logger = logging.getLogger("sitecache.auth")

AUTH_COMPONENT: Final = "auth"
_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")
#: The advisory lock every PostgreSQL migration takes (nodes migrating at once take turns).
_MIGRATION_LOCK: Final = 0x5C_CA_C4E


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


#: A migration: ``(version, SQL)``, or ``(version, SQLite's SQL, PostgreSQL's SQL)``.
Migration = tuple[int, str] | tuple[int, str, str]

MIGRATIONS: Final[tuple[Migration, ...]] = (
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
    (
        3,
        """
        CREATE UNIQUE INDEX users_by_lower_login ON users(lower(login));
        CREATE UNIQUE INDEX users_by_lower_email ON users(lower(email));
        CREATE TABLE shared_values (
            name  TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        ALTER TABLE app_passwords ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
        UPDATE app_passwords SET position = rowid
        """,
        # PostgreSQL has no rowid, and a new database has no passwords to number.
        """
        CREATE UNIQUE INDEX users_by_lower_login ON users(lower(login));
        CREATE UNIQUE INDEX users_by_lower_email ON users(lower(email));
        CREATE TABLE shared_values (
            name  TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        ALTER TABLE app_passwords ADD COLUMN position INTEGER NOT NULL DEFAULT 0
        """,
    ),
)
"""``(version, SQL)`` pairs, applied in order, or ``(version, SQLite's SQL, PostgreSQL's SQL)``
where the two must differ (the PostgreSQL text goes through `postgres_ddl` too); never edit
one that has shipped, add another."""


def is_postgres_url(url: str | None) -> bool:
    """Whether ``url`` names a PostgreSQL database."""
    return bool(url) and str(url).startswith(_POSTGRES_SCHEMES)


class _SiteConnection(sqlite3.Connection):
    """A connection whose statements refuse, as a domain error, an integer SQLite cannot hold,
    and whose errors are the store's (`DatabaseError`), not sqlite3's.

    Request arguments are Python integers (never clamped, README "The schema engine"): an id,
    a page or an offset past 2**63 - 1 names no row, and is a 400 ``rest_invalid_param`` (as
    WordPress, whose PHP integers stop there, refuses it) rather than an OverflowError.
    """

    #: Off while the store sets the connection up (`enable_wal` waits out sqlite3's "locked").
    translating = False
    #: The database file and the store's limits (the errors' words and ``Retry-After``).
    site_path = Path()
    limits = StoreLimits()

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except OverflowError as exc:
            raise NumberOutOfRange.past_64_bits() from exc
        except sqlite3.Error as exc:
            if not self.translating:
                raise
            raise sqlite_error(exc, self.site_path, self.limits) from exc

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except sqlite3.Error as exc:
            raise sqlite_error(exc, self.site_path, self.limits) from exc


class SiteStore:
    """The site's database: SQLite at ``path``, or PostgreSQL at ``url``.

    Args:
        path: the SQLite database file (its directory is created with mode 0700); unused when
            ``url`` names a PostgreSQL database.
        url: ``postgresql://...`` (a shared database), ``sqlite:///path`` or ``None``.
        auto_migrate: apply pending migrations on first use (default: SQLite yes, PostgreSQL
            no: ``sitecache init`` or ``migrate`` migrates it, serving nodes only check it).
        limits: how long a statement waits for the database (`StoreLimits`).
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        url: str | None = None,
        auto_migrate: bool | None = None,
        limits: StoreLimits | None = None,
    ) -> None:
        if url and url.startswith("sqlite:///"):
            path = Path(url[len("sqlite:///") :])
            url = None
        if url and not is_postgres_url(url):
            raise ValueError(f"database_url must be postgresql://... or sqlite:///...: {url!r}")
        if url is None and path is None:
            raise ValueError("a site store needs a SQLite path or a database URL")
        self.path = path if path is not None else Path()
        self.url = url
        if url:
            try:
                import psycopg  # noqa: F401
                import psycopg_pool  # noqa: F401
            except ImportError as exc:
                raise DatabaseError(
                    "database_url names a PostgreSQL database but psycopg is not installed:"
                    " pip install 'sitecache[postgres]'"
                ) from exc
        self.limits = limits or StoreLimits()
        self.postgres = PostgresEngine(url, limits=self.limits) if url else None
        self.auto_migrate = self.postgres is None if auto_migrate is None else auto_migrate
        self._local = threading.local()
        self._migrate_lock = threading.Lock()
        self._components: dict[str, tuple[Migration, ...]] = {AUTH_COMPONENT: MIGRATIONS}
        self._ready: set[str] = set()

    @property
    def engine(self) -> str:
        """``"postgresql"`` or ``"sqlite"``."""
        return "postgresql" if self.postgres is not None else "sqlite"

    @property
    def shared(self) -> bool:
        """Whether several machines may share this store (its secrets live in it)."""
        return self.postgres is not None

    def describe(self) -> str:
        """Where the store is, for messages (a URL's password left out)."""
        return redacted(self.url) if self.url else str(self.path)

    def _open(self) -> sqlite3.Connection:
        """A new connection to the SQLite file, set up (WAL, foreign keys, busy timeout).

        Raises:
            StoreUnavailable: the file cannot be opened or set up now (locked past the busy
                timeout, a read-only or unwritable directory, a disk too full to open it).
        """
        limits = self.limits
        try:
            make_private_directory(self.path.parent)
        except OSError as exc:
            raise StoreUnavailable(f"{exc.strerror or exc}: {self.path.parent}") from exc
        connection = None
        try:
            connection = sqlite3.connect(
                self.path,
                timeout=limits.busy_timeout,
                isolation_level=None,
                check_same_thread=True,
                factory=_SiteConnection,
            )
            connection.site_path = self.path
            connection.limits = limits
            connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA foreign_keys = ON")
            connection.execute(f"PRAGMA busy_timeout = {int(limits.busy_timeout * 1000)}")
            enable_wal(connection, wait=limits.busy_timeout)
            connection.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            if connection is not None:
                connection.close()
            error = sqlite_error(exc, self.path, limits)
            if isinstance(error, StoreFull):
                # Not a write refused: the database cannot even be opened (its shared-memory
                # file cannot be made), so nothing can be read either.
                error = StoreUnavailable(f"cannot open it on a full disk: {error.reason}")
            raise error from exc
        connection.translating = True
        return connection

    def connection(self) -> DbConnection:
        """This thread's connection (opened lazily; a forked child opens its own), with every
        registered component's schema migrated (or checked, see ``auto_migrate``).

        Raises:
            SchemaVersionError: the schema is newer than this code, or older and not migrated.
        """
        connection = self._thread_connection()
        if len(self._ready) < len(self._components):
            self.prepare()
        return connection

    def _thread_connection(self) -> DbConnection:
        if self.postgres is not None:
            return self.postgres.connection()
        pid = os.getpid()
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None or getattr(self._local, "pid", None) != pid:
            connection = self._open()
            self._local.connection = connection
            self._local.pid = pid
            if self.path.stat().st_mode & 0o077:
                os.chmod(self.path, 0o600)
        return cast(DbConnection, connection)

    # ------------------------------------------------------------------ migrations
    def register(self, component: str, migrations: tuple[Migration, ...]) -> None:
        """Add a component's migrations (prepared with the others on next use)."""
        self._components[component] = migrations
        self._ready.discard(component)

    def prepare(self) -> None:
        """Migrate (``auto_migrate``) or check every registered component."""
        for component in list(self._components):
            if component not in self._ready:
                if self.auto_migrate:
                    self.migrate_component(component)
                else:
                    self.check_component(component)
                self._ready.add(component)

    def prepare_if_answering(self) -> bool:
        """`prepare` now when the database answers; when it does not, leave it to the first
        use (every `connection` prepares what is not prepared yet). Whether it was prepared.

        Raises:
            SchemaVersionError: as `prepare` (the database answered with another schema).
        """
        try:
            if self.auto_migrate:
                self.migrate()
            else:
                self.prepare()
        except StoreUnavailable as exc:
            logger.warning(
                "starting without the site database (%s): it is migrated or checked when "
                "it answers",
                exc,
            )
            return False
        return True

    def migrate(self, connection: DbConnection | None = None) -> int:
        """Apply every pending migration of every registered component; returns the auth
        tables' schema version."""
        del connection  # the thread's own connection is used
        for component in list(self._components):
            self.migrate_component(component)
            self._ready.add(component)
        return self.version(AUTH_COMPONENT)

    def latest(self, component: str) -> int:
        """The schema version this code writes for ``component``."""
        migrations = self._components[component]
        return migrations[-1][0] if migrations else 0

    def version(self, component: str) -> int:
        """The schema version the database holds for ``component`` (0: none)."""
        connection = self._thread_connection()
        if component == AUTH_COMPONENT and self.postgres is None:
            return int(connection.execute("PRAGMA user_version").fetchone()[0])
        self._ensure_versions_table(connection)
        row = connection.execute(
            "SELECT version FROM schema_versions WHERE component = ?", (component,)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def check_component(self, component: str) -> None:
        """Refuse a schema of ``component`` other than this code's.

        Raises:
            SchemaVersionError: newer (upgrade this node) or older (run ``sitecache migrate``).
        """
        found, latest = self.version(component), self.latest(component)
        if found > latest:
            raise SchemaVersionError(
                f"the database {self.describe()} holds schema version {found} of {component!r},"
                f" newer than this sitecache's {latest}: upgrade sitecache on this node"
            )
        if found < latest:
            raise SchemaVersionError(
                f"the database {self.describe()} holds schema version {found} of {component!r},"
                f" older than this sitecache's {latest}: run `sitecache migrate` once to migrate"
                " it, then restart the nodes"
            )

    def migrate_component(self, component: str) -> int:
        """Apply ``component``'s pending migrations; its version afterwards.

        Raises:
            SchemaVersionError: the database's schema is newer than this code's.
        """
        with self._migrate_lock:
            connection = self._thread_connection()
            version = self.version(component)
            latest = self.latest(component)
            if version > latest:
                self.check_component(component)
            for migration in self._components[component]:
                target, script = migration[0], str(migration[-1 if self.postgres else 1])
                if target <= version:
                    continue
                with self._locked_transaction(connection):
                    # Re-read under the write lock: another worker or node may have migrated.
                    if self.version(component) < target:
                        for statement in _statements(script):
                            if self.postgres is not None:
                                statement = postgres_ddl(statement)
                            connection.execute(statement)
                        self._set_version(connection, component, target)
                version = target
            return version

    @contextmanager
    def _locked_transaction(self, connection: DbConnection) -> Iterator[None]:
        connection.execute("BEGIN IMMEDIATE")
        try:
            if self.postgres is not None:
                connection.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
            yield
        except BaseException:
            _roll_back(connection)
            raise
        try:
            connection.execute("COMMIT")
        except DatabaseError:
            _roll_back(connection)
            raise

    def _ensure_versions_table(self, connection: DbConnection) -> None:
        if getattr(self._local, "versions_table", False):
            return
        create = (
            "CREATE TABLE IF NOT EXISTS schema_versions"
            " (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
        )
        if self.postgres is not None:
            # Looked for first: once it exists (every start but a new database's), a new
            # connection takes no lock and runs no DDL. Two nodes creating it at once would
            # collide in PostgreSQL's catalog, hence the lock when it does not.
            found = connection.execute("SELECT to_regclass('schema_versions')").fetchone()
            if found[0] is None:
                with self._locked_transaction(connection):
                    connection.execute(postgres_ddl(create))
        else:
            connection.execute(create)
        self._local.versions_table = True

    def _set_version(self, connection: DbConnection, component: str, version: int) -> None:
        if component == AUTH_COMPONENT and self.postgres is None:
            connection.execute(f"PRAGMA user_version = {int(version)}")
            return
        connection.execute(
            "INSERT INTO schema_versions (component, version) VALUES (?, ?)"
            " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
            (component, version),
        )

    # ------------------------------------------------------------------ shared values
    def shared_value(self, name: str, create: str) -> str:
        """The value stored under ``name`` in the store, storing ``create`` when there is none
        (nodes asking at once all get the one value that won)."""
        connection = self.connection()
        connection.execute(
            "INSERT INTO shared_values (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
            (name, create),
        )
        row = connection.execute("SELECT value FROM shared_values WHERE name = ?", (name,))
        return str(row.fetchone()[0])

    @contextmanager
    def transaction(self) -> Iterator[DbConnection]:
        """A write transaction: committed on success, rolled back on any exception.

        Raises:
            StoreUnavailable: the database stopped answering (nothing of the transaction is
                kept unless its COMMIT was answered).
            StoreFull: a write found no space (the transaction was rolled back).
        """
        connection = self.connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            _roll_back(connection)
            raise
        try:
            connection.execute("COMMIT")
        except DatabaseError:
            # A COMMIT refused (a full disk) leaves the transaction open on some engines.
            _roll_back(connection)
            raise

    def change_stamp(self, connection: DbConnection) -> tuple[int, int] | None:
        """A stamp of the database as ``connection`` sees it: two stamps taken on the same
        connection are equal only if nothing was written to the database in between, by any
        connection of any process (SQLite's ``data_version`` counts the other connections'
        commits, the connection's ``total_changes`` its own writes). ``None`` when there is no
        such stamp to be had cheaply (PostgreSQL) or ``connection`` is inside a transaction: the
        caller reads afresh.

        Take the stamp before the read it vouches for: a write committed between the two is then
        in the read and makes the next stamp differ, so a kept read never outlives a write.
        """
        if self.postgres is not None or connection.in_transaction:
            return None
        (version,) = connection.execute("PRAGMA data_version").fetchone()
        return int(version), connection.total_changes

    def integrity_check(self) -> str:
        """``"ok"``, or what the engine's own check found wrong."""
        connection = self.connection()
        if self.postgres is not None:
            connection.execute("SELECT 1").fetchone()
            return "ok"
        return str(connection.execute("PRAGMA quick_check").fetchone()[0])

    def close(self) -> None:
        """Close this thread's connection (PostgreSQL: this process's pool)."""
        if self.postgres is not None:
            self.postgres.close()
            return
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None


def _roll_back(connection: DbConnection) -> None:
    """Roll back ``connection``'s open transaction, if any: the engine may have rolled it
    back by itself (SQLite on ``SQLITE_FULL``) or lost it with the connection, and a failing
    ROLLBACK must not hide the error that caused it (logged, then left to that error)."""
    if not connection.in_transaction:
        return
    try:
        connection.execute("ROLLBACK")
    except DatabaseError as exc:
        logger.warning("the site database refused a ROLLBACK: %s", exc)


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (no semicolons inside our literals)."""
    return [statement.strip() for statement in script.split(";") if statement.strip()]
