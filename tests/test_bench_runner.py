"""`bench/run_all.py` (``make bench``) cannot rot: it knows every benchmark script, each
one's quick flags are flags the script declares, and a quick run writes a results file."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

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
