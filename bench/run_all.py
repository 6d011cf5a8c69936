"""Run every benchmark and write ``bench/RESULTS.md`` (``make bench``; #18 point 6, #20 point 5).

Each script in `BENCHES` runs in its own process (this Python, this checkout first on the
path), one after the other; every one compares against a baseline measured in the same run,
so its ratios are what counts. ``RESULTS.md`` gets the machine (CPU, cores, load before and
after, Python, date), a summary (one row per benchmark: its goals met, missed or only reported,
its time and exit code), then each benchmark's own tables (ratio, goal, verdict) as it printed
them, or the end of its output when it prints no table.

``--quick`` runs each with the short arguments of `BENCHES` (a smoke run: its figures are not
results); ``--only NAME`` (repeatable) picks benchmarks by name (``purge`` for
``purge_bench.py``). Figures measured on a busy machine are noisy: re-run before quoting them.

Run: ``python bench/run_all.py [--quick] [--only NAME] [--output PATH]``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench.cache_tests_report import BEGIN as CACHE_TESTS_BEGIN  # noqa: E402 - after the path
from bench.cache_tests_report import END as CACHE_TESTS_END  # noqa: E402


@dataclass(frozen=True)
class Bench:
    """A benchmark script: what it measures, its full and its quick arguments."""

    about: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()


#: Every benchmark `make bench` runs (a test checks each ``bench/*_bench.py`` is here and that
#: its quick flags are its own).
BENCHES: Final[dict[str, Bench]] = {
    "cache": Bench(
        "page cache hit and miss vs a bare WSGI app, index costs at 100k",
        quick=("--seconds", "1", "--rounds", "3", "--entries", "2000", "--skip-load"),
    ),
    "miss": Bench(
        "a cache miss (render + store) vs caching off",
        quick=("--seconds", "1", "--rounds", "2", "--calls", "200", "--skip-load"),
    ),
    "purge": Bench(
        "purges, listings and search at 1k vs 100k entries, purge-all and flush --all",
        quick=("--entries", "3000", "--rounds", "3"),
    ),
    "peers": Bench(
        "a miss in sitecache and in other caches (Flask-Caching, Django, nginx, Varnish) on the "
        "same Jinja2 origin",
        full=("--docs", "docs/reference/benchmarks-peers.md"),
        quick=("--quick",),
    ),
    "search": Bench("what the search index adds to a store", quick=("--quick",)),
    "static": Bench(
        "static-file mode behind nginx vs nginx's own proxy_cache hits (nginx CPU per hit)",
        full=("--callgrind",),
        quick=("--quick",),
    ),
    "rest": Bench(
        "REST routes vs a bare werkzeug app (in process and under gunicorn)",
        quick=("--seconds", "0.5", "--rounds", "1"),
    ),
    "schema": Bench("schema validation vs fastjsonschema and jsonschema"),
    "preload": Bench("preload pages/s"),
    "site": Bench("demo site pages vs the template alone"),
    "race": Bench("concurrent fills and purges (correctness under load)", quick=("--seconds", "2")),
    "slowclient": Bench("slow clients beside normal GETs", quick=("--seconds", "2")),
    "faults": Bench(
        "PostgreSQL, Redis and the disk failing under load (#29): counts, latencies, recovery",
        quick=("--quick",),
    ),
}

#: How a benchmark's output says a goal was missed or met (its own words).
_MISSED: Final = re.compile(r"\bNOT met\b|\bMISSES\b|\bgoals? met: no\b|\bmissed\b", re.I)
_MET: Final = re.compile(r"\bgoals? met: yes\b|\bmeets\b|\|\s*met\s*\|", re.I)
#: A line of output, outside the tables, that states a verdict.
_VERDICT_LINE: Final = re.compile(r"^[^|].*(\bgoals? met\b|\bmeets\b|\bMISSES\b|\bNOT met\b)")
#: How many lines above a table its ``#`` heading may be (explanations come in between).
_HEADING: Final = 8
#: Lines of output kept for a benchmark that prints no table.
_TAIL: Final = 40
#: Longest a benchmark may run (seconds): a hung one must not hold ``make bench`` forever.
_TIMEOUT: Final = 3600


@dataclass
class Outcome:
    """One benchmark's run."""

    name: str
    command: list[str]
    seconds: float
    code: int
    output: str

    @property
    def verdict(self) -> str:
        """``failed`` (non-zero exit), ``missed``, ``met`` or ``reported`` (no goal read)."""
        if self.code != 0:
            return "failed"
        if _MISSED.search(self.output):
            return "missed"
        if _MET.search(self.output):
            return "met"
        return "reported"


