"""`make cache-tests`: the public cache-tests suite against `PageCache`, scored beside its peers.

The suite (github.com/http-tests/cache-tests, the one behind cache-tests.fyi) is not part of
this repository: give the path of a checkout prepared as its own README says (its ``npm``
dependencies installed) in ``CACHE_TESTS_DIR``. Without one this prints why and exits 0.

For each storage (memory, disk, Redis on ``REDIS_URL``, skipped with a message when none
answers) it starts the suite's own test server
(``npm run server``), serves ``PageCache(ReverseProxy(<that server>))`` with waitress on a free
loopback port, runs the suite's own client against it (``npm run cli``) and keeps its JSON
results. The cache runs with the settings an administrator fronting such an origin would
choose (`HARNESS_SETTINGS`) and `HARNESS_RULES`: no lifetime for a response that states none
and has no ``Last-Modified`` (the suite's first test checks that, and most depend on it).

Scores count the graded tests (kind ``required`` or ``optimal``, not browser-only: 265 in the
suite of 2026) passed one by one, and under cache-tests.fyi's rule that a test whose
prerequisite did not pass does not count either. The published results of the other caches
(the suite's ``results/*.json``) are scored the same way. ``--write`` puts the table and every
remaining failure with its reason (`FAILURE_REASONS`) into ``bench/RESULTS.md`` and
``docs/reference/cache-tests-results.md``, between their generated-section markers.

Usage: ``python bench/cache_tests.py [--storage memory,disk,redis] [--id TEST] [--write]
[--output DIR] [--rescore DIR]`` (``--output`` keeps each run's JSON results, ``--rescore``
writes the scores of results kept so, without running the suite).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.cache_tests_report import (  # noqa: E402 - after the path is set
    Score,
    Suite,
    render_markdown,
    replace_section,
    score,
)
from bench.reverse_proxy import ReverseProxy  # noqa: E402
from sitecache.cache import CacheRules, DiskStorage, MemoryStorage, PageCache, Storage  # noqa: E402

#: The settings the harness seeds (all others are the defaults): URLs with a query string are
#: cached (the suite's URLs carry some) and 404 pages too, as a site fronting such an origin
#: would set.
HARNESS_SETTINGS: Final = {"cache_query_strings": True, "cache_404": True}
#: The Redis run's server when ``REDIS_URL`` names none (the tests' default database).
DEFAULT_REDIS_URL: Final = "redis://127.0.0.1:6379/15"
#: Seconds the suite's client may take for every test (it takes about two minutes).
CLIENT_TIMEOUT: Final = 900.0
RESULTS_MD: Final = ROOT / "bench" / "RESULTS.md"
DOCS_PAGE: Final = ROOT / "docs" / "reference" / "cache-tests-results.md"


def harness_rules(host: str) -> CacheRules:
    """The deployment rules of the harness: the proxy's loopback host, and freshness only
    from the response (the RFC 9111 heuristic of ``Last-Modified``, never the ``max_age``
    setting for a response that states nothing)."""
    return CacheRules(hosts=frozenset({host}), heuristic="last_modified")


@dataclass(frozen=True, slots=True)
class Checkout:
    """A prepared checkout of the suite."""

    path: Path

    @classmethod
    def find(cls, value: str | None) -> Checkout | str:
        """The checkout at ``value``, or the sentence saying why there is none."""
        if not value:
            return (
                "CACHE_TESTS_DIR is not set: give the path of a checkout of the cache-tests suite"
            )
        path = Path(value).expanduser().resolve()
        try:
            package = json.loads((path / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return f"{path} holds no package.json of the cache-tests suite"
        if package.get("name") != "http-cache-tests":
            name = package.get("name")
            return f"{path} is not a checkout of the cache-tests suite (package {name!r})"
        if not (path / "node_modules").is_dir():
            return f"{path} has no node_modules: run `npm install` there first, as its README says"
        if shutil.which("node") is None or shutil.which("npm") is None:
            return "node and npm are not on PATH"
        return cls(path)

    def version(self) -> str:
        """The suite's version (its ``package.json``)."""
        package = json.loads((self.path / "package.json").read_text(encoding="utf-8"))
        return str(package.get("version", "?"))

    def node_json(self, script: str) -> Any:
        """What a module-mode Node script run in the checkout prints, as JSON."""
        done = subprocess.run(  # noqa: S603 - a fixed command
            ["node", "--input-type=module", "-e", script],  # noqa: S607 - node from PATH
            cwd=self.path,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return json.loads(done.stdout)

    def suite(self) -> Suite:
        """The suite's tests (id, kind, prerequisites, browser-only) and published results."""
        tests = self.node_json(
            "import suites from './tests/index.mjs';"
            "const rows = [];"
            "for (const s of suites) for (const t of s.tests) rows.push({id: t.id, "
            "suite: s.id, name: t.name, kind: t.kind || 'required', "
            "browser_only: !!t.browser_only, depends_on: t.depends_on || []});"
            "console.log(JSON.stringify(rows))"
        )
        published = self.node_json(
            "import index from './results/index.mjs'; console.log(JSON.stringify(index))"
        )
        peers = []
        for item in published:
            if item.get("type") == "browser":
                continue
            results = json.loads((self.path / "results" / item["file"]).read_text("utf-8"))
            peers.append((f"{item['name']} {item.get('version', '')}".strip(), results))
        return Suite(tests=tests, published=peers)

    @contextlib.contextmanager
    def server(self) -> Iterator[int]:
        """The suite's test server on a free loopback port (stopped on exit)."""
        port = free_port()
        pidfile = Path(tempfile.gettempdir()) / f"cache-tests-{uuid.uuid4().hex}.pid"
        process = subprocess.Popen(  # noqa: S603 - a fixed command
            ["npm", "run", "--silent", "server", f"--port={port}", f"--pidfile={pidfile}"],  # noqa: S607
            cwd=self.path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for_port(port)
            yield port
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 15)
            process.wait(timeout=10)
            pidfile.unlink(missing_ok=True)

    def run_client(self, base: str, test_id: str = "") -> dict[str, Any]:
        """The suite's client against ``base``: its JSON results (every test, or ``test_id``
        alone, whose dump goes to standard error)."""
        command = ["npm", "run", "--silent", "cli", f"--base={base}", f"--id={test_id}"]
        done = subprocess.run(  # noqa: S603 - a fixed command
            command, cwd=self.path, capture_output=True, text=True, timeout=CLIENT_TIMEOUT
        )
        if test_id:
            sys.stderr.write(done.stdout + done.stderr)
            return {}
        if done.returncode != 0:
            raise RuntimeError(f"the suite's client failed ({done.returncode}): {done.stderr}")
        results: dict[str, Any] = json.loads(done.stdout)
        return results


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    """Return once something accepts connections on ``port``.

    Raises:
        TimeoutError: nothing did within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port}")


@contextlib.contextmanager
def open_storage(kind: str) -> Iterator[Storage]:
    """A fresh, empty storage of ``kind`` (removed on exit).

    Raises:
        RuntimeError: an unknown kind.
    """
    if kind == "memory":
        yield MemoryStorage()
        return
    if kind == "disk":
        with tempfile.TemporaryDirectory(prefix="cache-tests-") as directory:
            storage = DiskStorage(Path(directory) / "cache")
            try:
                yield storage
            finally:
                storage.close()
        return
    if kind == "redis":
        url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
        from sitecache.cache.storage.redis import RedisStorage

        namespace = f"cache-tests-{uuid.uuid4().hex[:12]}"
        shared: Storage = RedisStorage(url, namespace)
        try:
            yield shared
        finally:
            shared.close()
            _drop_namespace(url, namespace)
        return
    raise RuntimeError(f"unknown storage {kind!r} (memory, disk or redis)")


def _drop_namespace(url: str, namespace: str) -> None:
    """Delete every key of the harness's Redis namespace."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"sitecache:{namespace}:*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
    finally:
        client.close()


@contextlib.contextmanager
def serve_cache(storage: Storage, origin_port: int) -> Iterator[str]:
    """``PageCache(ReverseProxy(origin))`` on ``storage``, served by waitress on a free
    loopback port: its base URL (the server stops on exit)."""
    from waitress.server import create_server  # type: ignore[import-untyped]

    port = free_port()
    host = f"127.0.0.1:{port}"
    cache = PageCache(
        ReverseProxy("127.0.0.1", origin_port),
        storage,
        rules=harness_rules(host),
        settings=HARNESS_SETTINGS,
    )
    server = create_server(cache, host="127.0.0.1", port=port, threads=48, ident="")
    thread = threading.Thread(target=server.run, name="cache-tests-waitress", daemon=True)
    thread.start()
    try:
        wait_for_port(port)
        yield f"http://{host}"
    finally:
        server.close()
        thread.join(timeout=10)
        cache.close()


def unavailable(kind: str) -> str:
    """Why a run on ``kind`` cannot happen here (``""``: it can)."""
    if kind != "redis":
        return ""
    import redis

    url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except (redis.RedisError, OSError) as exc:
        return f"no Redis at {url}: {exc}"
    return ""


def run_storage(checkout: Checkout, kind: str, test_id: str = "") -> dict[str, Any]:
    """The suite's results through PageCache on a fresh storage of ``kind``."""
    with (
        checkout.server() as origin,
        open_storage(kind) as storage,
        serve_cache(storage, origin) as base,
    ):
        return checkout.run_client(base, test_id)


def main(argv: list[str] | None = None) -> int:
    """Run the suite on each storage asked for, print the scores, write them with
    ``--write``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--storage", default="memory,disk,redis")
    parser.add_argument("--id", default="", help="run one test and print its dump")
    parser.add_argument("--write", action="store_true", help="update RESULTS.md and the docs")
    parser.add_argument("--output", type=Path, help="a directory for the raw JSON results")
    parser.add_argument(
        "--rescore", type=Path, help="score the JSON results an --output run kept there instead"
    )
    args = parser.parse_args(argv)
    checkout = Checkout.find(os.environ.get("CACHE_TESTS_DIR"))
    if isinstance(checkout, str):
        print(f"cache-tests skipped: {checkout}")
        return 0
    kinds = [kind.strip() for kind in args.storage.split(",") if kind.strip()]
    if args.id:
        for kind in kinds:
            run_storage(checkout, kind, args.id)
        return 0
    suite = checkout.suite()
    ours: dict[str, Mapping[str, Any]] = {}
    ran = time.time()
    for kind in kinds:
        missing = unavailable(kind)
        if missing:
            print(f"{kind}: skipped ({missing})")
            continue
        if args.rescore:
            kept = args.rescore / f"{kind}.json"
            ours[kind] = json.loads(kept.read_text(encoding="utf-8"))
            ran = kept.stat().st_mtime
            continue
        started = time.monotonic()
        ours[kind] = run_storage(checkout, kind)
        result = score(suite, ours[kind])
        print(
            f"{kind}: {result.passed} of {result.graded} graded tests "
            f"({result.passed_with_prerequisites} under the cache-tests.fyi rule) "
            f"in {time.monotonic() - started:.0f} s"
        )
        if args.output:
            args.output.mkdir(parents=True, exist_ok=True)
            (args.output / f"{kind}.json").write_text(json.dumps(ours[kind], indent=1))
    scores: dict[str, Score] = {kind: score(suite, results) for kind, results in ours.items()}
    if args.write and scores:
        about = [
            f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(ran))} with `make cache-tests`: "
            f"the suite's version {checkout.version()} ({len(suite.tests)} tests, "
            f"{len(suite.graded())} graded), PageCache with the `last_modified` heuristic and "
            "`cache_query_strings` and `cache_404` on, behind `bench/reverse_proxy.py`, "
            "served by waitress. The other caches' figures are the suite's published results.",
        ]
        replace_section(RESULTS_MD, render_markdown(suite, scores, heading="## cache-tests",
                                                    preamble=about))  # fmt: skip
        replace_section(DOCS_PAGE, render_markdown(suite, scores, preamble=about))
        print(f"written to {RESULTS_MD.relative_to(ROOT)} and {DOCS_PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
