"""What the cache's fault tests and `bench/faults_cache.py` share (#29): a tmpfs of their own
(read-only at will, full at will), a damaged SQLite file, the command line against a node, a
load of HTTP clients with the figures of the acceptance, and a watcher of static copies.

Real processes only: gunicorn through `tests.e2e.server.LiveServer` (`tests.e2e.race`'s
nodes), a tmpfs mounted with ``mount -t tmpfs`` (root; `Tmpfs` skips with a message where the
machine refuses), a redis-server of the test's own (`tests.cache.conftest.PrivateRedis`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pytest

from sitecache.cache.api.static import StaticFiles
from tests.e2e.race import VERSION, Client, RaceReport
from tests.e2e.server import REPOSITORY, LiveServer

#: The acceptance's bounds: no request over this long, recovery within this long.
SLOWEST_REQUEST: Final = 10.0
RECOVERY: Final = 5.0


# ---------------------------------------------------------------------- a tmpfs of our own
class Tmpfs:
    """A tmpfs of ``size_mb`` mounted at ``path`` (made when missing), read-only or full at
    will, unmounted by `close`.

    Raises:
        pytest.skip.Exception: the machine refuses the mount (not root, a container without
            CAP_SYS_ADMIN): the case cannot be run here.
    """

    def __init__(self, path: Path, size_mb: int) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        if shutil.which("mount") is None:
            pytest.skip("this machine has no mount command: a tmpfs cannot be mounted")
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if mounted.returncode != 0:
            pytest.skip(f"this machine refuses to mount a tmpfs ({mounted.stderr.strip()})")
        self.filler = path / ".filler"

    def _remount(self, mode: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{mode}", str(self.path)], check=True,
                       capture_output=True)  # fmt: skip

    def read_only(self) -> None:
        """Make it read-only (nothing may be open for writing on it: EBUSY otherwise)."""
        self._remount("ro")

    def writable(self) -> None:
        self._remount("rw")

    def fill(self) -> int:
        """Write a file until the disk is full; the bytes it took."""
        written = 0
        chunk = b"\0" * (256 * 1024)
        with self.filler.open("wb") as file:
            try:
                while True:
                    file.write(chunk)
                    file.flush()
                    written += len(chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
        return written

    def free(self) -> None:
        """Give the space back."""
        self.filler.unlink(missing_ok=True)

    def close(self) -> None:
        subprocess.run(["umount", "-l", str(self.path)], check=False, capture_output=True)


# ---------------------------------------------------------------------- a damaged index
def damage_index(directory: Path) -> None:
    """Overwrite the disk cache's index with random bytes, header and pages alike, after
    moving every page out of the WAL (a page the WAL still held would hide the damage)."""
    index = directory / "index.sqlite3"
    with contextlib.closing(sqlite3.connect(index, timeout=10)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = index.stat().st_size
    with index.open("r+b") as file:
        file.write(os.urandom(size))


def quarantined(directory: Path) -> list[str]:
    """The quarantined copies of the index (databases, not their -wal/-shm)."""
    return sorted(
        path.name
        for path in directory.glob("index.sqlite3.corrupt-*")
        if not path.name.endswith(("-wal", "-shm"))
    )


# ---------------------------------------------------------------------- the command line
def run_cli(node: LiveServer, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``sitecache <arguments>`` on the node's configuration and data directory (its exit
    status is the caller's to judge)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
    config = node.data_dir.parent / f"sitecache-{node.name}.toml"
    environment["SITECACHE_CONFIG"] = str(config)
    return subprocess.run(
        [sys.executable, "-m", "sitecache.cli", "--data-dir", str(node.data_dir), *arguments],
        env=environment,
        capture_output=True,
        text=True,
        cwd=REPOSITORY,
        check=False,
        timeout=60,
    )


def admin_json(
    node: LiveServer, auth: dict[str, str], host: str, method: str, path: str, body: Any = None
) -> tuple[int, Any]:
    """One REST call as the administrator: status and decoded body."""
    client = Client(node.port, host)
    try:
        data = json.dumps(body).encode() if body is not None else None
        headers = {**auth, "Content-Type": "application/json"}
        status, _, raw = client.request(method, path, data, headers)
    finally:
        client.close()
    return status, json.loads(raw) if raw else None


def healthz(node: LiveServer, host: str) -> tuple[int, dict[str, Any], float]:
    """``GET /healthz``: status, body, seconds it took."""
    client = Client(node.port, host, timeout=15)
    started = time.monotonic()
    try:
        status, _, raw = client.request("GET", "/healthz")
    finally:
        client.close()
    return status, json.loads(raw), time.monotonic() - started


# ---------------------------------------------------------------------- load and figures
@dataclass
class Sample:
    """One request of a `Load`."""

    started: float
    elapsed: float
    path: str
    status: int
    cache_status: str
    json_code: str | None = None


@dataclass
class Load:
    """``clients`` threads requesting ``paths()`` in turn from ``node`` until stopped."""

    node: LiveServer
    host: str
    paths: Callable[[], Sequence[str]]
    clients: int = 4
    samples: list[Sample] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(n,), daemon=True)
                         for n in range(self.clients)]  # fmt: skip

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _run(self, number: int) -> None:
        client = Client(self.node.port, self.host, timeout=SLOWEST_REQUEST * 3)
        step = number
        while not self._stop.is_set():
            paths = self.paths()
            path = paths[step % len(paths)]
            step += 1
            started = time.monotonic()
            try:
                status, headers, body = client.request("GET", path)
            except OSError as exc:
                with self._lock:
                    self.dropped.append(f"{path}: {exc!r}")
                continue
            code = None
            if status >= 400 and headers.get("content-type", "").startswith("application/json"):
                code = json.loads(body).get("code")
            sample = Sample(started, time.monotonic() - started, path, status,
                            headers.get("cache-status", ""), code)  # fmt: skip
            with self._lock:
                self.samples.append(sample)
        client.close()

    def after(self, moment: float) -> list[Sample]:
        with self._lock:
            return [sample for sample in self.samples if sample.started >= moment]


def first_stored_after(samples: Iterable[Sample], moment: float) -> float | None:
    """Seconds from ``moment`` to the first request after it whose page was stored: the cache
    takes pages again (``None``: none was)."""
    for sample in sorted(samples, key=lambda s: s.started):
        if sample.started >= moment and sample.status == 200 and "stored" in sample.cache_status:
            return sample.started - moment
    return None


def figures(
    samples: Sequence[Sample], *, lost: int = 0, stale: int = 0, recovery: float | None,
    notes: str = "",
) -> dict[str, object]:  # fmt: skip
    """The interface of `bench/faults_cache.py`'s scenarios: counts, latency percentiles
    (milliseconds), what was lost or stale, the recovery (seconds; -1: none)."""
    times = sorted(sample.elapsed for sample in samples) or [0.0]
    counts: dict[str, int] = {}
    for sample in samples:
        counts[str(sample.status)] = counts.get(str(sample.status), 0) + 1
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return {
        "requests": len(samples),
        "status_counts": counts,
        "p50_ms": round(statistics.median(times) * 1000, 1),
        "p99_ms": round(p99 * 1000, 1),
        "max_ms": round(times[-1] * 1000, 1),
        "lost": lost,
        "stale": stale,
        "recovery_s": -1.0 if recovery is None else round(recovery, 2),
        "notes": notes,
    }


def race_samples(report: RaceReport) -> list[Sample]:
    """A race's reads as `Sample` s."""
    return [Sample(read.started, read.elapsed, read.path, read.status, read.cache_status)
            for read in report.reads_seen]  # fmt: skip


