"""Instructions per request of the REST benchmark's scenarios, counted by callgrind (#18).

``python bench/rest_instructions.py [--requests N] [SCENARIO ...]`` runs each scenario of
``rest_gunicorn.py`` (words of their names: ``index``, ``401``, ``settings``, ``app-password``)
in process under ``valgrind --tool=callgrind``, once with N requests and once with none, and
prints the difference divided by N: the instructions one request costs, without the start-up.
Wall-clock time moves with the machine's load; instruction counts do not, so two versions of
the code can be compared on a busy machine. (Time spent in the kernel, such as SQLite's file
locks, is not counted.) ``PYTHONHASHSEED`` is fixed so that both runs hash alike.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rest_gunicorn import SCENARIOS, make_site, scenario_environ
from rest_profile import request_once

from sitecache.app import create_app

HERE = Path(__file__).resolve().parent
WARM_UP = 20
"""Requests served before counting starts in both runs (the first fires ``rest_api_init``)."""


def serve(number: int, requests: int) -> None:
    """The child: serve ``requests`` requests (after `WARM_UP`) of scenario ``number``."""
    with tempfile.TemporaryDirectory() as temporary:
        config, authorization = make_site(Path(temporary))
        app = create_app(config, cache_timers=False)
        _, path, authorized, _ = SCENARIOS[number]
        environ = scenario_environ(path, authorization if authorized else None)
        for _ in range(WARM_UP + requests):
            request_once(app, environ)
        app.auth.store.close()


def instructions(number: int, requests: int) -> int:
    """Instructions callgrind counts for a child serving ``requests`` requests."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), str(HERE)])
    command = [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
        sys.executable, str(Path(__file__).resolve()), "--child", str(number), str(requests),
    ]  # fmt: skip
    done = subprocess.run(  # noqa: S603 - a fixed command
        command, capture_output=True, text=True, env=env, check=True
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind said nothing countable:\n{done.stderr}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="requests counted")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("scenarios", nargs="*", help="words naming the scenarios (default all)")
    options = parser.parse_args()
    if options.child:
        serve(int(options.child[0]), int(options.child[1]))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed")
        return 1
    for number, (name, _, _, _) in enumerate(SCENARIOS):
        if options.scenarios and not any(word in name for word in options.scenarios):
            continue
        counted = instructions(number, options.requests) - instructions(number, 0)
        print(f"{name:<52} {counted / options.requests:>12,.0f} instructions per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
