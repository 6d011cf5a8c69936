"""Every fault scenario of #29 under load, with counts and latency percentiles.

The scenarios come from ``bench/faults_store.py`` (the site store: PostgreSQL restarted, down,
down at start; Redis losing the settings' copies; SQLite locked; the disk full) and, when
present, ``bench/faults_cache.py`` (the page cache's own faults). Each module offers
``SCENARIOS: list[tuple[str, Callable[[Path], dict[str, object]]]]``; a scenario runs in a
temporary directory of its own and returns ``{"requests", "status_counts", "p50_ms", "p99_ms",
"max_ms", "lost", "stale", "recovery_s", "notes"}``.

A scenario meets the acceptance when no request answered 500 (every 5xx a 503 or 507), none took
10 s or more, nothing acknowledged was lost (``lost`` 0), no stale copy was served (``stale`` 0
or not measured) and requests succeeded again within 5 s of the service's return. The table is
Markdown (``bench/run_all.py`` copies it into ``bench/RESULTS.md``); ``--json`` writes the raw
figures too.

Run as root (the scenarios mount a tmpfs and run PostgreSQL as its own user) on a quiet
machine: on a shared one the latencies are noise, the counts are not.

Run: ``python bench/faults_bench.py [--quick] [--only NAME] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

#: The scenario modules, in order (a missing one is skipped).
MODULES: Final = ("faults_store", "faults_cache")
#: The acceptance's bounds.
MAX_MS: Final = 10_000.0
RECOVERY_S: Final = 5.0

#: The table's columns.
COLUMNS: Final = (
    "scenario", "requests", "statuses", "p50 ms", "p99 ms", "max ms", "lost", "stale",
    "recovery s", "verdict", "notes",
)  # fmt: skip

Scenario = tuple[str, Callable[[Path], dict[str, object]]]


def scenarios() -> list[tuple[str, Scenario]]:
    """``(module, scenario)`` of every module that is present."""
    found: list[tuple[str, Scenario]] = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        found += [(name, scenario) for scenario in module.SCENARIOS]
    return found


def verdict(figures: dict[str, Any]) -> str:
    """``met`` or ``**NOT met**`` (and why); a scenario that broke (``broken`` holds its
    exception) is never met, whatever its notes say."""
    if figures.get("broken"):
        return "**NOT met** (failed)"
    if not figures.get("requests"):
        return "skipped"
    why = []
    statuses = {str(key): int(value) for key, value in (figures.get("status_counts") or {}).items()}
    bad = {s: n for s, n in statuses.items() if s.startswith("5") and s not in ("503", "507")}
    if bad or statuses.get("0") or statuses.get("-1"):
        why.append(f"errors {bad or statuses}")
    if float(figures.get("max_ms") or 0) >= MAX_MS:
        why.append("a request over 10 s")
    if figures.get("lost"):
        why.append(f"{figures['lost']} lost")
    if figures.get("stale"):
        why.append(f"{figures['stale']} stale")
    recovery = figures.get("recovery_s")
    if recovery is not None and float(recovery) >= RECOVERY_S:
        why.append(f"recovery {recovery} s")
    if "improper" in str(figures.get("notes", "")):
        why.append("improper refusals")
    return "met" if not why else f"**NOT met** ({', '.join(why)})"


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return " ".join(f"{key}:{count}" for key, count in value.items())
    return str(value).replace("|", "/")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short outages (a smoke run)")
    parser.add_argument("--only", action="append", help="scenarios whose name contains this")
    parser.add_argument("--json", help="also write the raw figures to this file")
    parser.add_argument(
        "--results",
        help="also write the table as the '## faults' section of this file (bench/RESULTS.md), "
        "leaving the rest of it as it is",
    )
    options = parser.parse_args(argv)
    if options.quick:
        os.environ["SITECACHE_FAULTS_QUICK"] = "1"
    results: list[dict[str, Any]] = []
    for module, (name, run) in scenarios():
        if options.only and not any(part in name for part in options.only):
            continue
        print(f"== {name} ({module})", file=sys.stderr, flush=True)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="sitecache-faults-") as directory:
            try:
                figures = dict(run(Path(directory)))
            except Exception as exc:  # a scenario that broke is a row that says so
                traceback.print_exc()
                broken = f"{type(exc).__name__}: {exc}"
                figures = {"requests": 0, "broken": broken, "notes": f"failed: {broken}"}
        figures.update(scenario=name, module=module, seconds=round(time.monotonic() - started))
        figures["verdict"] = verdict(figures)
        results.append(figures)
    text = report(results, quick=options.quick)
    print(text)
    if options.json:
        Path(options.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if options.results:
        write_section(Path(options.results), text)
    return 0


def report(results: list[dict[str, Any]], *, quick: bool) -> str:
    """The Markdown table of ``results`` with its heading, what the figures are worth, and
    the verdict line (``goals met: yes``/``no``)."""
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    lines = [
        "# Fault scenarios under load (#29)",
        "",
        f"{'Quick smoke run: short outages. ' if quick else ''}Load average at the end: {load} "
        f"({os.cpu_count()} cores). Counts are exact; on a shared machine the latencies are "
        "noise and only bound the answers.",
        "",
        f"| {' | '.join(COLUMNS)} |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in results:
        cells = [row["scenario"], row.get("requests"), row.get("status_counts"), row.get("p50_ms"),
                 row.get("p99_ms"), row.get("max_ms"), row.get("lost"), row.get("stale"),
                 row.get("recovery_s"), row["verdict"], row.get("notes", "")]  # fmt: skip
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    met = all(row["verdict"] in ("met", "skipped") for row in results)
    lines += ["", f"goals met: {'yes' if met else 'no'}"]
    return "\n".join(lines)


#: The heading of this benchmark's section in ``bench/RESULTS.md`` (as `run_all.py` names it).
SECTION: Final = "## faults"


def write_section(path: Path, text: str) -> None:
    """Put ``text`` under `SECTION` in ``path``: the section replaced when there is one (up to
    the next ``## `` heading), else appended; the rest of the file as it was."""
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    body = f"{SECTION}\n\n`python bench/faults_bench.py`\n\n" + text.replace(
        "# Fault scenarios", "**Fault scenarios", 1
    ).replace("(#29)\n", "(#29)**\n", 1)
    lines = existing.splitlines()
    if SECTION in lines:
        start = lines.index(SECTION)
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        lines[start:end] = [*body.rstrip().splitlines(), ""]
        updated = "\n".join(lines).rstrip() + "\n"
    else:
        updated = (existing.rstrip() + "\n\n" if existing else "") + body.rstrip() + "\n"
    path.write_text(updated, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
