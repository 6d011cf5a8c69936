"""The cache's rows of #29 as scenarios: a fault made to a real gunicorn under load, with the
figures of the acceptance (`tests.faults.cache_faults.figures`) and what each row must show
(``checks``). The fault tests run them short (tests/faults/test_disposable_cache.py); the
benchmark runs them longer (bench/faults_cache.py).

- `corrupt_index_before_boot`: the index damaged while the server is down: the command line
  (``cache status``, ``cache flush --all``) and the workers start anyway, on an empty index;
- `corrupt_index_while_serving`: the index damaged under the race harness (readers and edits):
  found, moved aside once, every worker on the new one, nothing stale;
- `cache_directory_read_only`: a damaged index in a directory that cannot be written: pages
  served uncached (``detail=storage``), ``/healthz`` and ``/status`` say why, and the cache
  comes back by itself once the directory is writable;
- `disk_full`: the data directory's disk full: pages served, none stored, the disk reported;
  storing again once space is freed;
- `static_purge_race`: static-file mode with every copy written 0.3 s after its page was
  stored, under edits: no copy shows a page older than the last edit that returned;
- `redis_wrong_type`: a key of the Redis namespace rewritten with another type under the race:
  dropped, the cache starts empty, nothing stale.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from tests.e2e.race import HOST, RaceReport, admin_auth, run_race, setup_site, start_nodes
from tests.e2e.server import LiveServer
from tests.faults.cache_faults import (
    RECOVERY,
    CopyWatcher,
    Load,
    Sample,
    Tmpfs,
    admin_json,
    damage_index,
    figures,
    first_stored_after,
    healthz,
    quarantined,
    race_samples,
    run_cli,
)

Scenario = Callable[[Path], dict[str, object]]
STATUS: Final = "/site-json/site-cache/v1/status"


def _warm(node: LiveServer, paths: list[str]) -> None:
    for path in paths:
        for _ in range(2):
            node.request("GET", path, headers={"Host": HOST})


def _stop(nodes: list[LiveServer]) -> None:
    for node in nodes:
        node.stop()


def _warnings(node: LiveServer, auth: dict[str, str]) -> list[str]:
    status, body = admin_json(node, auth, HOST, "GET", STATUS)
    assert status == 200, body
    return [warning["code"] for warning in body["warnings"]]


def _recovery_after(samples: list[Sample], fault_at: float) -> float | None:
    """Seconds from ``fault_at`` until the cache stores or serves again after the last request
    it passed through for the fault (``detail=storage``)."""
    bypassed = [s.started for s in samples if s.started >= fault_at and "detail=storage" in
                s.cache_status]  # fmt: skip
    since = max(bypassed, default=fault_at)
    found = first_stored_after(samples, since)
    return None if found is None else since - fault_at + found


def _race_result(
    report: RaceReport, fault_at: float, notes: str, *, stale_copies: int = 0
) -> dict[str, object]:
    samples = race_samples(report)
    bypassed = sum("detail=storage" in sample.cache_status for sample in samples)
    return figures(
        samples,
        lost=len(report.dropped),
        stale=len(report.stale) + len(report.stuck) + stale_copies,
        recovery=_recovery_after(samples, fault_at),
        notes=f"{notes}; {bypassed} passed through uncached (detail=storage)",
    )


# ---------------------------------------------------------------------- damaged index
def corrupt_index_before_boot(scratch: Path) -> dict[str, object]:
    nodes = start_nodes(scratch, 1, [])
    node = nodes[0]
    checks: dict[str, Any] = {}
    try:
        auth = admin_auth(node)
        site = setup_site(node, auth, HOST)
        _warm(node, site.pages)
    finally:
        _stop(nodes)
    cache = node.data_dir / "cache"
    damage_index(cache)
    status = run_cli(node, "cache", "status")
    checks["cli_status_exit"] = status.returncode
    checks["cli_status_rebuilt"] = "cache_storage_rebuilt" in status.stdout
    damage_index(cache)
    checks["cli_flush_all_exit"] = run_cli(node, "cache", "flush", "--all").returncode
    damage_index(cache)
    started = time.monotonic()
    node.start()  # the first draft's workers refused to boot: "file is not a database"
    try:
        checks["boot_s"] = round(time.monotonic() - started, 2)
        load_started = time.monotonic()
        with Load(node, HOST, lambda: site.pages) as load:
            time.sleep(2.0)
        samples = load.samples
        checks["healthz"] = healthz(node, HOST)[0]
        checks["warnings"] = _warnings(node, auth)
        checks["quarantined"] = len(quarantined(cache))
    finally:
        _stop(nodes)
    return {
        **figures(samples, lost=len(load.dropped), recovery=first_stored_after(samples,
                  load_started), notes=f"booted in {checks['boot_s']} s on a damaged index"),
        "checks": checks,
    }  # fmt: skip


def corrupt_index_while_serving(scratch: Path, seconds: float = 8.0) -> dict[str, object]:
    nodes = start_nodes(scratch, 1, [])
    node = nodes[0]
    checks: dict[str, Any] = {}
    fault: dict[str, float] = {}
    try:
        site = setup_site(node, admin_auth(node), HOST)

        def corrupt(duration: float) -> None:
            time.sleep(duration / 3)
            fault["at"] = time.monotonic()
            damage_index(node.data_dir / "cache")

        report = run_race(nodes, site, duration=seconds, readers=8, during=corrupt)
        checks["quarantined"] = len(quarantined(node.data_dir / "cache"))
        checks["healthz"] = healthz(node, HOST)[0]
        checks["errors"] = report.errors[:5]
    finally:
        _stop(nodes)
    notes = f"index overwritten at {seconds / 3:.1f} s of {seconds:g} s; {report.summary()}"
    return {**_race_result(report, fault["at"], notes), "checks": checks}


def cache_directory_read_only(scratch: Path) -> dict[str, object]:
    tmpfs = Tmpfs(scratch / "var" / "cache", 32)
    nodes = start_nodes(scratch, 1, [])
    node = nodes[0]
    checks: dict[str, Any] = {}
    try:
        auth = admin_auth(node)
        site = setup_site(node, auth, HOST)
        _warm(node, site.pages)
        _stop(nodes)
        damage_index(tmpfs.path)
        tmpfs.read_only()  # a damaged index that cannot be moved aside
        node.start()
        with Load(node, HOST, lambda: site.pages) as load:
            time.sleep(1.5)
            checks["healthz_read_only"] = healthz(node, HOST)[:2]
            checks["warnings_read_only"] = _warnings(node, auth)
            writable_at = time.monotonic()
            tmpfs.writable()
            time.sleep(RECOVERY + 1)
        samples = load.samples
        read_only = [s for s in samples if s.started < writable_at]
        checks["bypassed_read_only"] = sum("detail=storage" in s.cache_status for s in read_only)
        checks["requests_read_only"] = len(read_only)
        checks["healthz"] = healthz(node, HOST)[0]
        checks["warnings"] = _warnings(node, auth)
        checks["quarantined"] = len(quarantined(tmpfs.path))
    finally:
        _stop(nodes)
        tmpfs.close()
    notes = "damaged index on a read-only tmpfs for 1.5 s, then writable"
    recovery = first_stored_after(samples, writable_at)
    return {
        **figures(samples, lost=len(load.dropped), recovery=recovery, notes=notes),
        "checks": checks,
    }


# ---------------------------------------------------------------------- a full disk
def _posts(node: LiveServer, auth: dict[str, str], count: int) -> list[str]:
    """``count`` new published posts; their paths."""
    paths = []
    for number in range(count):
        status, post = admin_json(node, auth, HOST, "POST", "/site-json/site/v2/posts",
                                  {"title": f"Filler {number}", "content": "x" * 2000,
                                   "status": "publish"})  # fmt: skip
        assert status == 201, post
        paths.append("/" + post["link"].split("/", 3)[3])
    return paths


def disk_full(scratch: Path) -> dict[str, object]:
    tmpfs = Tmpfs(scratch / "var", 48)
    nodes = start_nodes(scratch, 1, [])
    node = nodes[0]
    checks: dict[str, Any] = {}
    try:
        auth = admin_auth(node)
        site = setup_site(node, auth, HOST)
        fresh = _posts(node, auth, 40)
        _warm(node, site.pages)
        checks["filled_bytes"] = tmpfs.fill()
        full_at = time.monotonic()
        # Cached pages, then pages never seen: hits, and misses that cannot be stored.
        phase: dict[str, list[str]] = {"paths": [*site.pages, *fresh[:20]]}
        with Load(node, HOST, lambda: phase["paths"]) as load:
            time.sleep(2.0)
            checks["healthz_full"] = healthz(node, HOST)[:2]
            checks["warnings_full"] = _warnings(node, auth)
            freed_at = time.monotonic()
            tmpfs.free()
            phase["paths"] = fresh[20:]
            deadline = freed_at + RECOVERY + 1
            while time.monotonic() < deadline and healthz(node, HOST)[0] != 200:
                time.sleep(0.2)
            checks["healthz_ok_after_s"] = round(time.monotonic() - freed_at, 2)
            time.sleep(max(0.0, deadline - time.monotonic()))
        samples = load.samples
        during = [s for s in samples if full_at <= s.started < freed_at]
        checks["served_unstored"] = sum("detail=storage" in s.cache_status for s in during)
        checks["hits_while_full"] = sum(s.cache_status.startswith("sitecache; hit")
                                        for s in during)  # fmt: skip
        checks["healthz"] = healthz(node, HOST)[0]
    finally:
        _stop(nodes)
        tmpfs.close()
    notes = "data directory on a 48 MB tmpfs filled for 2 s, then freed"
    recovery = first_stored_after(samples, freed_at)
    return {
        **figures(samples, lost=len(load.dropped), recovery=recovery, notes=notes),
        "checks": checks,
    }


# ---------------------------------------------------------------------- static copies
def static_purge_race(scratch: Path, seconds: float = 8.0) -> dict[str, object]:
    plugins = json.dumps(["tests.faults.cache_faults:pause_static_copies"])
    nodes = start_nodes(scratch, 1, [f"plugins = {plugins}"])
    node = nodes[0]
    checks: dict[str, Any] = {}
    try:
        auth = admin_auth(node)
        site = setup_site(node, auth, HOST)
        status, _ = admin_json(node, auth, HOST, "POST", "/site-json/site-cache/v1/settings",
                               {"static_files": True})  # fmt: skip
        assert status == 200
        copies = [path for path in site.pages if not path.startswith("/feed")]
        with CopyWatcher(node.data_dir / "static", HOST, copies) as watcher:
            report = run_race(nodes, site, duration=seconds, readers=8, edit_pause=0.1)
            time.sleep(1.0)  # the last copies: 0.3 s after their page was stored
        stale_copies = watcher.stale(report.edits_returned)
        final = report.edits_returned[-1][1] if report.edits_returned else 0
        checks["stale_copies"] = [f"{file} v{version}" for _, version, file in stale_copies[:5]]
        checks["copies_read"] = len(watcher.seen)
        checks["final_copy_current"] = any(version == final for _, version, _ in watcher.seen[-20:])
    finally:
        _stop(nodes)
    notes = f"copies written 0.3 s after their page was stored; {report.summary()}"
    return {
        **_race_result(report, time.monotonic(), notes, stale_copies=len(stale_copies)),
        "recovery_s": 0.0,
        "checks": checks,
    }


# ---------------------------------------------------------------------- Redis
def redis_wrong_type(scratch: Path, seconds: float = 8.0) -> dict[str, object]:
    import redis

    from tests.cache.conftest import PrivateRedis

    private = PrivateRedis(scratch / "redis")
    config = ['cache_backend = "redis"', f'redis_url = "{private.url}"',
              'cache_namespace = "faults"']  # fmt: skip
    nodes: list[LiveServer] = []
    checks: dict[str, Any] = {}
    fault: dict[str, float] = {}
    client = redis.Redis.from_url(private.url)
    try:
        nodes = start_nodes(scratch, 1, config)
        site = setup_site(nodes[0], admin_auth(nodes[0]), HOST)

        def rewrite(duration: float) -> None:
            time.sleep(duration / 3)
            epoch = client.get("sitecache:faults:ep")
            prefix = "sitecache:faults:"
            data = prefix if epoch in (None, b"0") else f"{prefix}{int(epoch)}:"
            fault["at"] = time.monotonic()
            pipe = client.pipeline()  # another program's list under the totals' name
            pipe.delete(data + "tot")
            pipe.rpush(data + "tot", "foreign")
            pipe.execute()

        report = run_race(nodes, site, duration=seconds, readers=8, during=rewrite)
        checks["foreign_left"] = [
            key.decode() for key in client.scan_iter("sitecache:faults:*")
            if client.type(key) == b"list"
        ]  # fmt: skip
        checks["errors"] = report.errors[:5]
    finally:
        _stop(nodes)
        client.close()
        private.close()
    notes = f"a list written over the totals hash; {report.summary()}"
    return {**_race_result(report, fault["at"], notes), "checks": checks}


#: The scenarios `bench/faults_cache.py` runs (and the runner, bench/faults_bench.py).
SCENARIOS: Final[list[tuple[str, Scenario]]] = [
    ("cache index damaged before boot", corrupt_index_before_boot),
    ("cache index damaged while serving", corrupt_index_while_serving),
    ("cache directory read-only, index damaged", cache_directory_read_only),
    ("data directory disk full (cache side)", disk_full),
    ("static-file mode purge race", static_purge_race),
    ("Redis key of the wrong type", redis_wrong_type),
]
