"""The race harness, long: readers and REST edits together on real gunicorn nodes (#15).

Scenarios (each ``--seconds`` long, 16 readers, one editor looping over REST):

- ``disk``: one node, the disk cache, ``sitecache serve``'s gthread workers;
- ``disk-clear``: the same with ``clear_on_post_edit`` on;
- ``redis-2``: two nodes sharing one Redis cache and one site database;
- ``redis-hang``: one node on a private redis-server stopped with SIGSTOP for 6 s mid-run
  (reports the median and maximum latency of the reads made during the hang).

For each it prints reads, reads stale after an edit had returned (the goal is 0), pages still
stale 1.5 s after the end (0), errors, edits and the cache outcomes. The test suite runs short
versions of the same scenarios (tests/e2e/test_race.py, tests/e2e/test_cache_faults.py).

    python bench/race_bench.py [--seconds 20] [--only disk,redis-2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.race import (
    HOST,
    RaceReport,
    RaceSite,
    admin_auth,
    run_race,
    setup_site,
    start_nodes,
)
from tests.e2e.server import LiveServer

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")


def run(
    name: str,
    count: int,
    config: list[str],
    seconds: float,
    settings: dict[str, object] | None = None,
    during: Callable[[float], None] | None = None,
) -> tuple[RaceReport, list[LiveServer]]:
    root = Path(tempfile.mkdtemp(prefix=f"race-{name}-"))
    nodes = start_nodes(root, count, config)
    try:
        site = setup_site(nodes[0], admin_auth(nodes[0]), HOST)
        if settings:
            configure(nodes[0], site, settings)
        return run_race(nodes, site, duration=seconds, during=during), nodes
    finally:
        for node in nodes:
            node.stop()


def configure(node: LiveServer, site: RaceSite, settings: dict[str, object]) -> None:
    import json

    response = node.request("POST", "/site-json/site-cache/v1/settings", json.dumps(settings),
                            {**site.auth, "Host": HOST})  # fmt: skip
    assert response.status == 200, response.body


def show(name: str, report: RaceReport) -> None:
    verdict = "ok" if not (report.stale or report.stuck or report.errors) else "FAILED"
    print(f"{name:11} {verdict:6} {report.summary()}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--only", default="disk,disk-clear,redis-2,redis-hang")
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    failed = False
    if "disk" in wanted:
        report, _ = run("disk", 1, [], args.seconds)
        show("disk", report)
        failed |= bool(report.stale or report.stuck or report.errors)
    if "disk-clear" in wanted:
        report, _ = run("disk-clear", 1, [], args.seconds, {"clear_on_post_edit": True})
        show("disk-clear", report)
        failed |= bool(report.stale or report.stuck or report.errors)
    redis_config = ['cache_backend = "redis"', f'redis_url = "{REDIS_URL}"']
    if "redis-2" in wanted:
        namespace = f"bench-{uuid.uuid4().hex}"
        report, _ = run("redis-2", 2, [*redis_config, f'cache_namespace = "{namespace}"'],
                        args.seconds)  # fmt: skip
        show("redis-2", report)
        failed |= bool(report.stale or report.stuck or report.errors)
        from sitecache.cache.storage.redis import RedisStorage

        RedisStorage(REDIS_URL, namespace).clear_namespace()
    if "redis-hang" in wanted:
        from tests.cache.conftest import PrivateRedis

        private = PrivateRedis(Path(tempfile.mkdtemp(prefix="race-redis-")))
        window: dict[str, float] = {}

        def hang(duration: float) -> None:
            time.sleep(max(1.0, (duration - 6.0) / 2))
            window["start"] = time.monotonic()
            private.stop()
            time.sleep(6.0)
            private.resume()
            window["end"] = time.monotonic()

        try:
            config = ['cache_backend = "redis"', f'redis_url = "{private.url}"']
            report, _ = run("redis-hang", 1, config, max(args.seconds, 10.0), during=hang)
        finally:
            private.close()
        show("redis-hang", report)
        during = report.latencies(window["start"], window["end"])
        print(f"{'':11} {len(during)} reads during the 6 s hang: median "
              f"{statistics.median(during) * 1000:.0f} ms, p95 "
              f"{during[int(len(during) * 0.95)] * 1000:.0f} ms, max {during[-1] * 1000:.0f} ms",
              flush=True)  # fmt: skip
        failed |= bool(report.stale or report.stuck or report.errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
