"""Every SQLite connection one process's threads opened to a database, so that closing the
storage closes them all, whichever thread opened them.

SQLite connections are kept one per thread (`sitecache.cache.storage.disk_connections`).
Closing only the calling thread's left every other thread's open: its file descriptors, its WAL
read marks. `OpenedConnections` records each connection with its process and thread;
`close_all` closes this process's and moves to a new epoch, so a thread that uses the storage
afterwards opens a fresh connection. A connection whose thread has ended is closed the next time
one is added. Connections are opened with ``check_same_thread=False`` so another thread may
close them; each is still used by its own thread only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from dataclasses import dataclass

__all__ = ["OpenedConnections"]


@dataclass(frozen=True, slots=True)
class _Opened:
    pid: int
    thread: weakref.ref[threading.Thread]
    connection: sqlite3.Connection

    def orphaned(self, pid: int) -> bool:
        """Opened by this process on a thread that has ended."""
        thread = self.thread()
        return self.pid == pid and (thread is None or not thread.is_alive())


class OpenedConnections:
    """The connections this process's threads opened to one database (see the module
    docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._opened: list[_Opened] = []
        self.epoch = 0
        """Moves on at each `close_all`: a connection kept from an earlier epoch is closed."""

    def add(self, connection: sqlite3.Connection) -> int:
        """Record ``connection``, just opened by the calling thread; the epoch it belongs to.
        The connections of this process's ended threads are closed."""
        pid = os.getpid()
        with self._lock:
            ended = [item for item in self._opened if item.orphaned(pid)]
            self._opened = [item for item in self._opened if item not in ended]
            self._opened.append(_Opened(pid, weakref.ref(threading.current_thread()), connection))
            epoch = self.epoch
        for item in ended:
            with contextlib.suppress(sqlite3.Error):
                item.connection.close()
        return epoch

    def discard(self, connection: sqlite3.Connection) -> None:
        """Forget ``connection`` (its thread closes it)."""
        with self._lock:
            self._opened = [item for item in self._opened if item.connection is not connection]

    def close_all(self) -> None:
        """Close every connection this process opened, on any thread (another process's, got
        by forking, are left to it), and start a new epoch."""
        pid = os.getpid()
        with self._lock:
            mine = [item for item in self._opened if item.pid == pid]
            self._opened = [item for item in self._opened if item.pid != pid]
            self.epoch += 1
        for item in mine:
            with contextlib.suppress(sqlite3.Error):
                item.connection.close()
