"""`bench/run_all.py` (``make bench``) cannot rot: it knows every benchmark script, each
one's quick flags are flags the script declares, and a quick run writes a results file."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_all", BENCH / "run_all.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_all"] = module
    spec.loader.exec_module(module)
    return module


def test_the_runner_lists_every_benchmark_script() -> None:
    scripts = {path.name.removesuffix("_bench.py") for path in BENCH.glob("*_bench.py")}
    assert set(runner().BENCHES) == scripts


def test_every_quick_flag_is_one_its_script_declares() -> None:
    for name, bench in runner().BENCHES.items():
        source = (BENCH / f"{name}_bench.py").read_text(encoding="utf-8")
        assert "def main(" in source, name
        assert '__name__ == "__main__"' in source, name
        declared = set(re.findall(r"add_argument\(\s*\"(--[\w-]+)\"", source))
        flags = {arg for arg in (*bench.quick, *bench.full) if arg.startswith("--")}
        assert flags <= declared, (name, flags - declared)


def test_the_verdicts_are_read_from_what_a_benchmark_says() -> None:
    module = runner()

    def verdict(output: str, code: int = 0) -> str:
        return str(module.Outcome("x", [], 1.0, code, output).verdict)

    assert verdict("| a | 1.0x | <= 2x | met |\nall goals met: yes") == "met"
    assert verdict("| a | 9.0x | <= 2x | **NOT met** |") == "missed"
    assert verdict("goal compiled >= 1x: MISSES (lowest 0.5x)") == "missed"
    assert verdict("1,234 pages/s") == "reported"
    assert verdict("all goals met: yes", code=1) == "failed"


def test_a_quick_run_writes_the_results_with_the_benchmark_tables(tmp_path: Path) -> None:
    output = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, str(BENCH / "run_all.py"), "--quick", "--only", "search",
         "--output", str(output)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    text = output.read_text(encoding="utf-8")
    assert "Quick smoke run" in text
    assert "| [search](#search) |" in text
    assert "| storage | store, indexed | store, no index |" in text
    assert "| disk |" in text


def test_a_table_is_titled_by_its_heading_above_the_explanations() -> None:
    output = "\n".join(
        [
            "### Hits through gunicorn",
            "",
            "| storage | hit/bare |",
            "|---|---:|",
            "| disk | 1.05x |",
            "",
            "### Peers: other page caches in front of the same page",
            "",
            "Same page, same gunicorn settings.",
            "",
            "- Django per-site cache, LocMemCache answers with: Content-Type",
            "- Flask-Caching @cached(), SimpleCache answers with: Content-Type",
            "",
            "| cache | hit/bare |",
            "|---|---:|",
            "| Django per-site cache, LocMemCache | 0.57x |",
            "",
            "| untitled | x |",
            "|---|---|",
        ]
    )
    found = runner().tables(output)
    assert [table.split("\n")[0] for table in found] == [
        "**Hits through gunicorn**",
        "**Peers: other page caches in front of the same page**",
        "| untitled | x |",  # the heading of the table before it is not its own
    ]
    assert "| Django per-site cache, LocMemCache | 0.57x |" in found[1]


_PEER_PROBE = """
import os, sys, tempfile
from pathlib import Path
from werkzeug.test import Client
import peer_apps
scratch = Path(tempfile.mkdtemp())
os.environ["SITECACHE_BENCH_RENDERS"] = str(scratch / "renders")
os.environ["SITECACHE_BENCH_PATH"] = str(scratch / "store")
client = Client(getattr(peer_apps, sys.argv[1])(sys.argv[2]))
for _ in range(3):
    response = client.get("/a-page/", headers={"Host": "127.0.0.1:8080"})
    assert response.status_code == 200, response.status
    assert response.data == peer_apps.PAGE
    assert response.headers["Cache-Tag"] == "front-page, post-42"
print(peer_apps.render_count(scratch / "renders"))
"""


@pytest.mark.parametrize(
    ("factory", "kind"),
    [("django_app", "locmem"), ("django_app", "file"), ("flask_app", "simple")],
)
def test_each_peer_cache_renders_the_page_once_then_answers_from_its_cache(
    factory: str, kind: str
) -> None:
    # one process per peer: Django's settings are configured once per process
    done = subprocess.run(
        [sys.executable, "-c", _PEER_PROBE, factory, kind],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH.parent), str(BENCH)])},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "1"


def test_the_peer_rows_name_each_peer_and_flag_one_that_rendered_under_load(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("cache_bench", BENCH / "cache_bench.py")
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "cache_bench", bench)  # dataclasses look their module up
    spec.loader.exec_module(bench)

    def series(rate: float) -> object:
        return bench.Series([rate, rate * 0.9, rate * 0.8], [400.0, 410.0, 420.0])

    hits = {
        ("bare", "identity"): series(2000.0),
        ("disk", "identity"): series(2100.0),
        ("django-locmem", "identity"): series(1000.0),
        ("flask-simple", "identity"): series(1500.0),
    }
    peers = {
        "django-locmem": {"warm": 2, "after": 2, "headers": ["Content-Type"]},
        "flask-simple": {"warm": 2, "after": 9, "headers": ["Content-Type"]},
    }
    bench.report_peers({"hits": hits, "peers": peers})
    found = runner().tables(capsys.readouterr().out)
    assert len(found) == 1
    rows = found[0].splitlines()
    assert rows[0].startswith("**Peers: other page caches")
    (disk,) = [row for row in rows if row.startswith("| sitecache PageCache, disk |")]
    assert "| 1.05x (1.05x) |" in disk
    (django,) = [row for row in rows if row.startswith("| Django per-site cache, LocMemCache |")]
    assert "| 0.50x (0.50x) |" in django
    assert django.endswith("| 2 / 2 | valid |")
    (flask,) = [row for row in rows if row.startswith("| Flask-Caching @cached(), SimpleCache |")]
    assert "| 2 / 9 | **INVALID**" in flask


def faults_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("faults_bench", BENCH / "faults_bench.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_fault_scenario_is_judged_by_its_figures_not_by_words_in_its_notes() -> None:
    verdict = faults_bench().verdict
    served = {"requests": 10, "status_counts": {"200": 9, "503": 1}, "max_ms": 40, "lost": 0}
    assert verdict({**served, "notes": "444 edits (0 failed), 0 errors"}) == "met"
    assert verdict({**served, "status_counts": {"200": 9, "500": 1}}).startswith("**NOT met**")
    broken = {"requests": 0, "broken": "OSError: no tmpfs", "notes": "failed: OSError: no tmpfs"}
    assert verdict(broken) == "**NOT met** (failed)"
