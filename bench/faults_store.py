"""The site store's fault scenarios under load (#29), for ``bench/faults_bench.py``.

Each scenario deploys a site (``sitecache init`` and ``sitecache serve``: gunicorn, two threaded
workers) on services of its own (`tests.faults.services`: a PostgreSQL from ``initdb``, a
``redis-server``, a tmpfs), sends traffic from several threads (cached and uncached pages, REST
reads, creations, edits, comments, health checks: `tests.faults.load`) and breaks a service;
it returns the runner's figures: ``requests``, ``status_counts``, ``p50_ms``, ``p99_ms``,
``max_ms``, ``lost`` (what was acknowledged 2xx and is not stored, or settings changed),
``stale`` (``None``: not measured here), ``recovery_s`` (the longest time from a service's
return to the first success of a request that needs it) and ``notes``.

``SITECACHE_FAULTS_QUICK=1`` (``faults_bench.py --quick``) shortens every outage.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import redis

from tests.faults.load import Load, Operation
from tests.faults.services import (
    OwnPostgres,
    OwnRedis,
    ServiceRefused,
    TmpfsMount,
    private_directory,
)
from tests.faults.site import FaultSite, PostEdits

__all__ = ["SCENARIOS"]

Figures = dict[str, object]


def _quick() -> bool:
    return os.environ.get("SITECACHE_FAULTS_QUICK") == "1"


def _seconds(full: float, quick: float) -> float:
    return quick if _quick() else full


@contextlib.contextmanager
def _postgres() -> Iterator[OwnPostgres]:
    directory = private_directory("sitecache-bench-pg-")
    try:
        server = OwnPostgres(directory)
        server.init()
        try:
            yield server
        finally:
            server.stop("immediate")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def _site(root: Path, lines: list[str], *, demo: bool = True) -> Iterator[FaultSite]:
    site = FaultSite(root / "site", lines)
    site.init(demo=demo)
    site.serve()
    try:
        site.warm()
        yield site
    finally:
        site.stop()


Traffic = dict[str, tuple[Operation, int]]


def _traffic(site: FaultSite, edits: list[PostEdits], post_id: int) -> Traffic:
    operations: Traffic = {
        "page-cached": (site.read_cached, 3),
        "page-uncached": (site.read_uncached, 1),
        "rest-read": (site.read_rest, 2),
        "create": (site.create, 1),
        "comment": (functools.partial(site.comment, post_id), 1),
        "healthz": (functools.partial(site.get, "/healthz", "healthz"), 1),
    }
    for index, edit in enumerate(edits):
        operations[f"edit-{index}"] = (functools.partial(site.editor, edit), 1)
    return operations


def _figures(load: Load, lost: int, backs: list[float], notes: str) -> Figures:
    recoveries = [load.first_success_after(back, {"rest-read", "create"}) for back in backs]
    figures: Figures = dict(load.summary())
    problems = load.problems()
    figures.update(
        lost=lost,
        stale=None,
        recovery_s=(
            None
            if not backs or None in recoveries
            else round(max(r for r in recoveries if r is not None), 2)
        ),
        notes=notes + (f"; {len(problems)} improper answers: {problems[0]}" if problems else ""),
    )
    return figures


def _longest(recoveries: list[float | None]) -> float | None:
    """The longest recovery; ``None`` when one never happened."""
    if any(value is None for value in recoveries):
        return None
    return round(max(value for value in recoveries if value is not None), 2)


def _writers(site: FaultSite) -> tuple[list[PostEdits], int]:
    return [PostEdits(site.new_post(f"edited-{index}")) for index in range(2)], site.new_post("c")


# ---------------------------------------------------------------------- PostgreSQL
def postgres_restarts(root: Path) -> Figures:
    """PostgreSQL restarted (fast) three times during reads, edits and comments."""
    with _postgres() as postgres, _site(root, [f'database_url = "{postgres.url}"']) as site:
        edits, post_id = _writers(site)
        backs = []
        with Load(_traffic(site, edits, post_id), pause=0.02) as load:
            time.sleep(2)
            for _ in range(1 if _quick() else 3):
                postgres.restart()
                backs.append(time.monotonic())
                time.sleep(4)
        lost = site.lost(edits)
        return _figures(load, len(lost), backs, f"{len(backs)} restarts")


def postgres_down(root: Path) -> Figures:
    """PostgreSQL stopped for a while (15 s; the issue's 2.5 minutes, shortened) under load."""
    outage = _seconds(15, 5)
    with _postgres() as postgres, _site(root, [f'database_url = "{postgres.url}"']) as site:
        edits, post_id = _writers(site)
        with Load(_traffic(site, edits, post_id), pause=0.02) as load:
            time.sleep(2)
            postgres.stop()
            down = time.monotonic()
            time.sleep(outage)
            postgres.start()
            back = time.monotonic()
            time.sleep(5)
        lost = site.lost(edits)
        during = load.between(down + 0.5, back)
        refused = [a.seconds for a in during if a.kind in ("rest-read", "create", "comment")]
        health = [a.seconds for a in during if a.kind == "healthz"]
        notes = (
            f"down {outage:g} s; refusals max {max(refused, default=0) * 1000:.0f} ms; "
            f"/healthz max {max(health, default=0) * 1000:.0f} ms"
        )
        return _figures(load, len(lost), [back], notes)


def postgres_down_at_start(root: Path) -> Figures:
    """The server (re)started while PostgreSQL is down: it boots, serves cached pages, 503s."""
    with _postgres() as postgres, _site(root, [f'database_url = "{postgres.url}"']) as site:
        edits, post_id = _writers(site)
        site.stop()
        postgres.stop()
        started = time.monotonic()
        site.serve()
        boot = time.monotonic() - started
        with Load(_traffic(site, edits, post_id), pause=0.02) as load:
            time.sleep(_seconds(10, 4))
            postgres.start()
            back = time.monotonic()
            time.sleep(5)
        lost = site.lost(edits)
        return _figures(load, len(lost), [back], f"booted without the database in {boot:.1f} s")


# ---------------------------------------------------------------------- Redis and the settings
CHOSEN: dict[str, Any] = {"max_age": 7777, "rejected_uris": ["/private/"], "lock_down": True}
SETTINGS = "/site-json/site-cache/v1/settings"


def redis_losses(root: Path) -> Figures:
    """Redis (no persistence) restarted, flushed and evicting under load: settings changed."""
    directory = root / "redis"
    try:
        server = OwnRedis(directory)
    except ServiceRefused as exc:
        return {"requests": 0, "notes": f"skipped: {exc}"}
    server.start()
    try:
        lines = ['cache_backend = "redis"', f'redis_url = "{server.url()}"']
        with _site(root, lines) as site:
            site.admin_json("POST", SETTINGS, CHOSEN)
            site.admin_json("POST", "/site-json/site-cache/v1/plugins", {"domain_mapping": True})
            expected = _settings(site)
            changed = 0
            read_settings = functools.partial(site.admin, "GET", SETTINGS, kind="settings")
            operations: Traffic = {
                "page-cached": (site.read_cached, 3),
                "rest-read": (site.read_rest, 2),
                "settings": (read_settings, 1),
            }
            backs = []
            with Load(operations, pause=0.02) as load:
                time.sleep(2)
                for losing in _losses(server):
                    losing()
                    backs.append(time.monotonic())
                    time.sleep(3)
                    changed += _differences(expected, _settings(site))
            for answer in load.answers:
                if answer.kind == "settings" and answer.status == 200:
                    found = json.loads(answer.body)
                    changed += int(any(found.get(key) != value for key, value in CHOSEN.items()))
            return _figures(
                load, changed, [], "restart, FLUSHDB, eviction; lost = settings changed"
            )
    finally:
        server.stop()


def _losses(server: OwnRedis) -> list[Callable[[], None]]:
    def evict() -> None:
        client = redis.Redis(port=server.port)
        client.config_set("maxmemory", "4mb")
        client.config_set("maxmemory-policy", "allkeys-lru")
        for index in range(200):
            client.set(f"filler:{index}", b"x" * 65536)
        client.config_set("maxmemory", "0")

    return [server.restart, server.flushdb, evict]


def _settings(site: FaultSite) -> dict[str, Any]:
    settings = site.admin_json("GET", SETTINGS)
    plugins = site.admin_json("GET", "/site-json/site-cache/v1/plugins")
    return {"settings": settings, "plugins": {p["key"]: p["enabled"] for p in plugins}}


def _differences(expected: dict[str, Any], found: dict[str, Any]) -> int:
    settings = sum(found["settings"].get(k) != v for k, v in expected["settings"].items())
    return int(settings) + int(found["plugins"] != expected["plugins"])


# ---------------------------------------------------------------------- SQLite
_HOLD = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
connection.execute("INSERT INTO options (name, value) VALUES ('held', '1')")
print("locked", flush=True)
sys.stdin.read()
"""


def sqlite_locked(root: Path) -> Figures:
    """SQLite's write lock held by another process (a stuck backup) for 10 s under load."""
    with _site(root, []) as site:
        edits, post_id = _writers(site)
        with Load(_traffic(site, edits, post_id), pause=0.02) as load:
            time.sleep(2)
            holder = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed script
                [sys.executable, "-c", _HOLD, str(site.data_dir / "site.db")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert holder.stdout is not None
            holder.stdout.readline()
            time.sleep(_seconds(10, 5))
            holder.communicate("")
            back = time.monotonic()
            time.sleep(4)
        lost = site.lost(edits)
        return _figures(load, len(lost), [back], "lock held; busy timeout 4 s")


def sqlite_disk_full(root: Path) -> Figures:
    """The data directory's disk (a tmpfs) full for 10 s under load (the page cache in
    memory: this row is the site store's)."""
    # The data directory alone on the tmpfs (the server's log and configuration beside it).
    disk = TmpfsMount(root / "site" / "var", "48m")
    try:
        disk.mount()
    except ServiceRefused as exc:
        return {"requests": 0, "notes": f"skipped: {exc}"}
    try:
        with _site(root, ['cache_backend = "memory"']) as site:
            edits, post_id = _writers(site)
            with Load(_traffic(site, edits, post_id), pause=0.02) as load:
                time.sleep(2)
                filler = disk.fill()
                time.sleep(_seconds(10, 5))
                filler.unlink()
                back = time.monotonic()
                time.sleep(4)
            lost = site.lost(edits)
            full = sum(1 for answer in load.answers if answer.status == 507)
            return _figures(load, len(lost), [back], f"{full} answered 507 site_storage_full")
    finally:
        disk.unmount()


SCENARIOS: list[tuple[str, Callable[[Path], Figures]]] = [
    ("postgres restarted x3", postgres_restarts),
    ("postgres down 15 s", postgres_down),
    ("postgres down at start", postgres_down_at_start),
    ("redis restart/flush/evict", redis_losses),
    ("sqlite locked 10 s", sqlite_locked),
    ("site disk full 10 s", sqlite_disk_full),
]
