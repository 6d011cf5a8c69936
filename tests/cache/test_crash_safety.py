"""Crash safety of the disk backend: a writer killed mid-burst leaves nothing served torn."""

from __future__ import annotations

import os
import signal
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
        body=body, gzip_body=body[:100], created=time.time(), expires=0.0, tags=("t",))
    storage.put(key, encode_entry(entry), entry.info(key), None)
    number += 1
"""


def test_a_writer_killed_mid_burst_leaves_no_torn_entry(tmp_path: Path) -> None:
    for _ in range(3):
        process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path)],
            cwd=REPOSITORY,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        )
        assert process.stdout is not None
        assert process.stdout.readline().strip() == b"ready"
        time.sleep(0.4)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        process.stdout.close()
    storage = DiskStorage(tmp_path)
    engine = CacheEngine(storage)
    keys = storage.keys_for_hosts(None)
    assert keys  # the writer got somewhere
    for key in keys:
        entry = engine.load(key)
        assert entry is not None, "an indexed entry must be whole"
        number = int(entry.body[3 : entry.body.index(b"<", 3)])
        assert entry.body == (f"<p>{number}</p>" * 2000).encode()
    # Files a killed writer left behind (temporary or unindexed) are never half entries.
    for path in (tmp_path / "entries").rglob("*"):
        if path.is_file() and not path.name.startswith(".tmp-"):
            assert decode_entry(path.read_bytes()) is not None
    assert storage.remove_orphans(time.time() + 1, budget=5.0) >= 0
    assert not [p for p in (tmp_path / "entries").rglob(".tmp-*")]
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
