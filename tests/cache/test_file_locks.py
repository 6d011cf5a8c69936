"""The disk backend's locks of misses being rendered: bytes of one file, per open file (#18)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sitecache.cache import DiskStorage
from sitecache.cache.storage.file_locks import ELSEWHERE, FileLocks

pytestmark = pytest.mark.skipif(not FileLocks.available(), reason="no OFD locks here")


def test_a_lock_held_by_one_open_file_is_refused_to_another_until_released(
    tmp_path: Path,
) -> None:
    this, other = FileLocks(tmp_path / "fill.lock"), FileLocks(tmp_path / "fill.lock")
    try:
        assert this.acquire_lock("fill:a", "me", 30)
        assert not other.acquire_lock("fill:a", "you", 30)
        assert other.lock_owner("fill:a") == ELSEWHERE
        assert this.lock_owner("fill:a") == "me"
        assert other.acquire_lock("fill:b", "you", 30)  # another name, another byte
        this.release_lock("fill:a", "someone else")  # not the owner: nothing happens
        assert other.lock_owner("fill:a") == ELSEWHERE
        this.release_lock("fill:a", "me")
        assert other.lock_owner("fill:a") is None
        assert other.acquire_lock("fill:a", "you", 30)
    finally:
        this.close()
        other.close()


def test_one_open_file_refuses_a_name_another_of_its_owners_holds(tmp_path: Path) -> None:
    locks = FileLocks(tmp_path / "fill.lock")
    try:
        assert locks.acquire_lock("fill:a", "thread-1", 30)
        assert not locks.acquire_lock("fill:a", "thread-2", 30)
        assert locks.acquire_lock("fill:a", "thread-1", 30)  # its owner again: still held
        locks.release_lock("fill:a", "thread-1")
        assert locks.acquire_lock("fill:a", "thread-2", 30)
    finally:
        locks.close()


def test_a_lock_goes_with_the_process_that_held_it(tmp_path: Path) -> None:
    path = tmp_path / "fill.lock"
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from sitecache.cache.storage.file_locks import FileLocks
        locks = FileLocks(Path({str(path)!r}))
        assert locks.acquire_lock("fill:a", "child", 30)
        print("held", flush=True)
        sys.stdin.readline()
        """
    )
    locks = FileLocks(path)
    with subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "held"
            assert locks.lock_owner("fill:a") == ELSEWHERE
            assert not locks.acquire_lock("fill:a", "me", 30)
        finally:
            child.kill()  # never released: the kernel frees it with the process
            child.wait(10)
    try:
        assert locks.lock_owner("fill:a") is None
        assert locks.acquire_lock("fill:a", "me", 30)
    finally:
        locks.close()


def test_a_forked_child_holds_none_of_its_parents_locks(tmp_path: Path) -> None:
    locks = FileLocks(tmp_path / "fill.lock")
    try:
        assert locks.acquire_lock("fill:a", "parent", 30)
        pid = os.fork()
        if pid == 0:  # the child: the same object, its own open file
            seen = (
                locks.lock_owner("fill:a") == ELSEWHERE
                and not locks.acquire_lock("fill:a", "child", 30)
                and locks.acquire_lock("fill:b", "child", 30)
            )
            locks.release_lock("fill:a", "parent")  # not the child's: the parent keeps it
            os._exit(0 if seen else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert locks.lock_owner("fill:a") == "parent"
        assert locks.lock_owner("fill:b") is None  # the child's went with it
        other = FileLocks(tmp_path / "fill.lock")
        assert other.lock_owner("fill:a") == ELSEWHERE
        other.close()
    finally:
        locks.close()


def test_a_miss_on_disk_writes_no_lock_row(tmp_path: Path) -> None:
    storage, other_process = DiskStorage(tmp_path), DiskStorage(tmp_path)
    try:
        fill_locks = storage.fill_locks()
        assert isinstance(fill_locks, FileLocks)
        assert fill_locks.acquire_lock("fill:k", "me", 30)
        assert storage.lock_owner("fill:k") is None  # not a row of the index
        assert other_process.fill_locks().lock_owner("fill:k") == ELSEWHERE
    finally:
        storage.close()
        other_process.close()
