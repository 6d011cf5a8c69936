"""The soak, long: mixed traffic on several gunicorn nodes, one killed with SIGKILL mid-run (#22).

N nodes (default 3) share one Redis page cache and one site store (one SQLite data directory on
this machine, or a PostgreSQL database with ``--database-url``); C kept-alive connections per node
(default 64, one thread each) send anonymous page and REST reads, edits that write a version
marker into a post, comments and ``site-cache/v1`` purges for S seconds (default 60). The last
node is killed with SIGKILL after 40 % of the run and started again. The harness is
``tests/e2e/soak.py`` (its docstring says what is checked); ``tests/e2e/test_soak_short.py`` runs
a short version in ``make test``.

Prints requests, errors on the surviving and on the killed node, stale pages after an edit or
purge had returned, lost writes, throughput and latency; exits 1 when a goal is missed (an error
on a surviving node, a stale or unsettled page, a lost edit or comment, the killed node not
serving again).

    python bench/soak.py [--seconds 60] [--nodes 3] [--connections 64]
                         [--database-url postgresql://...] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.cluster import Cluster
from tests.e2e.soak import run_soak

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64, help="per node")
    parser.add_argument("--database-url", default=None, help="postgresql://... (else SQLite)")
    parser.add_argument("--redis-url", default=REDIS_URL)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.nodes < 2:
        parser.error("--nodes: at least 2 (one of them is killed)")

    def progress(line: str) -> None:
        if not args.json:
            print(f"soak: {line}", file=sys.stderr, flush=True)

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="soak-") as root:
        cluster = Cluster(Path(root), args.nodes, redis_url=args.redis_url,
                          database_url=args.database_url)  # fmt: skip
        cluster.start()
        try:
            report = run_soak(cluster, connections=args.connections, seconds=args.seconds,
                              progress=progress)  # fmt: skip
        finally:
            cluster.stop()
    figures = report.as_dict()
    figures["load_average_before"] = [round(value, 2) for value in load_before]
    figures["load_average_after"] = [round(value, 2) for value in os.getloadavg()]
    figures["store"] = "postgresql" if args.database_url else "sqlite (one shared data directory)"
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(report.table())
        print(f"load average before {figures['load_average_before']}, "
              f"after {figures['load_average_after']}; store: {figures['store']}")  # fmt: skip
        print("goals met" if report.ok else "GOALS MISSED")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
