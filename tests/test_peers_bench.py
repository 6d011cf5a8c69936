"""`bench/peers_bench.py` (the peers table of ``make bench``): its medians, its table, its goals,
the section it writes into the documentation, and its Jinja2 origin and peers' uncached stacks;
and the configurations `bench/static_bench.py` gives nginx."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def peers(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("peers_bench", BENCH / "peers_bench.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "peers_bench", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_row_is_the_median_of_its_per_round_differences_with_its_baseline(
    peers: ModuleType,
) -> None:
    measure = peers.Measure
    contenders = [
        peers.Contender("origin", "origin", "x:y()"),
        peers.Contender("cached", "a cache", "x:y()", baseline="origin"),
    ]
    results = {
        # per round: 100, 300 and 150 µs more than the origin's round; ratios 0.5, 0.8, 0.9
        "origin": [measure(1000, 1000, 3000, 3000), measure(500, 2000, 1500, 1500),
                   measure(1000, 1100, 3000, 3000)],
        "cached": [measure(500, 1100, 1500, 1500), measure(400, 2300, 1200, 1200),
                   measure(900, 1250, 2700, 2700)],
    }  # fmt: skip
    (row,) = peers.summarize(contenders, results)
    assert row.extra_cpu_us == 150  # not 1550 - 1100: each round against its own baseline
    assert row.throughput == pytest.approx(0.8)
    assert row.cpu_us == 1250
    assert row.baseline_cpu_us == 1100
    assert row.missed_all


def test_a_row_whose_renders_fall_short_of_its_requests_is_marked_invalid(
    peers: ModuleType,
) -> None:
    measure = peers.Measure
    contenders = [
        peers.Contender("origin", "origin", "x:y()"),
        peers.Contender("hitting", "a cache that hit", "x:y()", baseline="origin"),
        peers.Contender("missing", "a cache that missed", "x:y()", baseline="origin"),
    ]
    results = {
        "origin": [measure(1000, 1000, 3000, 3000)],
        "hitting": [measure(2000, 900, 6000, 3000)],  # half of its answers were hits
        "missing": [measure(900, 1200, 2700, 2700)],
    }
    rows = peers.summarize(contenders, results)
    assert [row.name for row in rows] == ["hitting", "missing"]  # by extra CPU
    table = peers.table(rows)
    assert table[2].startswith("| a cache that hit (INVALID")
    assert table[3] == "| a cache that missed | +200 µs | 0.90x | 1,200 µs (1,000) |"


def test_the_goals_compare_sitecache_with_the_peer_of_the_same_kind(peers: ModuleType) -> None:
    row = peers.Row
    rows = [
        row("sitecache-memory", "", 200.0, 0.8, 0, 0, True),
        row("django-locmem", "", 250.0, 0.8, 0, 0, True),
        row("sitecache-disk", "", 500.0, 0.6, 0, 0, True),
        row("nginx", "", 400.0, 0.7, 0, 0, True),
    ]
    lines = peers.goals(rows)
    assert lines[0].endswith(": goal met")
    assert "sitecache-disk +500 µs <= nginx +400 µs: goal NOT met" in lines[1]
    assert lines[2] == "sitecache-redis <= flask-redis: not measured here"


def test_the_docs_section_is_replaced_between_its_markers_and_nothing_else(
    peers: ModuleType,
) -> None:
    page = f"# Peers\n\nIntro.\n\n{peers.BEGIN}\nold table\n{peers.END}\n\nAfter.\n"
    written = peers.replace_section(page, "new table")
    assert written == f"# Peers\n\nIntro.\n\n{peers.BEGIN}\nnew table\n{peers.END}\n\nAfter.\n"
    first = peers.replace_section("# Peers\n", "first")
    assert first.endswith(f"{peers.BEGIN}\nfirst\n{peers.END}\n")


def test_every_contender_names_a_baseline_that_is_one(peers: ModuleType) -> None:
    names = {contender.name: contender for contender in peers.CONTENDERS}
    for contender in peers.CONTENDERS:
        if contender.baseline:
            assert not names[contender.baseline].baseline, contender.name
    for ours, peer in peers.GOALS:
        assert names[ours].baseline
        assert names[peer].baseline


_PROBE = """
import sys
from werkzeug.test import Client
import peer_apps
app = getattr(peer_apps, sys.argv[1] + "_app")()
first = Client(app).get("/a/1")
second = Client(app).get("/a/1")
assert first.status_code == 200, first.status_code
assert b"Page /a/1" in first.data and len(first.data) > 15_000
assert first.data == second.data
print(peer_apps.render_count(peer_apps.Path(sys.argv[2])))
"""


@pytest.mark.parametrize(("framework", "kind", "renders"), [
    ("flask", "none", 2), ("flask", "simple", 1), ("django", "none", 2), ("django", "locmem", 1),
])  # fmt: skip
def test_the_peers_render_the_jinja_page_and_their_uncached_stack_renders_every_time(
    tmp_path: Path, framework: str, kind: str, renders: int
) -> None:
    counter = tmp_path / "renders"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, framework, str(counter)],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH.parent), str(BENCH)]),
             "SITECACHE_BENCH_ORIGIN": "jinja", "SITECACHE_BENCH_PEER_CACHE": kind,
             "SITECACHE_BENCH_RENDERS": str(counter)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == str(renders)


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed")
@pytest.mark.parametrize("kind", ["static", "proxy_cache"])
def test_the_static_benchmark_writes_configurations_nginx_accepts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: str
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("static_bench", BENCH / "static_bench.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "static_bench", module)
    spec.loader.exec_module(module)
    conf = module.write_site(kind, tmp_path, 8081, 8082)
    if kind == "static":  # the copy sitecache would have written, both encodings
        copy = tmp_path / "static" / module.HOST / module.PATH.strip("/")
        assert (copy / "index.html").read_bytes() == module.PAGE
        assert (copy / "index.html.gz").exists()
    done = subprocess.run(
        [str(shutil.which("nginx")), "-t", "-c", str(conf), "-p", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert module.medians_ratio([30.0, 10.0, 20.0], [20.0, 40.0, 10.0]) == 1.0
