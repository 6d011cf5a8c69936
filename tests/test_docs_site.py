"""The documentation site builds with Sphinx, warnings as errors (``make docs`` does the same)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def test_the_docs_site_builds_without_warnings(tmp_path: Path) -> None:
    build = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q"]
    where = ["-d", str(tmp_path / "doctrees"), str(REPOSITORY / "docs"), str(tmp_path / "html")]
    result = subprocess.run(
        [*build, *where],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "html" / "index.html").exists()
