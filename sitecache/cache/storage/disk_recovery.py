"""When the disk backend's index cannot be used: what kind of failure it is, and moving a
damaged index aside so that the cache starts empty (a cache is disposable: nginx and Varnish
start with an empty one rather than not at all).

`failure_kind` sorts SQLite's and the file system's errors: a *damaged* or foreign file
(``SQLITE_CORRUPT``, ``SQLITE_NOTADB``, an unreadable page, tables that are not ours), a *full*
disk (``SQLITE_FULL``, ``ENOSPC``), or a store that cannot be *written* (read-only, no
permission); anything else (a lock held too long, say) is an ordinary failure.

A damaged index is moved aside by `quarantine`, once, whichever process or thread found it:
under the exclusive `RecoveryLock`, and only while ``index.sqlite3`` is still the file (inode)
the finder had open. Every process opens its connections under the shared lock, so none opens
the index while its files are being renamed. The ``-wal`` and ``-shm`` files go first (a new
index must never pick up the old one's log), then the index itself, each as
``index.sqlite3.corrupt-<UTC time>`` (``-wal``, ``-shm`` after it). Processes still connected to
the old files see the index's inode change before their next transaction and reopen; SQLite
neither checkpoints nor deletes a log whose database was renamed, so closing those connections
touches nothing of the new index. Only the newest quarantined copy is kept: each holds as much
disk as the cache did.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from sitecache.cache.storage.records import UnusableKind

__all__ = [
    "QUARANTINE_MARK",
    "RecoveryLock",
    "failure_kind",
    "quarantine",
    "quarantined_copies",
]

#: What a quarantined index's name adds to the index's own (then the UTC time).
QUARANTINE_MARK: Final = ".corrupt-"
#: The files of one SQLite database in WAL mode, the log and shared memory first.
_SUFFIXES: Final = ("-wal", "-shm", "")

#: SQLite's primary result codes of a file that is not, or no longer, a database.
_DAMAGED_CODES: Final = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
#: Extended result codes of a page that could not be read (a bad sector, a truncated file).
_UNREADABLE_CODES: Final = frozenset({sqlite3.SQLITE_IOERR_READ, sqlite3.SQLITE_IOERR_SHORT_READ})
#: Primary result codes of a store that cannot be written or opened for writing.
_UNWRITABLE_CODES: Final = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM}
)
#: What SQLite says of a database whose tables are not the ones it was asked about: a file of
#: something else under the index's name (a foreign store).
_FOREIGN_MESSAGES: Final = ("no such table", "no such column", "has no column named")
#: ``errno`` values of a full disk, and of a file system or directory that refuses writes.
_FULL_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT})
_UNWRITABLE_ERRNOS: Final = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def failure_kind(error: BaseException) -> UnusableKind | None:
    """What ``error`` (raised by SQLite or the file system) says of the store: ``"damaged"``
    (corrupt, not a database, an unreadable page, another program's tables), ``"full"``,
    ``"unwritable"``, or ``None`` for an ordinary failure (busy, locked, anything else)."""
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        if isinstance(code, int):
            if code in _UNREADABLE_CODES or code & 0xFF in _DAMAGED_CODES:
                return "damaged"
            if code & 0xFF == sqlite3.SQLITE_FULL:
                return "full"
            if code & 0xFF in _UNWRITABLE_CODES:
                return "unwritable"
        text = str(error)
        if isinstance(error, sqlite3.OperationalError) and any(
            message in text for message in _FOREIGN_MESSAGES
        ):
            return "damaged"
        return None
    if isinstance(error, OSError):
        if error.errno in _FULL_ERRNOS:
            return "full"
        if error.errno in _UNWRITABLE_ERRNOS:
            return "unwritable"
    return None


class RecoveryLock:
    """A ``flock`` on one file beside the index: shared while a process opens a connection,
    exclusive while the index is moved aside.

    Args:
        path: the lock file (created 0600 when missing; never written).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def held(self, *, exclusive: bool, timeout: float) -> Iterator[bool]:
        """Hold the lock for the ``with`` block, waiting at most ``timeout`` seconds; yields
        whether it is held: ``False`` when the lock file cannot be opened (a read-only
        directory, where nobody can rename anything either).

        Raises:
            TimeoutError: another process held it for ``timeout`` seconds.
        """
        try:
            descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            try:  # a read-only file system: an existing lock file still locks
                descriptor = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                yield False
                return
        try:
            _flock(descriptor, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH, timeout)
            yield True
        finally:
            os.close(descriptor)  # frees the lock


def _flock(descriptor: int, kind: int, timeout: float) -> None:
    """Take ``kind`` on ``descriptor`` within ``timeout`` seconds.

    Raises:
        TimeoutError: it was not free in time.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(descriptor, kind | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"the lock was held for {timeout:g} s") from None
            time.sleep(0.005)


def quarantined_copies(index: Path) -> list[Path]:
    """The quarantined copies of ``index`` (the databases, not their ``-wal``/``-shm``),
    oldest first."""
    try:
        names = os.listdir(index.parent)
    except OSError:
        return []
    prefix = index.name + QUARANTINE_MARK
    found = [
        name
        for name in names
        if name.startswith(prefix) and not name.endswith(("-wal", "-shm", "-journal"))
    ]
    return [index.parent / name for name in sorted(found)]


def quarantine(index: Path, expected: int | None, now: float | None = None) -> Path | None:
    """Move ``index`` and its ``-wal``/``-shm`` aside as ``<index>.corrupt-<UTC time>`` while
    ``index`` is still the file whose inode is ``expected`` (``None``: whatever file is
    there), after removing the copies an earlier call left; the copy's path, or ``None`` when
    there was nothing to move (another process moved it first). The caller holds the
    exclusive `RecoveryLock`.

    Raises:
        OSError: a file could not be renamed (a read-only or unwritable directory).
    """
    try:
        current: int | None = os.stat(index).st_ino
    except FileNotFoundError:
        current = None
    if current is None or (expected is not None and current != expected):
        return None
    for old in quarantined_copies(index):
        for suffix in _SUFFIXES:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{old}{suffix}")
    stamp = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    target = index.with_name(f"{index.name}{QUARANTINE_MARK}{stamp:%Y%m%dT%H%M%S.%fZ}")
    for suffix in _SUFFIXES:
        with contextlib.suppress(FileNotFoundError):
            os.rename(f"{index}{suffix}", f"{target}{suffix}")
    return target