def run(name: str, bench: Bench, quick: bool) -> Outcome:
    """Run one benchmark script in its own process."""
    script = HERE / f"{name}_bench.py"
    command = [sys.executable, str(script), *(bench.quick if quick else bench.full)]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
    started = time.monotonic()
    try:
        done = subprocess.run(  # noqa: S603 - this checkout's own scripts
            command,
            capture_output=True,
            text=True,
            env=environment,
            cwd=ROOT,
            timeout=_TIMEOUT,
            check=False,
        )
        code, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        code, output = -1, f"{exc.stdout or ''}\n(timed out after {_TIMEOUT} s)"
    return Outcome(name, command, time.monotonic() - started, code, str(output))


def tables(output: str) -> list[str]:
    """The Markdown tables in a benchmark's output (runs of lines starting with ``|``), each
    with its title: the last ``#`` heading of the `_HEADING` lines above it (not above the
    previous table), else the line printed just before it when there is one."""
    found: list[str] = []
    lines = output.splitlines()
    index = previous_end = 0
    while index < len(lines):
        if not lines[index].startswith("|"):
            index += 1
            continue
        start = index
        while index < len(lines) and lines[index].startswith("|"):
            index += 1
        top = max(previous_end, start - _HEADING)
        previous_end = index
        before = [line for line in lines[top:start] if line.strip()]
        titled = [line for line in before if line.startswith(("#", "=="))]
        heading = (titled or before[-1:] or [""])[-1]
        block = "\n".join(lines[start:index])
        title = heading.lstrip("#=").strip()
        found.append(f"**{title}**\n\n{block}" if title else block)
    return found


def machine() -> list[str]:
    """Lines describing this machine and this run."""
    cpu = platform.processor() or platform.machine()
    with_model = Path("/proc/cpuinfo")
    if with_model.exists():
        for line in with_model.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return [
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M UTC}",
        f"- machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}",
    ]


def report(outcomes: list[Outcome], quick: bool, loads: tuple[str, str]) -> str:
    """The text of ``RESULTS.md``."""
    lines = ["# Benchmark results", ""]
    if quick:
        lines += ["**Quick smoke run (`--quick`): short runs, not results.**", ""]
    lines += machine()
    lines += [f"- load average before: {loads[0]}; after: {loads[1]}", ""]
    lines += [
        "Every figure is a ratio against a baseline measured in the same run "
        "(see each script's docstring for what it compares). Written by `bench/run_all.py`.",
        "",
        "| benchmark | measures | goals | time | exit |",
        "|---|---|---|---:|---:|",
    ]
    for outcome in outcomes:
        about = BENCHES[outcome.name].about
        lines.append(
            f"| [{outcome.name}](#{outcome.name}) | {about} | {outcome.verdict} | "
            f"{outcome.seconds:.0f} s | {outcome.code} |"
        )
    for outcome in outcomes:
        arguments = " ".join(outcome.command[2:])
        lines += ["", f"## {outcome.name}", ""]
        lines += [f"`python bench/{outcome.name}_bench.py {arguments}`".replace(" `", "`"), ""]
        found = tables(outcome.output)
        if found and outcome.code == 0:
            for table in found:
                lines += [table, ""]
            said = outcome.output.splitlines()
            lines += [f"- {line.strip()}" for line in said if _VERDICT_LINE.search(line)]
        else:
            tail = outcome.output.rstrip().splitlines()[-_TAIL:]
            lines += ["```", *tail, "```"]
    return "\n".join(lines).rstrip() + "\n"


def cache_tests_section(path: Path) -> str:
    """The section `make cache-tests` wrote into ``path`` (kept when the benchmarks rewrite
    it: the suite is run apart), or ``""``."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    start, end = text.find(CACHE_TESTS_BEGIN), text.find(CACHE_TESTS_END)
    if start < 0 or end < start:
        return ""
    return text[start : end + len(CACHE_TESTS_END)]


def load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    parser.add_argument("--only", action="append", choices=sorted(BENCHES), help="by name")
    parser.add_argument("--output", default=str(HERE / "RESULTS.md"), help="where to write")
    options = parser.parse_args(argv)
    names = options.only or list(BENCHES)
    before = load()
    outcomes: list[Outcome] = []
    for name in names:
        print(f"== {name}_bench.py", flush=True)
        outcome = run(name, BENCHES[name], options.quick)
        print(f"   {outcome.verdict} in {outcome.seconds:.0f} s (exit {outcome.code})", flush=True)
        outcomes.append(outcome)
    output = Path(options.output)
    kept = cache_tests_section(output)
    text = report(outcomes, options.quick, (before, load()))
    output.write_text(text + ("\n" + kept + "\n" if kept else ""), encoding="utf-8")
    print(f"wrote {options.output}")
    return 0 if all(outcome.code == 0 for outcome in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
