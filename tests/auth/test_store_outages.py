"""The site store's outages (#29): which engine failures are `StoreUnavailable` (503) and
`StoreFull` (507), a dead PostgreSQL connection replaced before use or under a read, a
transaction lost with its connection, a store that boots without its database, the node's
copies of the shared key and namespace."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from sitecache.auth import AuthService, PasswordHasher
from sitecache.auth.db import OperationalError, StoreFull, StoreUnavailable
from sitecache.auth.keys import SHARED_KEY_COPY
from sitecache.auth.local_copies import keep_copy, read_copy
from sitecache.auth.outages import StoreLimits, sqlite_error
from sitecache.auth.postgres import PostgresConnection, _translate
from sitecache.auth.store import SiteStore
from sitecache.domain_errors import StorageFullError, UnavailableError
from sitecache.rest.error_handlers import ErrorHandlers
from tests.postgres import schema

LIMITS = StoreLimits(connect_timeout=2, pool_timeout=1, busy_timeout=0.2, retry_after=7)


# ---------------------------------------------------------------------- what is an outage
def test_outages_answer_503_and_507_with_their_codes() -> None:
    handlers = ErrorHandlers()
    down = handlers.to_rest_error(StoreUnavailable("gone", retry_after=7))
    assert (down.code, down.status, down.data["retry_after"]) == ("site_unavailable", 503, 7)
    full = handlers.to_rest_error(StoreFull("no space"))
    assert (full.code, full.status) == ("site_storage_full", 507)
    assert isinstance(StoreUnavailable("x"), OperationalError | UnavailableError)
    assert isinstance(StoreFull("x"), OperationalError | StorageFullError)
    # What users read says what to do; what the log reads names what failed.
    assert "Try again in 7 seconds" in StoreUnavailable("gone", 7).message
    assert str(StoreUnavailable("gone")) == "the site database does not answer: gone"


def test_a_database_locked_past_the_busy_timeout_is_unavailable(tmp_path: Path) -> None:
    store = SiteStore(tmp_path / "site.db", limits=LIMITS)
    store.migrate()
    holder = sqlite3.connect(tmp_path / "site.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="busy timeout"), store.transaction():
            pass
        assert time.monotonic() - started < 2
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with store.transaction() as connection:
        connection.execute("INSERT INTO options (name, value) VALUES ('after', '1')")
    store.close()


def test_a_full_database_is_store_full_and_rolled_back(tmp_path: Path) -> None:
    store = SiteStore(tmp_path / "site.db", limits=LIMITS)
    store.migrate()
    connection = store.connection()
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL, as a full disk
    with pytest.raises(StoreFull), store.transaction() as writing:
        writing.execute("INSERT INTO options (name, value) VALUES ('big', ?)", ("x" * 100_000,))
    assert not connection.in_transaction
    assert connection.execute("SELECT COUNT(*) FROM options WHERE name = 'big'").fetchone()[0] == 0
    connection.execute(f"PRAGMA max_page_count = {pages * 100}")  # space freed
    with store.transaction() as writing:
        writing.execute("INSERT INTO options (name, value) VALUES ('big', ?)", ("x" * 100_000,))
    store.close()


def test_sqlite_errors_that_are_mistakes_stay_mistakes(tmp_path: Path) -> None:
    error = sqlite_error(sqlite3.OperationalError("no such table: nope"), tmp_path, LIMITS)
    assert type(error) is OperationalError


def test_psycopg_errors_are_translated() -> None:
    assert isinstance(_translate(psycopg.errors.DiskFull("could not extend"), LIMITS), StoreFull)
    down = _translate(psycopg.errors.AdminShutdown("terminating connection"), LIMITS)
    assert isinstance(down, StoreUnavailable)
    assert down.retry_after == 7
    assert isinstance(
        _translate(psycopg.OperationalError("connection lost"), LIMITS), StoreUnavailable
    )
    assert isinstance(
        _translate(psycopg.errors.ReadOnlySqlTransaction("standby"), LIMITS), StoreUnavailable
    )
    assert not isinstance(_translate(psycopg.errors.SyntaxError("oops"), LIMITS), StoreUnavailable)


# ---------------------------------------------------------------------- dead connections
#: The application name of the tests' store connections (the ones a test ends).
VICTIM = "sitecache_outage_test"


@pytest.fixture
def postgres_store() -> Iterator[SiteStore]:
    with schema() as url:
        store = SiteStore(url=f"{url}&application_name={VICTIM}", auto_migrate=True, limits=LIMITS)
        store.migrate()
        yield store
        store.close()


def _kill(store: SiteStore) -> None:
    """End this thread's connection on the server's side (as a restart ends every one)."""
    connection = store.connection()
    assert isinstance(connection, PostgresConnection)
    pid = connection.raw.info.backend_pid
    with psycopg.connect(store.url or "", autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    deadline = time.monotonic() + 5
    while connection.alive() and time.monotonic() < deadline:  # the goodbye arrives
        time.sleep(0.01)


def test_a_dead_kept_connection_is_replaced_before_use(postgres_store: SiteStore) -> None:
    before = postgres_store.connection()
    _kill(postgres_store)
    after = postgres_store.connection()
    assert after is not before
    assert after.execute("SELECT 1").fetchone()[0] == 1


def test_a_read_and_a_begin_are_retried_on_a_fresh_connection(postgres_store: SiteStore) -> None:
    connection = postgres_store.connection()
    assert isinstance(connection, PostgresConnection)
    for statement in ("SELECT 1", "BEGIN"):
        pid = connection.raw.info.backend_pid
        with psycopg.connect(postgres_store.url or "", autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        time.sleep(0.2)
        connection.execute(statement)  # the held connection died: a fresh one answers
        assert connection.raw.info.backend_pid != pid
    connection.execute("ROLLBACK")


def test_a_transaction_lost_with_its_connection_is_refused_until_rolled_back(
    postgres_store: SiteStore,
) -> None:
    transaction = postgres_store.transaction()
    connection = transaction.__enter__()
    connection.execute("INSERT INTO options (name, value) VALUES ('lost', '1')")
    _kill_raw(connection)
    with pytest.raises(StoreUnavailable):
        connection.execute("INSERT INTO options (name, value) VALUES ('lost2', '1')")
    with pytest.raises(StoreUnavailable, match="lost during a transaction"):
        connection.execute("SELECT 1")  # never on another connection, outside it
    connection.execute("ROLLBACK")  # what the transaction's end does: nothing to undo
    transaction.__exit__(None, None, None)
    # Nothing of it was kept, and the next transaction runs on a fresh connection.
    with postgres_store.transaction() as connection:
        connection.execute("INSERT INTO options (name, value) VALUES ('kept', '1')")
    found = postgres_store.connection().execute("SELECT name FROM options ORDER BY name")
    assert [row[0] for row in found.fetchall()] == ["kept"]


def _kill_raw(connection: object) -> None:
    assert isinstance(connection, PostgresConnection)
    pid = connection.raw.info.backend_pid
    with psycopg.connect(connection.raw.info.dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    time.sleep(0.2)


def test_a_database_that_does_not_answer_fails_fast(tmp_path: Path) -> None:
    # A port nobody listens on: connection refused at once.
    with socket_port() as port:
        store = SiteStore(url=f"postgresql://postgres@127.0.0.1:{port}/none", limits=LIMITS)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable):
        store.connection()
    assert time.monotonic() - started < LIMITS.connect_seconds + 1
    started = time.monotonic()
    for _ in range(20):  # once found down, at once (a thread of its own tries it)
        with pytest.raises(StoreUnavailable, match="a moment ago"):
            store.connection()
    assert time.monotonic() - started < 0.5
    store.close()


class socket_port:
    """A free port, released when the block starts (nobody listens on it)."""

    def __enter__(self) -> int:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return int(probe.getsockname()[1])

    def __exit__(self, *exc_info: object) -> None:
        return None


def test_an_application_boots_without_its_database(tmp_path: Path) -> None:
    with socket_port() as port:
        url = f"postgresql://postgres@127.0.0.1:{port}/none"
    # A node that served before keeps a copy of the shared key in its data directory.
    keep_copy(tmp_path / SHARED_KEY_COPY, "ab" * 64)
    auth = AuthService(tmp_path, hasher=PasswordHasher(n=1024), database_url=url, limits=LIMITS)
    assert auth.key == bytes.fromhex("ab" * 64)
    with pytest.raises(StoreUnavailable):
        auth.users.count()
    auth.store.close()
    # A command does not start without it: one error, at once.
    with pytest.raises(StoreUnavailable):
        AuthService(
            tmp_path,
            hasher=PasswordHasher(n=1024),
            database_url=url,
            limits=LIMITS,
            start_without_store=False,
        )


def test_a_node_without_a_copy_of_the_shared_key_cannot_start(tmp_path: Path) -> None:
    with socket_port() as port:
        url = f"postgresql://postgres@127.0.0.1:{port}/none"
    with pytest.raises(StoreUnavailable):
        AuthService(tmp_path, hasher=PasswordHasher(n=1024), database_url=url, limits=LIMITS)


def test_the_shared_key_is_copied_to_the_node(postgres_store: SiteStore, tmp_path: Path) -> None:
    assert postgres_store.url is not None
    auth = AuthService(tmp_path, hasher=PasswordHasher(n=1024), database_url=postgres_store.url)
    try:
        assert read_copy(tmp_path / SHARED_KEY_COPY) == auth.key.hex()
        assert (tmp_path / SHARED_KEY_COPY).stat().st_mode & 0o777 == 0o600
        assert not (tmp_path / "secret.key").exists()  # the node's own key file: none
    finally:
        auth.store.close()


def test_local_copies_are_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "node" / "value"
    assert read_copy(path) is None
    keep_copy(path, "first")
    keep_copy(path, "second")
    assert read_copy(path) == "second"
    assert [entry.name for entry in path.parent.iterdir()] == ["value"]


def test_connections_of_many_threads_all_recover(postgres_store: SiteStore) -> None:
    """After every connection died (a restart), each thread's next read succeeds."""
    errors: list[BaseException] = []

    def read() -> None:
        try:
            postgres_store.connection().execute("SELECT 1").fetchone()
        except BaseException as exc:  # collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    with psycopg.connect(postgres_store.url or "", autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = %s AND pid <> pg_backend_pid()",
            (VICTIM,),
        )
    time.sleep(0.2)
    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
