"""The cache's rows of #29 under load: each fault made to a real gunicorn while HTTP clients
(and, where it says so, the race harness's readers and REST edits) keep asking.

`SCENARIOS` (read by bench/faults_bench.py, the runner of every fault scenario) pairs a name
with a function of a scratch directory returning the figures: ``requests``, ``status_counts``,
``p50_ms``, ``p99_ms``, ``max_ms``, ``lost`` (requests without an answer), ``stale`` (reads,
pages or static copies older than an edit that had returned), ``recovery_s`` (from the
service's return, or the fault, to the first page stored again; -1: never) and ``notes``
(plus ``checks``: what the fault tests assert). The scenarios themselves live in
`tests.faults.cache_scenarios`; the fault tests run them short, this runs them longer.

Run alone: ``python bench/faults_cache.py [--only NAME] [--seconds 20]``. The machine's load
changes the latencies (not the counts): quote figures from a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.faults import cache_scenarios

#: Seconds each race-harness scenario runs by default.
SECONDS: Final = 20.0


def scenarios(seconds: float = SECONDS) -> list[tuple[str, Callable[[Path], dict[str, object]]]]:
    """The scenarios, the race-harness ones running ``seconds`` long."""
    longer = {
        cache_scenarios.corrupt_index_while_serving,
        cache_scenarios.static_purge_race,
        cache_scenarios.redis_wrong_type,
    }
    return [
        (name, partial(scenario, seconds=seconds) if scenario in longer else scenario)
        for name, scenario in cache_scenarios.SCENARIOS
    ]


SCENARIOS: Final = scenarios()

COLUMNS: Final = ("requests", "p50_ms", "p99_ms", "max_ms", "lost", "stale", "recovery_s")


def table(results: list[tuple[str, dict[str, object]]]) -> str:
    """A Markdown table of the results (status counts beside the other columns)."""
    lines = [
        "| scenario | " + " | ".join(COLUMNS) + " | statuses |",
        "|---" * (len(COLUMNS) + 2) + "|",
    ]
    for name, result in results:
        cells = [str(result[column]) for column in COLUMNS]
        statuses = ", ".join(f"{k}: {v}" for k, v in dict(result["status_counts"]).items())  # type: ignore[call-overload]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {statuses} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--only", action="append", default=[], help="a scenario name's start")
    args = parser.parse_args()
    results: list[tuple[str, dict[str, object]]] = []
    for name, scenario in scenarios(args.seconds):
        if args.only and not any(name.startswith(only) for only in args.only):
            continue
        with tempfile.TemporaryDirectory(prefix="faults-cache-") as scratch:
            result = scenario(Path(scratch))
        results.append((name, result))
        print(f"{name}: {json.dumps(result, default=str)}", flush=True)
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
