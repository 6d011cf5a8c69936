"""`DiskStorage.close` closes every thread's SQLite connections, not only the caller's (#34),
and the storage opens fresh ones when it is used again."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from sitecache.cache.storage.disk import DiskStorage


def open_index_files(root: Path) -> int:
    """How many file descriptors of this process point into the index's files."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith(str(root / "index.sqlite3")):
            count += 1
    return count


def test_close_closes_the_connections_every_thread_opened(tmp_path: Path) -> None:
    storage = DiskStorage(tmp_path)
    storage.close()  # the constructor's own connection
    assert open_index_files(tmp_path) == 0
    used = threading.Barrier(4)
    done = threading.Event()

    def worker() -> None:
        storage.get("some-key")
        used.wait()
        done.wait(10)  # alive while the main thread closes the storage

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    used.wait(10)
    assert open_index_files(tmp_path) >= 3
    storage.close()
    assert open_index_files(tmp_path) == 0
    done.set()
    for thread in threads:
        thread.join(10)


def test_a_thread_uses_the_storage_again_after_close(tmp_path: Path) -> None:
    storage = DiskStorage(tmp_path)
    storage.get("some-key")
    storage.close()
    assert storage.get("some-key") is None  # a fresh connection, no "closed database" error
    storage.close()
    assert open_index_files(tmp_path) == 0


def test_the_connections_of_ended_threads_do_not_pile_up(tmp_path: Path) -> None:
    storage = DiskStorage(tmp_path)
    storage.close()
    for _ in range(12):  # threads come and go (a preload's, a timer's)
        thread = threading.Thread(target=storage.get, args=("some-key",))
        thread.start()
        thread.join(10)
    assert open_index_files(tmp_path) <= 6  # at most one ended thread's, plus shared files
    storage.close()
    assert open_index_files(tmp_path) == 0
