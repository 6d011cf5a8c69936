"""The site database and the secret key in the data directory.

The key is generated once (64 random bytes, hex), kept in ``secret.key`` with mode 0600, written
atomically (no half-written or temporary file left behind) and shared by every service started
on the same directory; when two workers race to create it, both end up with the same key.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from sitecache.auth import AuthService, PasswordHasher
from sitecache.auth.keys import load_or_create_secret_key
from sitecache.auth.store import MIGRATIONS, SiteStore
from sitecache.sqlite_wal import enable_wal


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ---------------------------------------------------------------------- the store
def test_a_new_store_applies_every_migration(tmp_path: Path) -> None:
    store = SiteStore(tmp_path / "data" / "site.db")
    assert store.migrate() == MIGRATIONS[-1][0]
    tables = {
        row[0]
        for row in store.connection().execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    assert {"users", "sessions", "app_passwords", "login_throttle", "options"} <= tables


class _LockedAtFirst:
    """A connection whose journal-mode switch answers "database is locked" ``times`` times, as
    SQLite does at once (no busy wait) when sibling workers open a new database together."""

    def __init__(self, times: int) -> None:
        self.times = times
        self.mode = "delete"

    def execute(self, sql: str) -> _LockedAtFirst:
        if sql == "PRAGMA journal_mode = WAL":
            if self.times:
                self.times -= 1
                raise sqlite3.OperationalError("database is locked")
            self.mode = "wal"
        return self

    def fetchone(self) -> tuple[str]:
        return (self.mode,)


def test_opening_a_store_waits_out_a_sibling_switching_to_wal() -> None:
    connection = _LockedAtFirst(times=3)
    enable_wal(connection)  # type: ignore[arg-type]
    assert connection.mode == "wal"


def test_a_store_locked_for_good_says_so() -> None:
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        enable_wal(_LockedAtFirst(times=10**9), wait=0.05)  # type: ignore[arg-type]


def test_workers_opening_a_new_store_together_all_boot(tmp_path: Path) -> None:
    # Real processes, as gunicorn's workers: each round, four open one new database at once.
    context = multiprocessing.get_context("fork")
    for round_number in range(10):
        path = tmp_path / f"site-{round_number}.db"
        start = context.Event()
        workers = [
            context.Process(target=_open_store_when_told, args=(path, start)) for _ in range(4)
        ]
        for worker in workers:
            worker.start()
        start.set()
        for worker in workers:
            worker.join(30)
        assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]


def _open_store_when_told(path: Path, start: Any) -> None:
    start.wait()
    SiteStore(path).connection()


def test_migrating_twice_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "site.db"
    SiteStore(path).migrate()
    again = SiteStore(path)
    assert again.migrate() == MIGRATIONS[-1][0]
    version = again.connection().execute("PRAGMA user_version").fetchone()[0]
    assert version == MIGRATIONS[-1][0]


def test_the_database_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    store = SiteStore(tmp_path / "data" / "site.db")
    store.migrate()
    assert mode_of(tmp_path / "data" / "site.db") & 0o077 == 0
    assert mode_of(tmp_path / "data") & 0o077 == 0


def test_a_failed_transaction_is_rolled_back(tmp_path: Path) -> None:
    store = SiteStore(tmp_path / "site.db")

    class Boom(Exception):
        pass

    def write_then_fail() -> None:
        with store.transaction() as db:
            db.execute("INSERT INTO options (name, value) VALUES ('a', 'b')")
            raise Boom

    with pytest.raises(Boom):
        write_then_fail()
    assert store.connection().execute("SELECT COUNT(*) FROM options").fetchone()[0] == 0


# ---------------------------------------------------------------------- the secret key
def test_the_secret_key_is_generated_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "data" / "secret.key"
    key = load_or_create_secret_key(path)
    assert len(key) == 64
    assert mode_of(path) == 0o600
    assert bytes.fromhex(path.read_text().strip()) == key


def test_the_secret_key_is_kept_across_loads(tmp_path: Path) -> None:
    path = tmp_path / "secret.key"
    assert load_or_create_secret_key(path) == load_or_create_secret_key(path)


def test_two_sites_get_different_keys(tmp_path: Path) -> None:
    first = load_or_create_secret_key(tmp_path / "a" / "secret.key")
    second = load_or_create_secret_key(tmp_path / "b" / "secret.key")
    assert first != second


def test_writing_the_key_leaves_no_temporary_file(tmp_path: Path) -> None:
    load_or_create_secret_key(tmp_path / "secret.key")
    assert sorted(os.listdir(tmp_path)) == ["secret.key"]


def test_a_key_written_by_a_concurrent_worker_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "secret.key"
    theirs = "ab" * 64
    real_link = os.link

    def link_after_another_worker(source: str, destination: Path) -> None:
        Path(destination).write_text(theirs + "\n")
        real_link(source, destination)

    monkeypatch.setattr("sitecache.auth.keys.os.link", link_after_another_worker)
    assert load_or_create_secret_key(path) == bytes.fromhex(theirs)
    assert path.read_text().strip() == theirs
    assert sorted(os.listdir(tmp_path)) == ["secret.key"]


def test_a_truncated_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret.key"
    path.write_text("abcd\n")
    with pytest.raises(ValueError, match="too short"):
        load_or_create_secret_key(path)


def test_an_auth_service_creates_the_database_and_key_in_its_data_directory(
    tmp_path: Path,
) -> None:
    data = tmp_path / "var"
    service = AuthService(data, hasher=PasswordHasher(n=1024))
    assert (data / "site.db").is_file()
    assert mode_of(data / "secret.key") == 0o600
    again = AuthService(data, hasher=PasswordHasher(n=1024))
    assert again.key == service.key


def test_the_key_is_not_stored_in_the_database(tmp_path: Path) -> None:
    data = tmp_path / "var"
    service = AuthService(data, hasher=PasswordHasher(n=1024))
    service.users.create("ada", "correct horse battery", "administrator")
    service.store.close()
    raw = (data / "site.db").read_bytes()
    assert service.key.hex().encode() not in raw
    assert service.key not in raw
    with sqlite3.connect(data / "site.db") as connection:
        values = connection.execute("SELECT value FROM options").fetchall()
    assert all(service.key.hex() not in str(value) for value in values)
