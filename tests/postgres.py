"""PostgreSQL for the tests: a private schema per test in the database ``DATABASE_URL`` names
(default: the loopback server's ``test`` database), migrated, dropped afterwards.

Without a PostgreSQL answering, the PostgreSQL cases skip with the reason, unless
``SITECACHE_REQUIRE_POSTGRES=1`` (CI), where they fail.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import pytest

from sitecache.auth.store import SiteStore
from sitecache.site.migrations import migrate_content

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def server_url() -> str:
    """The PostgreSQL database the tests use (its schemas are theirs to create and drop)."""
    return os.environ.get("DATABASE_URL", DEFAULT_URL)


def _unavailable(reason: str) -> None:
    if os.environ.get("SITECACHE_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required (SITECACHE_REQUIRE_POSTGRES=1): {reason}")
    pytest.skip(f"no PostgreSQL for the PostgreSQL cases: {reason}")


def with_search_path(url: str, schema: str) -> str:
    """``url`` whose sessions use ``schema`` first and commit without waiting for the
    server's disk (``synchronous_commit=off``: what a commit makes visible is unchanged; only
    a crash of the server could lose the newest commits, and these schemas are thrown away).
    Most of a PostgreSQL case's time was its commits waiting on the disk flush."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-csearch_path={schema} -csynchronous_commit=off"))
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


