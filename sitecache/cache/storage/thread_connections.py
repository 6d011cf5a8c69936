"""Each thread's SQLite connections to one database, and every connection opened, so that
closing the storage closes them all, whichever thread opened them.

SQLite connections are kept one per thread (and per role: the disk cache has a patient one and
a quick one). Closing only the calling thread's left every other thread's open: its file
descriptors, its WAL read marks. `ThreadConnections` records each connection it opens with its
process and thread; `close_all` closes this process's, and a thread that uses the storage
afterwards opens a fresh one. A connection whose thread has ended is closed the next time a
connection is opened. Connections are opened with ``check_same_thread=False`` so another thread
may close them; each is still used by its own thread only.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ThreadConnections"]


@dataclass(frozen=True, slots=True)
class _Opened:
    pid: int
    thread: weakref.ref[threading.Thread]
    connection: sqlite3.Connection

    def orphaned(self, pid: int) -> bool:
        """Opened by this process on a thread that has ended."""
        thread = self.thread()
        return self.pid == pid and (thread is None or not thread.is_alive())


class ThreadConnections:
    """The connections of one database, one per thread and role.

    Args:
        open_connection: opens a connection for a role (``sqlite3.connect(...,
            check_same_thread=False)`` with its pragmas).
    """

    def __init__(self, open_connection: Callable[[str], sqlite3.Connection]) -> None:
        self._open = open_connection
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opened: list[_Opened] = []
        self._epoch = 0

    def get(self, role: str) -> sqlite3.Connection:
        """This thread's connection for ``role``, opened on first use (again in a forked child,
        and after `close_all`).

        Raises:
            sqlite3.Error, OSError: the connection cannot be opened.
        """
        pid = os.getpid()
        kept: tuple[int, int, sqlite3.Connection] | None = getattr(self._local, role, None)
        if kept is not None and kept[0] == pid and kept[1] == self._epoch:
            return kept[2]
        connection = self._open(role)
        with self._lock:
            ended = [item for item in self._opened if item.orphaned(pid)]
            self._opened = [item for item in self._opened if item not in ended]
            self._opened.append(_Opened(pid, weakref.ref(threading.current_thread()), connection))
            epoch = self._epoch
        for item in ended:
            item.connection.close()
        setattr(self._local, role, (pid, epoch, connection))
        return connection

    def close_all(self) -> None:
        """Close every connection this process opened, on any thread (another process's, got
        by forking, are left to it). A thread that uses the database afterwards opens anew."""
        pid = os.getpid()
        with self._lock:
            mine = [item for item in self._opened if item.pid == pid]
            self._opened = [item for item in self._opened if item.pid != pid]
            self._epoch += 1
        for item in mine:
            item.connection.close()
