"""Locks of collapsed misses on one node: byte ranges of one file, held by open file description.

The disk backend's named locks are rows of its SQLite index, so taking and freeing one are two
write transactions. The lock a miss takes (``fill:<key>``, `sitecache.cache.fills`) is held only
while one request renders, and only the processes of one node share the disk cache; so it can be
a Linux open-file-description lock (``F_OFD_SETLK``) on one byte of one file instead: a system
call each way, no write to the index, and freed by the kernel the moment its process dies. The
byte is a hash of the lock's name; two names on one byte (about one chance in 2**62) only make
one request wait for another's render before rendering its own.

Such a lock belongs to the open file, not to a thread or an owner token: each `FileLocks` opens
the file for itself (again in a forked child), and refuses a name one of its own owners already
holds. It has no lifetime: ``ttl`` is ignored (a waiter waits a bounded time anyway, and the lock
goes with its process). `FileLocks.available` says whether the platform has these locks (Linux,
64-bit ``off_t``); the disk backend falls back to its index's locks elsewhere.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import struct
import threading
from pathlib import Path
from typing import Final

from sitecache.cache.storage.base import StorageError

__all__ = ["FileLocks"]

#: ``struct flock`` of 64-bit Linux: type, whence, start, length, pid (0 for OFD locks).
_FLOCK: Final = struct.Struct("hhqqi0q")
_SET: Final[int] = getattr(fcntl, "F_OFD_SETLK", -1)
_GET: Final[int] = getattr(fcntl, "F_OFD_GETLK", -1)
#: What `FileLocks.lock_owner` says of a lock another open file holds (its owner is unknown).
ELSEWHERE: Final = "another process"


def _offset(name: str) -> int:
    """The byte of ``name``'s lock (below 2**62: an offset plus one never overflows)."""
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2


class FileLocks:
    """Named locks on bytes of the file ``path`` (see the module docstring).

    Args:
        path: the lock file (created 0600 when missing; its content is never written).

    The methods are the lock primitives of a storage (a `LockStore`) and raise `StorageError`
    when the file cannot be opened or locked.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._held: dict[str, str] = {}
        self._fd = -1
        self._pid = 0

    @staticmethod
    def available() -> bool:
        """Whether this platform has open-file-description locks with a 64-bit ``off_t``."""
        return _SET >= 0 and _GET >= 0 and _FLOCK.size == 32

    def _descriptor(self) -> int:
        """This process's descriptor of the lock file, opened on first use; a forked child
        forgets its parent's locks and opens its own (called under ``_lock``)."""
        pid = os.getpid()
        if self._pid != pid:
            if self._fd >= 0:
                os.close(self._fd)  # the parent's open file: its locks stay the parent's
            self._fd = -1
            self._held.clear()
            self._pid = pid
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        return self._fd

    def _fcntl(self, command: int, kind: int, name: str) -> bytes:
        """``fcntl`` on the byte of ``name``: a lock held elsewhere raises `BlockingIOError`
        or `PermissionError` (``EAGAIN``/``EACCES``), any other failure `StorageError`."""
        request = _FLOCK.pack(kind, os.SEEK_SET, _offset(name), 1, 0)
        try:
            return fcntl.fcntl(self._fd, command, request)
        except (BlockingIOError, PermissionError):
            raise
        except OSError as exc:
            raise StorageError(f"disk cache lock file {self.path}: {exc}") from exc

    def _open(self) -> None:
        """Open the lock file for this process if needed (under ``_lock``).

        Raises:
            StorageError: it could not be opened.
        """
        try:
            self._descriptor()
        except OSError as exc:
            raise StorageError(f"disk cache lock file {self.path}: {exc}") from exc

    def acquire_lock(self, name: str, owner: str, ttl: float) -> bool:
        """Take ``name`` for ``owner``: ``False`` when another owner or process holds it.

        Raises:
            StorageError: the lock file could not be opened or locked.
        """
        del ttl  # the lock lives as long as its holder's process, or until released
        with self._lock:
            self._open()
            held = self._held.get(name)
            if held is not None:
                return held == owner
            try:
                self._fcntl(_SET, fcntl.F_WRLCK, name)
            except (BlockingIOError, PermissionError):
                return False
            self._held[name] = owner
            return True

    def lock_owner(self, name: str) -> str | None:
        """The owner of ``name`` when one of ours holds it, `ELSEWHERE` when another open
        file does, else ``None``.

        Raises:
            StorageError: the lock file could not be opened or read.
        """
        with self._lock:
            self._open()
            held = self._held.get(name)
            if held is not None:
                return held
            kind = _FLOCK.unpack(self._fcntl(_GET, fcntl.F_WRLCK, name))[0]
        return None if kind == fcntl.F_UNLCK else ELSEWHERE

    def release_lock(self, name: str, owner: str) -> None:
        """Free ``name`` if ``owner`` holds it.

        Raises:
            StorageError: the lock file could not be unlocked.
        """
        with self._lock:
            self._open()  # a forked child holds none of its parent's locks
            if self._held.get(name) != owner:
                return
            del self._held[name]
            self._fcntl(_SET, fcntl.F_UNLCK, name)

    def close(self) -> None:
        """Close the lock file (every lock of this process on it is freed)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)  # a child's copy: the parent's locks stay the parent's
            self._fd = -1
            self._pid = 0
            self._held.clear()
