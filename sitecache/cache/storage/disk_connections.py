"""The disk backend's connections to its index, and what happens when the index cannot be used.

Each thread of each process has two connections (`IndexConnections.connection`): one that waits
up to 10 s for a lock and a *quick* one that gives up after 50 ms (the request path's counters
and regeneration locks). Before lending one outside a transaction, the index file's inode is
compared with the one the connection opened (one ``stat``): a process whose index was moved
aside by another (`sitecache.cache.storage.disk_recovery`) reopens on the new one before its
next transaction, so no process reads or purges the old index once the new one exists.

A store that cannot be used is never fatal:

- *damaged* (corrupt, not a database, another program's tables), found when the index is
  opened or by any statement of any thread or process: the index is moved aside once
  (`quarantine`), the purge generation file is replaced (every process's next request sees a
  new generation: memory tiers forget, renders begun before are refused by the conditional
  put), the `on_reset` listeners are told, and the cache starts empty at the next call;
- *unwritable* (a read-only or unwritable directory, a damaged index that cannot be moved
  aside): every call fails at once with `StorageUnusable` (requests pass through uncached),
  and at most once a second one call tries again, so the store comes back by itself within a
  second of the directory becoming writable;
- *full*: a write fails (SQLite rolls it back, nothing half-written stays) and says so; reads
  go on, and writes work again as soon as there is space.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from sitecache.cache.storage.disk_recovery import (
    RecoveryLock,
    failure_kind,
    quarantine,
    quarantined_copies,
)
from sitecache.cache.storage.disk_schema import create_schema, schema_outdated
from sitecache.cache.storage.records import StorageUnusable, UnusableKind
from sitecache.cache.storage.thread_connections import OpenedConnections

__all__ = ["GENERATION_TEXT", "RETRY_INTERVAL", "WAL_CHECKPOINT_PAGES", "IndexConnections"]

#: WAL frames (pages) after which a commit checkpoints the WAL into the database.
WAL_CHECKPOINT_PAGES: Final = 4000
#: Seconds between two attempts to use a store that could not be used.
RETRY_INTERVAL: Final = 1.0
#: Seconds a process waits for the recovery lock (to open a connection, to move the index).
LOCK_WAIT: Final = 2.0
#: The content of the purge generation file (its inode and times are the generation).
GENERATION_TEXT: Final = b"sitecache purge generation\n"
#: The named value a retry writes to learn that the store takes writes again.
_CHECK_VALUE: Final = "storage_check"


class IndexConnections:
    """This process's connections to the index ``root/index.sqlite3`` (see the module
    docstring).

    Args:
        root: the disk cache's directory.
        generation: the purge generation file (replaced when the index is moved aside).
        reset: told, with the reason, when the index was moved aside (every entry is gone).
    """

    def __init__(self, root: Path, generation: Path, reset: Callable[[str], None]) -> None:
        self.root = root
        self.index = root / "index.sqlite3"
        self._index_file = str(self.index)
        self.generation = generation
        self._reset = reset
        self._lock_file = RecoveryLock(root / "recovery.lock")
        self._local = threading.local()
        self._guard = threading.Lock()
        #: every thread's connections, so `close` closes them all (not only the caller's)
        self._opened = OpenedConnections()
        #: why the store cannot be used now (``None``: it can); read before every call
        self.unusable: StorageUnusable | None = None
        self._retry_at = 0.0

    # ------------------------------------------------------------------ opening
    def start(self) -> None:
        """Create the directory, open the index (moving a damaged one aside) and make the
        generation file; when that fails the store starts unusable (never raises)."""
        with contextlib.suppress(StorageUnusable):
            self._usable_now()

    def connection(self, quick: bool = False) -> sqlite3.Connection:
        """This thread's connection (``quick``: gives up on a lock after 50 ms), reopened when
        the index file changed since it was opened.

        Raises:
            StorageUnusable: the store cannot be used now (tried again once a second).
            sqlite3.Error, OSError: the index could not be opened.
        """
        if self.unusable is not None:
            self.check_usable()
        name = "quick" if quick else "connection"
        local = self._local
        pid = os.getpid()
        connection: sqlite3.Connection | None = getattr(local, name, None)
        if (
            connection is not None
            and getattr(local, f"{name}_pid", None) == pid
            and getattr(local, f"{name}_epoch", None) == self._opened.epoch  # not closed since
        ):
            if connection.in_transaction:  # a transaction stays on its connection
                return connection
            try:
                inode: int | None = os.stat(self._index_file).st_ino
            except FileNotFoundError:
                inode = None
            if inode is not None and inode == getattr(local, f"{name}_inode", None):
                local.inode = inode
                return connection
            self._opened.discard(connection)
            with contextlib.suppress(sqlite3.Error):
                connection.close()  # the old index's: SQLite leaves its renamed files alone
            setattr(local, name, None)
        connection, inode = self._open(quick)
        setattr(local, f"{name}_epoch", self._opened.add(connection))
        setattr(local, name, connection)
        setattr(local, f"{name}_pid", pid)
        setattr(local, f"{name}_inode", inode)
        return connection

    def _open(self, quick: bool) -> tuple[sqlite3.Connection, int]:
        """A new connection and the inode of the index it opened, under the shared recovery
        lock (the index is not being moved aside meanwhile); the schema is created when
        missing (a new index). The thread's inode in use is the new one from here on.

        Raises:
            sqlite3.Error, OSError: it could not be opened (`TimeoutError`: the index was
                being moved aside for too long).
        """
        timeout = 0.05 if quick else 10.0
        with self._lock_file.held(exclusive=False, timeout=LOCK_WAIT):
            # Any thread may close it (`close`); only this thread uses it.
            connection = sqlite3.connect(
                self.index, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            try:
                inode = os.stat(self._index_file).st_ino
                self._local.inode = inode  # what a damage found from here on refers to
                with contextlib.suppress(OSError):
                    self.index.chmod(0o600)
                busy = f"PRAGMA busy_timeout={int(timeout * 1000)}"
                connection.execute(busy)
                # The schema (a write) only when missing: a new connection must not wait on
                # a writer.
                if schema_outdated(connection):
                    create_schema(connection)
                    connection.execute(busy)
                connection.execute("PRAGMA synchronous=NORMAL")
                # PERF: a stored page writes ~30 pages to the WAL, a third of them the same
                # hot pages every time (totals, index ends); a checkpoint every 4000 frames
                # instead of SQLite's 1000 copies each of those once per 130 pages stored
                # instead of once per 30, and fsyncs a quarter as often (the WAL file then
                # stays at up to ~16 MB).
                connection.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
            except BaseException:
                connection.close()
                raise
        return connection, inode

    def _usable_now(self) -> None:
        """Open this thread's connection (moving a damaged index aside and opening the new
        one), make the generation file, and write a small value: the store takes writes.

        Raises:
            StorageUnusable: it does not (`unusable` says why from now on).
        """
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            for attempt in (1, 2):
                try:
                    self._check_write(self.connection())
                    break
                except sqlite3.Error as exc:
                    if attempt == 2 or failure_kind(exc) != "damaged":
                        raise
                    try:
                        self._move_aside(exc)
                    except OSError as failed:
                        self._give_up(failed, damage=exc)
                        raise self._unusable_error() from failed
            if not self.generation.exists():
                self.generation.write_bytes(GENERATION_TEXT)
        except (OSError, sqlite3.Error) as exc:
            self._give_up(exc)
            raise self._unusable_error() from exc

    @staticmethod
    def _check_write(connection: sqlite3.Connection) -> None:
        """Write a small value (a read-only store refuses it); a full disk passes: the store
        is still read, and each write says it is full until there is space again.

        Raises:
            sqlite3.Error: the write failed otherwise.
        """
        try:
            connection.execute(
                "INSERT INTO named_values (name, value) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                (_CHECK_VALUE, str(int(time.time())).encode("ascii")),
            )
        except sqlite3.Error as exc:
            if failure_kind(exc) != "full":
                raise

    def _unusable_error(self) -> StorageUnusable:
        """A new `StorageUnusable` saying what `unusable` says."""
        unusable = self.unusable
        if unusable is None:
            return StorageUnusable("unwritable", f"the disk cache at {self.root} cannot be used")
        return StorageUnusable(unusable.kind, str(unusable))

    # ------------------------------------------------------------------ failures
    def check_usable(self) -> None:
        """Nothing when the store can be used; else, at most once a second, try again (a
        damaged index is moved aside then, an unwritable directory may be writable again).

        Raises:
            StorageUnusable: it still cannot be used.
        """
        if self.unusable is None:
            return
        if time.monotonic() < self._retry_at or not self._guard.acquire(blocking=False):
            raise self._unusable_error()
        try:
            self._retry_at = time.monotonic() + RETRY_INTERVAL
            self.unusable = None  # this thread's attempt may open connections
            self._usable_now()
        finally:
            self._guard.release()

    def recover(self, error: BaseException, what: str) -> StorageUnusable | None:
        """`StorageBase.recover` for the index: a damaged one is moved aside (the cache
        starts empty), an unwritable store is given up until a retry succeeds, a full disk
        fails this write only; the `StorageUnusable` to raise, or ``None`` (an ordinary
        failure)."""
        kind = failure_kind(error)
        if kind is None:
            return None
        if kind == "full":
            return StorageUnusable(
                "full", f"disk cache {what}: the disk of {self.root} is full ({error})"
            )
        if kind == "damaged":
            try:
                moved = self._move_aside(error)
            except (OSError, sqlite3.Error) as exc:
                self._give_up(exc, damage=error)
                return self._unusable_error()
            where = f"moved aside to {moved.name}" if moved else "moved aside by another process"
            return StorageUnusable(
                "damaged",
                f"disk cache {what}: the index {self.index} was damaged ({error}); {where}, "
                "the cache starts empty",
            )
        self._give_up(error)
        return self._unusable_error()

    def _move_aside(self, error: BaseException) -> Path | None:
        """Quarantine the index this thread had open when ``error`` was found, unless another
        thread or process did already; replace the generation file and tell the reset
        listener when this call moved it. The moved copy, or ``None``.

        Raises:
            OSError: the index could not be moved (an unwritable directory), or the recovery
                lock could not be taken in time (`TimeoutError`).
        """
        expected = getattr(self._local, "inode", None)
        self._close_thread()
        # Without a lock file (a read-only directory) the rename below fails as well.
        with self._lock_file.held(exclusive=True, timeout=LOCK_WAIT):
            moved = quarantine(self.index, expected)
            if moved is not None:
                self._replace_generation()
        if moved is not None:
            self._reset(f"the disk cache index was damaged ({error}) and moved aside to {moved}")
        return moved

    def _replace_generation(self) -> None:
        """A new generation file (a new inode): every process's next request reads a new
        generation (written aside, then renamed over: never missing)."""
        handle, temporary = tempfile.mkstemp(prefix=".generation-", dir=self.root)
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(GENERATION_TEXT)
            os.replace(temporary, self.generation)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _give_up(self, error: BaseException, *, damage: BaseException | None = None) -> None:
        """Mark the store unusable because of ``error`` (after ``damage`` was found, when
        moving it aside failed): every call fails at once until a retry succeeds."""
        self._close_thread()
        if damage is not None:
            reason = (
                f"the index {self.index} is damaged ({damage}) and cannot be moved aside ({error})"
            )
        else:
            reason = f"the disk cache at {self.root} cannot be used ({error})"
        self.unusable = StorageUnusable("damaged" if damage else self._kind(error), reason)
        self._retry_at = time.monotonic() + RETRY_INTERVAL

    @staticmethod
    def _kind(error: BaseException) -> UnusableKind:
        kind = failure_kind(error)
        return "unwritable" if kind is None else kind

    def _close_thread(self) -> None:
        """Close this thread's connections (a damaged index's, or before giving up)."""
        for name in ("connection", "quick"):
            connection: sqlite3.Connection | None = getattr(self._local, name, None)
            if connection is not None:
                self._opened.discard(connection)
                with contextlib.suppress(sqlite3.Error):
                    connection.close()
                setattr(self._local, name, None)

    # ------------------------------------------------------------------ reporting
    def warnings(self) -> list[tuple[str, str]]:
        """``cache_storage_unusable`` while the store cannot be used, and
        ``cache_storage_rebuilt`` while a quarantined copy of the index is kept."""
        found: list[tuple[str, str]] = []
        unusable = self.unusable
        if unusable is not None:
            found.append(
                (
                    "cache_storage_unusable",
                    f"{unusable} Pages are served uncached until it can be used: it is tried "
                    f"again every {RETRY_INTERVAL:g} s, and `sitecache cache flush --all` tries "
                    "at once.",
                )
            )
        copies = quarantined_copies(self.index)
        if copies:
            found.append(
                (
                    "cache_storage_rebuilt",
                    f"The disk cache index was found damaged and moved aside to {copies[-1]}; "
                    "the cache started empty. Delete that file (and its -wal and -shm) once "
                    "inspected: it takes disk space.",
                )
            )
        return found

    def close(self) -> None:
        """Close every thread's connections, not only the caller's; a thread that uses the
        index afterwards opens it again."""
        self._close_thread()
        self._opened.close_all()