@contextlib.contextmanager
def schema(migrate: bool = False) -> Iterator[str]:
    """A database URL whose tables live in a new schema (migrated when ``migrate``),
    dropped when the block ends."""
    import psycopg

    base = server_url()
    name = f"t_{uuid.uuid4().hex[:16]}"
    try:
        admin = psycopg.connect(base, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        _unavailable(f"{base}: {str(exc).strip()}")
        raise  # pragma: no cover - skip and fail raise
    with admin:
        admin.execute(f'CREATE SCHEMA "{name}"')
        url = with_search_path(base, name)
        try:
            if migrate:
                store = SiteStore(url=url, auto_migrate=True)
                try:
                    store.migrate()
                    migrate_content(store, apply=True)
                finally:
                    store.close()
            yield url
        finally:
            admin.execute(f'DROP SCHEMA "{name}" CASCADE')


def migrated_schema() -> contextlib.AbstractContextManager[str]:
    """`schema` with every table of this code created."""
    return schema(migrate=True)


#: The structure of a schema (tables and their columns, indexes, sequences, views,
#: constraints, functions, triggers, types) as one digest: equal digests, same structure.
_STRUCTURE = """
SELECT md5(coalesce(string_agg(item, E'\\n' ORDER BY item), '')) FROM (
  SELECT 'rel ' || c.relname || ' ' || c.relkind::text || ' ' || c.relrowsecurity::text || ' '
         || coalesce(pg_get_indexdef(i.indexrelid), '') || ' ' || coalesce((
           SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                             || ' ' || a.attnotnull::text
                             || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), ''),
                             ', ' ORDER BY a.attnum)
           FROM pg_attribute a
           LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
           WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') AS item
  FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid
  WHERE c.relnamespace = %(ns)s::regnamespace
  UNION ALL
  SELECT 'con ' || conname || ' ' || pg_get_constraintdef(oid)
  FROM pg_constraint WHERE connamespace = %(ns)s::regnamespace
  UNION ALL
  SELECT 'fn ' || p.oid::regprocedure::text || ' ' || md5(p.prosrc)
  FROM pg_proc p WHERE p.pronamespace = %(ns)s::regnamespace
  UNION ALL
  SELECT 'trg ' || t.tgrelid::regclass::text || ' ' || pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  WHERE c.relnamespace = %(ns)s::regnamespace AND NOT t.tgisinternal
  UNION ALL
  SELECT 'type ' || typname FROM pg_type WHERE typnamespace = %(ns)s::regnamespace
) items
"""

#: The schema's tables, each after every table that references it (children first).
_TABLES_CHILDREN_FIRST = """
WITH RECURSIVE tables AS (
  SELECT c.oid, c.relname FROM pg_class c
  WHERE c.relnamespace = %(ns)s::regnamespace AND c.relkind IN ('r', 'p')
), refs AS (
  SELECT DISTINCT conrelid AS child, confrelid AS parent FROM pg_constraint
  WHERE contype = 'f' AND connamespace = %(ns)s::regnamespace AND conrelid <> confrelid
), depth(oid, level) AS (
  SELECT oid, 0 FROM tables
  UNION ALL
  SELECT refs.child, depth.level + 1 FROM depth JOIN refs ON refs.parent = depth.oid
  WHERE depth.level < 64
)
SELECT t.relname FROM tables t JOIN depth d ON d.oid = t.oid
GROUP BY t.relname ORDER BY max(d.level) DESC, t.relname
"""


def _table(schema: str, table: str) -> Any:
    """``schema.table`` quoted as an SQL identifier (psycopg's composable)."""
    from psycopg import sql

    return sql.Identifier(schema, table)


class WorkerSchema:
    """One migrated schema per test process, lent to one test at a time and put back as the
    migrations left it when the test ends: every row deleted, the rows the migrations wrote
    restored, every sequence restarted. A test that changed its structure (a table, column,
    index, constraint, function, trigger or type added, altered or dropped), or whose clean-up
    fails, leaves it dropped: the next test gets a newly migrated one.

    Migrating costs about a second of waiting on the server (each DDL statement commits);
    putting the schema back costs milliseconds."""

    def __init__(self) -> None:
        self._name: str | None = None
        self._structure = ""
        self._tables: list[str] = []
        self._seed: dict[str, tuple[list[str], list[tuple[object, ...]]]] = {}
        self._sequences: list[tuple[str, int]] = []
        #: the connection that creates, puts back and drops the schema, kept between leases
        #: (a new server process per test costs the server more than the reset itself)
        self._admin: Any = None

    def _connection(self) -> Any:
        """The kept admin connection, made again when it is gone (skips the test when the
        server does not answer)."""
        import psycopg

        admin = self._admin
        if admin is not None and not admin.closed and not admin.broken:
            return admin
        base = server_url()
        try:
            admin = psycopg.connect(base, autocommit=True, connect_timeout=5)
        except psycopg.OperationalError as exc:
            _unavailable(f"{base}: {str(exc).strip()}")
            raise  # pragma: no cover - skip and fail raise
        admin.execute("SET synchronous_commit = off")
        self._admin = admin
        return admin

    @contextlib.contextmanager
    def lease(self) -> Iterator[str]:
        """The URL of a migrated schema holding only what the migrations wrote, the test's
        alone until the block ends."""
        admin = self._connection()
        if self._name is None:
            self._create(admin)
        assert self._name is not None
        try:
            yield with_search_path(server_url(), self._name)
        finally:
            admin = self._connection()  # the test may have restarted the server meanwhile
            if not self._reset(admin):
                self._drop(self._connection())  # made again if the reset lost it

    def close(self) -> None:
        """Drop the schema (at the end of the test session) and close the connection."""
        try:
            if self._name is not None:
                self._drop(self._connection())
        finally:
            if self._admin is not None:
                self._admin.close()
                self._admin = None

    def _create(self, admin: Any) -> None:
        from psycopg import sql

        name = f"t_{uuid.uuid4().hex[:16]}"
        admin.execute(f'CREATE SCHEMA "{name}"')
        self._name = name
        try:
            store = SiteStore(url=with_search_path(server_url(), name), auto_migrate=True)
            try:
                store.migrate()
                migrate_content(store, apply=True)
            finally:
                store.close()
            ns = {"ns": name}
            self._structure = admin.execute(_STRUCTURE, ns).fetchone()[0]
            self._tables = [row[0] for row in admin.execute(_TABLES_CHILDREN_FIRST, ns)]
            self._seed = {}
            for table in self._tables:
                cursor = admin.execute(sql.SQL("SELECT * FROM {}").format(_table(name, table)))
                rows = cursor.fetchall()
                if rows:
                    columns = [column.name for column in cursor.description or ()]
                    self._seed[table] = (columns, rows)
            self._sequences = [
                (row[0], int(row[1]))
                for row in admin.execute(
                    "SELECT sequencename, start_value FROM pg_sequences WHERE schemaname = %s",
                    (name,),
                )
            ]
        except BaseException:
            self._drop(admin)
            raise

    def _reset(self, admin: Any) -> bool:
        """Put the schema back as migrated; False when that could not be done (the schema
        is then to be dropped)."""
        import psycopg
        from psycopg import sql

        name = self._name
        if name is None:
            return True
        try:
            if admin.execute(_STRUCTURE, {"ns": name}).fetchone()[0] != self._structure:
                return False
            with admin.transaction():
                # A connection the test left open holding a lock fails the reset rather
                # than hanging it.
                admin.execute("SET LOCAL lock_timeout = '5s'")
                for table in self._tables:
                    admin.execute(sql.SQL("DELETE FROM {}").format(_table(name, table)))
                for table, (columns, rows) in self._seed.items():
                    insert = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
                        _table(name, table),
                        sql.SQL(", ").join(map(sql.Identifier, columns)),
                        sql.SQL(", ").join(sql.Placeholder() * len(columns)),
                    )
                    with admin.cursor() as cursor:
                        cursor.executemany(insert, rows)
                for sequence, start in self._sequences:
                    admin.execute(
                        "SELECT setval(%s::regclass, %s, false)", (f'"{name}"."{sequence}"', start)
                    )
        except psycopg.Error:
            return False
        return True

    def _drop(self, admin: Any) -> None:
        name, self._name = self._name, None
        if name is not None:
            admin.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
