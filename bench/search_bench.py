"""What the search index adds to a store (#18 point 2), on memory, disk and Redis.

The trigram index of ``GET /cache?search=`` is kept up to date by every store: on disk a
trigger queues the new row (``search_pending``), on Redis the put script queues its key
(``sq``), in memory its key joins the shelf's pending keys. This measures, in the same run, the
CPU time of a store (``Storage.put`` of a small page under a new key, as a miss does) with the
index and with it switched off on a twin store (disk: the search triggers dropped; Redis: the
put script without its search line; memory: pending keys that keep nothing), their rounds
interleaved, the best of each (CPU time of this process: on Redis the script's own time is
Redis's, so its row is the wall time); then what indexing the queued entries costs later
(GC's housekeeping, or the next search), per entry, in wall time.

Goal: the index adds a small part of a store (reported in µs, no pass/fail: the miss goal is
`bench/miss_bench.py`'s).

Run: ``python bench/search_bench.py [--puts 300 --rounds 15] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from purge_bench import REDIS_URL, redis_answers, small_entry

from sitecache.cache.entry import encode_entry
from sitecache.cache.keys import base_key
from sitecache.cache.storage.disk import DiskStorage
from sitecache.cache.storage.memory import MemoryStorage


def put_many(storage: Any, first: int, count: int, wall: bool = False) -> float:
    """Store ``count`` new small pages from number ``first`` on; CPU µs per store (this
    process's, so other processes' load on the shared machine counts less; Redis's own
    time is not in it: its stores are timed on the wall clock, ``wall``)."""
    now = time.time()
    entries = [small_entry(number, now) for number in range(first, first + count)]
    rows = [(base_key(e.url, ""), encode_entry(e), e) for e in entries]
    clock = time.perf_counter if wall else time.process_time
    start = clock()
    for key, data, entry in rows:
        storage.put(key, data, entry.info(key), 86_400)
    return (clock() - start) / count * 1e6


class _NoPending(set[str]):
    """A memory shelf's pending keys that keep nothing (the twin without the index)."""

    def add(self, key: str) -> None:
        del key


def twins(backend: str, scratch: Path) -> tuple[Any, Any, Callable[[], None]]:
    """A store with the search index and its twin without; a function closing both."""
    if backend == "memory":
        big = 1 << 40
        indexed, plain = MemoryStorage(big), MemoryStorage(big)
        plain._shelf.search_pending = _NoPending()
        return indexed, plain, lambda: None
    if backend == "disk":
        indexed, plain = DiskStorage(scratch / "indexed"), DiskStorage(scratch / "plain")
        connection = plain._connection()
        for trigger in ("insert", "delete", "update"):
            connection.execute(f"DROP TRIGGER IF EXISTS entries_search_{trigger}")
        return indexed, plain, lambda: (indexed.close(), plain.close())
    from sitecache.cache.storage.redis import RedisStorage
    from sitecache.cache.storage.redis_scripts import PUT

    run = uuid.uuid4().hex[:10]
    indexed = RedisStorage(REDIS_URL, f"bench-search-{run}-indexed")
    plain = RedisStorage(REDIS_URL, f"bench-search-{run}-plain")
    without = PUT.replace("search_put(p, key, old, row['url'])", "")
    assert without != PUT, "the put script's search line moved: update this bench"
    plain._put = plain.client.register_script(without)

    def close() -> None:
        for storage in (indexed, plain):
            storage.clear_namespace()
            storage.close()

    return indexed, plain, close


def catch_up_us(storage: Any, queued: int) -> float:
    """µs per entry to index what waits (GC's housekeeping, until nothing is left)."""
    start = time.perf_counter()
    step = getattr(storage, "_catch_up_search", None)
    shelf = getattr(storage, "_shelf", None)
    if step is not None:
        step(0, float("inf"))
    elif shelf is not None:  # memory: what its next search does first
        shelf.search_catch_up()
    else:
        while storage.housekeeping(1.0):
            pass
    return (time.perf_counter() - start) / max(queued, 1) * 1e6


def measure(backend: str, puts: int, rounds: int, scratch: Path) -> dict[str, float]:
    indexed, plain, close = twins(backend, scratch)
    best = {"indexed": float("inf"), "plain": float("inf")}
    try:
        for run in range(rounds):
            order = [("indexed", indexed), ("plain", plain)]
            if run % 2:
                order.reverse()
            for name, storage in order:
                figure = put_many(storage, run * puts, puts, wall=backend == "redis")
                best[name] = min(best[name], figure)
        best["catch-up"] = catch_up_us(indexed, puts * rounds)
    finally:
        close()
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--puts", type=int, default=300, help="stores a round")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--backend", choices=["memory", "disk", "redis"], action="append")
    options = parser.parse_args(argv)
    if options.quick:
        options.puts, options.rounds = 100, 2
    backends = options.backend or ["memory", "disk", "redis"]
    if "redis" in backends and not redis_answers():
        backends.remove("redis")
    print(f"load average before: {os.getloadavg()}")
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="sitecache-search-") as directory:
        for backend in backends:
            scratch = Path(directory) / backend
            scratch.mkdir()
            results[backend] = measure(backend, options.puts, options.rounds, scratch)
    print("\n### A store with and without the search index (best of the rounds, µs)\n")
    print("(CPU µs of this process for memory and disk, wall µs for Redis)\n")
    print("| storage | store, indexed | store, no index | added | ratio | indexing later |")
    print("|---|---:|---:|---:|---:|---:|")
    for backend, found in results.items():
        added = found["indexed"] - found["plain"]
        print(
            f"| {backend} | {found['indexed']:.1f} | {found['plain']:.1f} | {added:+.1f} | "
            f"{found['plain'] / found['indexed']:.2f}x | {found['catch-up']:.1f} per entry |"
        )
    print(f"\nload average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