def check_figures(result: dict[str, object]) -> None:
    """The acceptance (#29): no HTTP 500, nothing over `SLOWEST_REQUEST`, recovery within
    `RECOVERY`, nothing lost or stale."""
    counts = result["status_counts"]
    assert isinstance(counts, dict)
    assert not [status for status in counts if str(status).startswith("5")], result
    assert float(str(result["max_ms"])) < SLOWEST_REQUEST * 1000, result
    assert 0 <= float(str(result["recovery_s"])) <= RECOVERY, result
    assert result["lost"] == 0, result
    assert result["stale"] == 0, result


# ---------------------------------------------------------------------- static copies
class CopyWatcher:
    """Reads the static copies of ``paths`` as nginx would, over and over, from its own
    thread: a copy read after an edit had returned that shows an older version is stale."""

    def __init__(self, static_root: Path, host: str, paths: Sequence[str]) -> None:
        self.files = [static_root / host / path.strip("/") / "index.html" for path in paths]
        self.seen: list[tuple[float, int, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CopyWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            for file in self.files:
                read_at = time.monotonic()
                try:
                    body = file.read_bytes()
                except OSError:
                    continue
                match = VERSION.search(body)
                if match:
                    self.seen.append((read_at, int(match.group(1)), str(file)))
            time.sleep(0.002)

    def stale(self, edits: Sequence[tuple[float, int]]) -> list[tuple[float, int, str]]:
        """The copies read after an edit had returned that show an older version."""
        found = []
        for read_at, version, file in self.seen:
            latest = max((v for at, v in edits if at <= read_at), default=0)
            if version < latest:
                found.append((read_at, version, file))
        return found


def pause_static_copies(app: Any) -> None:
    """A plugin (``tests.faults.cache_faults:pause_static_copies``): every static copy waits
    0.3 s after its page was stored, before its files are written, so that a purge lands in
    between (the window of #29's stale copy, widened)."""
    del app
    make_directories = StaticFiles._make_directories

    def paused(static: StaticFiles, directory: Path) -> None:
        time.sleep(0.3)
        make_directories(static, directory)

    StaticFiles._make_directories = paused  # type: ignore[method-assign,assignment]
