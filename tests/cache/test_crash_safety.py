"""Crash safety of the disk backend: writers and purgers killed mid-burst leave nothing torn.

The invariant is the one `sitecache.cache.storage.disk` promises, and no weaker: an entry's
index row, its tag rows and its body are written in ONE SQLite transaction, and the index's
delete trigger removes the body with the row, so a SIGKILL at any instant leaves either the
whole write or none of it. After the crashes, therefore:

- no body without its index row and no index row without its body (not even one);
- every indexed key loads whole, and its index row describes that very body (not a row of one
  write beside the body of another);
- nothing servable lives outside the database (no stray file or directory beside it);
- one purge reaches every entry, and afterwards nothing is left.

The counts the test relies on are checked too: the writers stored entries and the purger,
killed mid-run, had removed some while they wrote.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sitecache.cache import CacheEngine, DiskStorage
from sitecache.cache.entry import EntryInfo, decode_entry

REPOSITORY = Path(__file__).resolve().parents[2]

WRITER = """
import sys, time
from sitecache.cache import DiskStorage, CacheEntry
from sitecache.cache.entry import encode_entry
storage = DiskStorage(sys.argv[1])
number = 0
print("ready", flush=True)
while True:
    key = f"{number % 300:032x}"
    body = (f"<p>{number}</p>" * 2000).encode()
    entry = CacheEntry(url=f"http://example.org/{number % 300}/", host="example.org",
        path=f"/{number % 300}/", variant="", status=200, headers=(("Content-Type", "text/html"),),
        body=body, gzip_body=body[:100], created=time.time(), expires=0.0,
        tags=("t", f"n{number % 7}"))
    storage.put(key, encode_entry(entry), entry.info(key), None,
                generation=storage.generation())
    number += 1
"""

# Prints how many entries each purge removed (a few bytes a line, read after the kill).
PURGER = """
import sys, time
from sitecache.cache import CacheEngine, DiskStorage
engine = CacheEngine(DiskStorage(sys.argv[1]))
number = 0
print("ready", flush=True)
while True:
    print(engine.purge_tags([f"n{number % 7}"]).deleted, flush=True)
    number += 1
    time.sleep(0.005)
"""

#: What may lie beside the database: the index (with SQLite's WAL files), the generation and
#: the (always empty) files whose bytes are the locks of misses being rendered and the lock of
#: moving a damaged index aside.
DATABASE_FILES = {
    "index.sqlite3", "index.sqlite3-wal", "index.sqlite3-shm", "generation", "fill.lock",
    "recovery.lock",
}  # fmt: skip


def start(script: str, directory: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", script, str(directory)],
        cwd=REPOSITORY,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
    )


def wait_ready(process: subprocess.Popen[bytes]) -> None:
    assert process.stdout is not None
    assert process.stdout.readline().strip() == b"ready"


def kill(process: subprocess.Popen[bytes]) -> bytes:
    """SIGKILL ``process``; what it printed after "ready"."""
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert process.stdout is not None
    printed = process.stdout.read()
    process.stdout.close()
    return printed


def unmatched(directory: Path) -> tuple[int, int]:
    """(bodies without an index row, index rows without a body)."""
    with sqlite3.connect(directory / "index.sqlite3") as connection:
        orphans = connection.execute(
            "SELECT COUNT(*) FROM bodies WHERE id NOT IN (SELECT rowid FROM entries)"
        ).fetchone()[0]
        missing = connection.execute(
            "SELECT COUNT(*) FROM entries WHERE rowid NOT IN (SELECT id FROM bodies)"
        ).fetchone()[0]
    return int(orphans), int(missing)


def index_rows(directory: Path) -> dict[str, EntryInfo]:
    """Every index row, read from the database itself."""
    rows: list[tuple[str, str, str, str, str, int, int, int, float, float, str]]
    with sqlite3.connect(directory / "index.sqlite3") as connection:
        rows = connection.execute(
            "SELECT key, url, host, path, variant, status, size, compressed_size, created,"
            " expires, tags FROM entries"
        ).fetchall()
    return {row[0]: EntryInfo(*row[:10], tags=tuple(json.loads(row[10]))) for row in rows}


def test_writers_and_purgers_killed_mid_burst_leave_every_entry_whole_and_reachable(
    tmp_path: Path,
) -> None:
    purged = 0
    for _ in range(3):
        writers = [start(WRITER, tmp_path) for _ in range(2)]
        purger = start(PURGER, tmp_path)
        for process in (*writers, purger):
            wait_ready(process)
        time.sleep(0.4)
        purged += sum(int(line) for line in kill(purger).split())  # mid-purge
        time.sleep(0.15)
        for process in writers:
            kill(process)  # mid-write
    # The work the checks below rely on happened: entries were stored, and purged meanwhile.
    assert purged > 0, "the purger removed nothing while the writers wrote"
    rows = index_rows(tmp_path)
    assert len(rows) > 0, "the writers stored nothing"

    # Not one body without its row, not one row without its body.
    assert unmatched(tmp_path) == (0, 0)
    storage = DiskStorage(tmp_path)
    for key, row in rows.items():
        entry = decode_entry(storage.get(key))
        assert entry is not None, f"the indexed entry {key} does not load whole"
        number = int(entry.body[3 : entry.body.index(b"<", 3)])
        assert entry.body == (f"<p>{number}</p>" * 2000).encode(), "a torn body"
        assert key == f"{number % 300:032x}", "a body under another write's key"
        assert row == entry.info(key), "an index row of another write than its body"
    # Nothing servable hides outside the database.
    assert {path.name for path in tmp_path.iterdir()} <= DATABASE_FILES
    # One purge reaches every entry the killed writers stored at once, and GC leaves nothing
    # behind.
    engine = CacheEngine(storage)
    assert engine.purge_all().deleted == len(rows)
    assert all(storage.get(key) is None for key in rows)
    assert engine.pending_removal().entries == len(rows)
    while engine.remove_invalidated(0.05):
        pass
    assert index_rows(tmp_path) == {}
    assert unmatched(tmp_path) == (0, 0)
    assert not engine.pending_removal()
    storage.close()


@given(data=st.binary(max_size=300), cut=st.integers(min_value=0, max_value=400))
def test_any_truncated_or_garbled_entry_decodes_as_a_miss(data: bytes, cut: int) -> None:
    from sitecache.cache import CacheEntry
    from sitecache.cache.entry import encode_entry

    whole = encode_entry(
        CacheEntry(
            url="http://e/",
            host="e",
            path="/",
            variant="",
            status=200,
            headers=(),
            body=data or b"x",
            gzip_body=b"",
            created=1.0,
            expires=0.0,
        )
    )
    assert decode_entry(whole) is not None
    if cut < len(whole):
        assert decode_entry(whole[:cut]) is None
    assert decode_entry(data) is None or data.startswith(b"SCE1")
