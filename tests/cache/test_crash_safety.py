"""Crash safety of the disk backend: writers and purgers killed mid-burst leave nothing torn,
no body without its index row, no row without its body, and nothing a purge cannot reach."""

from __future__ import annotations

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
from sitecache.cache.entry import decode_entry

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

PURGER = """
import sys, time
from sitecache.cache import CacheEngine, DiskStorage
engine = CacheEngine(DiskStorage(sys.argv[1]))
number = 0
print("ready", flush=True)
while True:
    engine.purge_tags([f"n{number % 7}"])
    number += 1
    time.sleep(0.005)
"""


def start(script: str, directory: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(directory)],
        cwd=REPOSITORY,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == b"ready"
    return process


def kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert process.stdout is not None
    process.stdout.close()


def unmatched(directory: Path) -> tuple[int, int]:
    """(bodies without an index row, index rows without a body)."""
    with sqlite3.connect(directory / "index.sqlite3") as connection:
        orphans = connection.execute(
            "SELECT COUNT(*) FROM bodies WHERE key NOT IN (SELECT key FROM entries)"
        ).fetchone()[0]
        missing = connection.execute(
            "SELECT COUNT(*) FROM entries WHERE key NOT IN (SELECT key FROM bodies)"
        ).fetchone()[0]
    return int(orphans), int(missing)


def test_writers_and_purgers_killed_mid_burst_leave_every_entry_whole_and_reachable(
    tmp_path: Path,
) -> None:
    for _ in range(3):
        writers = [start(WRITER, tmp_path) for _ in range(2)]
        purger = start(PURGER, tmp_path)
        time.sleep(0.4)
        kill(purger)  # mid-purge
        time.sleep(0.15)
        for process in writers:
            kill(process)  # mid-write
    storage = DiskStorage(tmp_path)
    engine = CacheEngine(storage)
    keys = storage.keys_for("host", None)
    assert keys  # the writers got somewhere
    assert unmatched(tmp_path) == (0, 0)
    for key in keys:
        entry = engine.load(key)
        assert entry is not None, "an indexed entry must be whole"
        number = int(entry.body[3 : entry.body.index(b"<", 3)])
        assert entry.body == (f"<p>{number}</p>" * 2000).encode()
    # No file of any kind is left beside the database: nothing servable hides outside it.
    assert sorted(path.name for path in tmp_path.iterdir() if path.is_dir()) == []
    # One purge reaches every entry the killed writers stored.
    assert engine.purge_all().deleted == len(keys)
    assert storage.keys_for("host", None) == set()
    assert unmatched(tmp_path) == (0, 0)
    assert all(storage.get(key) is None for key in keys)
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
