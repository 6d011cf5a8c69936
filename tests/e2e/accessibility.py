"""axe-core in the browser tests: the npm package ``axe-core`` (pinned by the committed
``tests/e2e/axe/package.json`` and ``package-lock.json``), injected into the page Selenium
drives, run there, its violations read back.

Why the npm package rather than PyPI's ``axe-selenium-python``: it is Deque's own
distribution, its exact version and checksum are pinned by the lock file (``npm ci`` installs
exactly that), and the Python side needs no wrapper library: the script is injected and
``axe.run`` called through Selenium's own ``execute_async_script``.

``npm ci`` installs it into ``tests/e2e/axe/node_modules`` (``.ci/run`` does so before the
tests; `axe_source` does it on first use when npm is there). Without it, outside CI the tests
that need it skip with a message; in CI (``CI`` set) they fail, since CI installs it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any, Final

import pytest

AXE_DIRECTORY: Final = Path(__file__).resolve().parent / "axe"
AXE_SCRIPT: Final = AXE_DIRECTORY / "node_modules" / "axe-core" / "axe.min.js"
#: The impacts an acceptance run refuses (axe's scale: minor, moderate, serious, critical).
REFUSED_IMPACTS: Final = frozenset({"serious", "critical"})


def missing(reason: str) -> None:
    """Skip (or, in CI, fail) a test that needs what is missing."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI installs it: see .ci/run)")
    pytest.skip(reason)


@cache
def _installed() -> str | None:
    """``npm ci`` in `AXE_DIRECTORY` once (one process at a time); its failure, if any."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed (apt-get install npm), so axe-core is not either"
    with open(AXE_DIRECTORY / ".install-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # pytest-xdist workers install one at a time
        if AXE_SCRIPT.exists():
            return None
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=AXE_DIRECTORY,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    if done.returncode != 0 or not AXE_SCRIPT.exists():
        return f"npm ci in {AXE_DIRECTORY} failed: {done.stderr.strip()[-500:]}"
    return None


def axe_source() -> str:
    """The text of ``axe.min.js`` (installed by ``npm ci`` first when it is missing)."""
    if not AXE_SCRIPT.exists():
        failure = _installed()
        if failure is not None:
            missing(failure)
    return AXE_SCRIPT.read_text(encoding="utf-8")


def axe_violations(driver: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page ``driver`` shows (WCAG 2.x A and AA rules and
    axe's best practices), each ``{id, impact, help, nodes: [...]}``."""
    driver.execute_script(axe_source())
    result = driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ["violations"]})
          .then((results) => done(results.violations))
          .catch((error) => done({error: String(error)}));
        """
    )
    if isinstance(result, dict) and "error" in result:
        raise AssertionError(f"axe-core failed: {result['error']}")
    return list(result)


def refused(violations: list[dict[str, Any]]) -> list[str]:
    """The violations of a refused impact, one line each: rule, impact, help, where."""
    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']} at "
        + "; ".join(str(node.get("target")) for node in violation.get("nodes", [])[:5])
        for violation in violations
        if violation.get("impact") in REFUSED_IMPACTS
    ]
