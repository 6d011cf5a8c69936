"""Purges and listings at 1k and at 100k entries (#18 points 1 and 2), on disk and on Redis.

Measured in one run, the two sizes side by side (their rounds interleaved: the machine is
noisy, and other people's load only ever adds time, so each figure is the best of its rounds):

1. **Index costs** in-process, at 1k and ``--entries`` entries: ``engine.stats()``, a purge of
   one URL, a purge of one tag (10 entries), ``GET /cache`` first and last page (20 a page),
   the last page of ``status=fresh``, and ``search`` pages: terms matching as many entries at
   both sizes (``post-123/``: one; ``/0/post-98``: eleven, first and last page) through the
   trigram index, a term whose matches grow with the store (``post-98``: 11 vs 1,111;
   reported, the goal is per match) and a two-character term (a scan: reported, no goal).
   Goal: the large store costs at most 2x the small one (the last page: against the small
   store's last page). Before the rounds, the entries stored by the fill are indexed for
   search as GC's housekeeping does (its time is reported).
2. **Purge of everything**: ``POST /cache {"all": true}`` through the REST route in-process
   (an application password, as an administrator's script would), then, right after the
   answer, every sampled old entry must be a miss through *another* application sharing the
   storage (another process, in production), the counts must be zero and the listing empty.
   Then GC's removal of what it invalidated, slice by slice (the longest slice is reported).
   Goal: <= 50 ms at any size.
3. ``sitecache cache flush --all``: the command's wall time (a new process, as typed).
   Goal: <= 1 s at 100k on disk.
4. One ``POST /cache {"all": true}`` through gunicorn (2 sync workers) at the large size.

Entries are small pages of the host ``bench.local`` stored under their real keys, so an old
entry answers a request as a hit before the purge (checked) and must not after it.

Redis comes from ``REDIS_URL`` (default ``redis://127.0.0.1:6379/15``), in namespaces unique to
this run and cleared at the end; it is skipped with a message when none answers. The disk
stores live under ``--dir`` (default: the system's temporary directory, a real disk).

Run: ``python bench/purge_bench.py [--entries 100000 --rounds 7]`` (against another checkout:
``PYTHONPATH=<checkout> python bench/purge_bench.py``: the parts it lacks are skipped).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from werkzeug.test import Client

import sitecache
from sitecache.app import App, create_app
from sitecache.cache import CacheEntry
from sitecache.cache.entry import encode_entry
from sitecache.cache.keys import base_key

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
HOST = "bench.local"
SITE = f"http://{HOST}"
GROWTH_GOAL = 2.0
PURGE_GOAL_MS = 50.0
FLUSH_GOAL_S = 1.0
SAMPLE = 300
#: Authenticated reads sent to gunicorn's workers before the timed purge (warms both).
WARM_REQUESTS = 8
#: The command as typed: the installed ``sitecache`` script beside this Python.
_SCRIPT = Path(sys.executable).with_name("sitecache")
SITECACHE = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "sitecache.cli"]


# ---------------------------------------------------------------------- a site and its store
@dataclass
class Store:
    """One site (its own data directory or Redis namespace) holding ``size`` entries."""

    backend: str
    size: int
    root: Path
    namespace: str
    config: Path = field(init=False)
    app: App = field(init=False)
    authorization: str = field(init=False)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        lines = [
            f'data_dir = "{self.root / "var"}"',
            f'site_url = "{SITE}"',
            "password_hash_cost = 1024",
            f'cache_backend = "{self.backend}"',
        ]
        if self.backend == "redis":
            lines += [f'redis_url = "{REDIS_URL}"', f'cache_namespace = "{self.namespace}"']
        self.config = self.root / "sitecache.toml"
        self.config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.app = quiet_app(self.config)
        admin = self.app.auth.users.create("admin", "bench-password", role="administrator")
        password, _ = self.app.auth.app_passwords.create(admin, "bench")
        self.authorization = "Basic " + base64.b64encode(f"admin:{password}".encode()).decode()

    @property
    def engine(self) -> Any:
        return self.app.cache.engine

    def fill(self, start: int = 0, stop: int | None = None) -> None:
        """Store entries ``start`` .. ``stop - 1`` (default: up to the store's size)."""
        storage = self.engine.storage
        now = time.time()
        for number in range(start, self.size if stop is None else stop):
            entry = small_entry(number, now)
            key = base_key(entry.url, "")
            storage.put(key, encode_entry(entry), entry.info(key), 200_000)

    def rest(self, method: str, route: str, body: Any = None) -> tuple[int, Any]:
        response = Client(self.app).open(
            f"/site-json/site-cache/v1{route}",
            method=method,
            base_url=SITE,
            headers={"Authorization": self.authorization},
            environ_base={"REMOTE_ADDR": "127.0.0.1"},  # application passwords: loopback
            json=body,
        )
        return response.status_code, response.get_json()

    def close(self) -> None:
        storage = self.engine.storage
        if self.backend == "redis":
            storage.clear_namespace()
        self.app.auth.store.close()
        storage.close()


def quiet_app(config: Path) -> App:
    """The application of ``config`` with its timers left off (GC would run beside the
    measurements; part 2 runs the removal itself)."""
    app = create_app(config)
    app.cache_api.autostart_timers = False
    return app


def small_entry(number: int, now: float) -> CacheEntry:
    """A small page of ``bench.local`` tagged ``group-<number // 10>`` (ten per tag); every
    tenth shares its creation time with the next (ties in the listing order); 20 of the first
    thousand are expired, at every size (GC keeps expired entries few)."""
    created = now - 100_000 + number - (number % 10 == 1)
    return CacheEntry(
        url=f"{SITE}/{number // 1000}/post-{number}/",
        host=HOST,
        path=f"/{number // 1000}/post-{number}/",
        variant="",
        status=200,
        headers=(("Content-Type", "text/html; charset=utf-8"),),
        body=b"<p>" + b"x" * 200 + b"</p>",
        gzip_body=b"",
        created=created,
        expires=now - 10 if number < 1000 and number % 50 == 0 else now + 86_400,
        tags=(f"group-{number // 10}", "post"),
        etag=f'"e{number}"',
    )


def cache_status(app: App, number: int) -> str:
    """The ``Cache-Status`` of a visit to entry ``number``'s page through ``app``."""
    response = Client(app).get(f"/{number // 1000}/post-{number}/", base_url=SITE)
    return str(response.headers.get("Cache-Status", ""))


# ---------------------------------------------------------------------- part 1
def best_ms(operation: Callable[[], object]) -> float:
    start = time.perf_counter()
    operation()
    return (time.perf_counter() - start) * 1000


OPERATIONS = (
    "stats",
    "purge 1 url",
    "purge 1 tag (10)",
    "list first page",
    "list last page",
    "list last page, fresh",
    "search 1 match",
    "search 11 matches",
    "search 11 matches, last page",
    "search 11 vs 1,111 matches",
    "search 2 chars (scan)",
)
#: Rows reported without the growth goal: what they cost grows with their matches, or a scan.
UNBOUNDED = ("search 11 vs 1,111 matches", "search 2 chars (scan)")


def index_round(store: Store, run: int) -> dict[str, float]:
    """One round of every index operation on ``store`` (``run`` picks fresh URLs and tags)."""
    engine = store.engine
    victim = 20 * run + 7  # far from the last page, fresh each round
    figures = {
        "stats": best_ms(engine.stats),
        "purge 1 url": best_ms(lambda: engine.purge_urls([f"{SITE}/0/post-{victim}/"])),
        "purge 1 tag (10)": best_ms(lambda: engine.purge_tags([f"group-{50 + run}"])),
        "list first page": best_ms(lambda: engine.list_entries(1, 20)),
    }
    pages = (engine.list_entries(1, 20)[1] + 19) // 20
    fresh_pages = (engine.list_entries(1, 20, status="fresh")[1] + 19) // 20
    figures["list last page"] = best_ms(lambda: engine.list_entries(pages, 20))
    figures["list last page, fresh"] = best_ms(
        lambda: engine.list_entries(fresh_pages, 20, status="fresh")
    )
    # Terms no round purges (URL victims 7, 27, .. 287; tags of entries 500-649).
    searches = {
        "search 1 match": (1, "post-123/"),
        "search 11 matches": (1, "/0/post-98"),
        "search 11 matches, last page": (3, "/0/POST-98"),  # 5 a page
        "search 11 vs 1,111 matches": (1, "post-98"),
        "search 2 chars (scan)": (1, "12"),
    }
    for name, (page, term) in searches.items():
        per_page = 5 if page > 1 else 20
        figures[name] = best_ms(
            lambda p=page, t=term, n=per_page: engine.list_entries(p, n, search=t)
        )
    assert engine.list_entries(1, 20, search="post-123/")[1] == 1
    assert engine.list_entries(3, 5, search="/0/POST-98")[0], "the last search page is empty"
    assert engine.list_entries(pages, 20)[0], "the last page is empty"
    assert engine.list_entries(fresh_pages, 20, status="fresh")[0], "the last fresh page"
    return figures


def index_costs(small: Store, large: Store, rounds: int) -> dict[str, dict[str, float]]:
    """Part 1, the two stores' rounds interleaved; the best of each."""
    best: dict[str, dict[str, float]] = {"small": {}, "large": {}}
    for run in range(rounds):
        order = [("small", small), ("large", large)]
        if run % 2:
            order.reverse()
        for name, store in order:
            for operation, value in index_round(store, run).items():
                best[name][operation] = min(value, best[name].get(operation, float("inf")))
    return best


def search_catch_up(store: Store) -> float:
    """Index what the fill stored for search, as GC's housekeeping does between requests
    (a bounded batch a call); its wall time."""
    storage = store.engine.storage
    start = time.perf_counter()
    pending = getattr(storage, "_catch_up_search", None)
    if pending is not None:  # disk: until nothing waits
        pending(0, float("inf"))
    else:
        while store.engine.housekeeping(1.0):
            pass
    return time.perf_counter() - start


# ---------------------------------------------------------------------- part 2
def purge_everything(store: Store, other: App) -> dict[str, Any]:
    """``POST /cache {"all": true}`` in-process, the checks right after it, then GC."""
    rng = random.Random(store.size)  # noqa: S311 - a sample, not a secret
    sample = rng.sample(range(store.size), min(SAMPLE, store.size))
    hits = [number for number in sample[:20] if number >= 1000 or number % 50]
    assert all(cache_status(other, n).startswith("sitecache; hit") for n in hits), "not hits"
    live = store.engine.stats()["entries"]["total"]
    # A warm application, as a site's workers are: its first REST request registers every
    # route (rest_api_init, about 20 ms, the same at any size), which is not the purge's cost.
    assert store.rest("GET", "/status")[0] == 200
    start = time.perf_counter()
    status, answer = store.rest("POST", "/cache", {"all": True})
    took = (time.perf_counter() - start) * 1000
    assert status == 200, answer
    assert answer["deleted"] == live, (answer, live)
    # Right after the answer, through another application sharing the storage.
    statuses = [cache_status(other, number) for number in sample]
    assert not any(value.startswith("sitecache; hit") for value in statuses), "an old hit"
    stats = store.engine.stats()["entries"]
    assert stats == {"total": 0, "fresh": 0, "expired": 0}, stats
    assert store.engine.list_entries(1, 20) == ([], 0)
    removal: dict[str, Any] = {}
    engine = store.engine
    if hasattr(engine, "remove_invalidated"):
        removal["pending"] = engine.pending_removal().entries
        slices: list[float] = []
        started = time.perf_counter()
        while True:
            begun = time.perf_counter()
            done = engine.remove_invalidated(0.25)
            slices.append(time.perf_counter() - begun)
            if not done:
                break
        removal["seconds"] = time.perf_counter() - started
        removal["longest slice ms"] = max(slices) * 1000
        removal["slices"] = len(slices)
        assert not engine.pending_removal()
    return {"ms": took, "deleted": answer["deleted"], "removal": removal}


# ---------------------------------------------------------------------- part 3
def flush_all(store: Store) -> float:
    """Wall time of ``sitecache cache flush --all`` (a new process) on ``store``."""
    live = store.engine.stats()["entries"]["total"]
    command = [*SITECACHE, "--config", str(store.config)]
    start = time.perf_counter()
    output = subprocess.run(  # noqa: S603 - a fixed command
        [*command, "cache", "flush", "--all", "--json"],
        capture_output=True,
        check=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    ).stdout
    took = time.perf_counter() - start
    assert json.loads(output)["deleted"] == live, (output, live)
    assert store.engine.stats()["entries"]["total"] == 0
    return took


def command_start() -> float:
    """Wall time of ``sitecache --version`` (what any command pays to start)."""
    start = time.perf_counter()
    subprocess.run(  # noqa: S603 - a fixed command
        [*SITECACHE, "--version"],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    return time.perf_counter() - start


# ---------------------------------------------------------------------- part 4
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def gunicorn(store: Store) -> Iterator[int]:
    """gunicorn (2 sync workers) serving ``store``'s site; its port."""
    port = free_port()
    log = store.root / "gunicorn.log"
    environment = {
        **os.environ,
        "SITECACHE_CONFIG": str(store.config),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    command = [
        sys.executable, "-m", "gunicorn", "--workers", "2", "--worker-class", "sync",
        "--timeout", "120", "--bind", f"127.0.0.1:{port}", "sitecache.app:create_app()",
    ]  # fmt: skip
    with log.open("wb") as handle:
        process = subprocess.Popen(  # noqa: S603 - a fixed command
            command, stdout=handle, stderr=subprocess.STDOUT, env=environment
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{log.read_text()}")
            with contextlib.suppress(OSError):
                request(port, "GET", "/")
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not answer:\n{log.read_text()}")
            time.sleep(0.1)
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def request(
    port: int, method: str, path: str, body: Any = None, authorization: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Host": HOST}
    if authorization:
        headers["Authorization"] = authorization
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        connection.request(method, path, body=data, headers=headers)
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        connection.close()


def purge_through_gunicorn(store: Store) -> dict[str, Any]:
    """One ``POST /cache {"all": true}`` through gunicorn, and an old page after it."""
    with gunicorn(store) as port:
        page = "/0/post-503/"  # fresh, and untouched by the index rounds
        _, headers, _ = request(port, "GET", page)
        assert headers.get("Cache-Status", "").startswith("sitecache; hit"), headers
        # Warm workers (each registers its REST routes on its first REST request, ~20 ms at
        # any size): a few authenticated reads reach both of them.
        for _ in range(WARM_REQUESTS):
            request(port, "GET", "/site-json/site-cache/v1/status", None, store.authorization)
        start = time.perf_counter()
        status, _, body = request(
            port, "POST", "/site-json/site-cache/v1/cache", {"all": True}, store.authorization
        )
        took = (time.perf_counter() - start) * 1000
        _, after, _ = request(port, "GET", page)
    return {
        "status": status,
        "ms": took,
        "answer": body[:200].decode(errors="replace"),
        "after": after.get("Cache-Status", ""),
    }


# ---------------------------------------------------------------------- the run
def redis_answers() -> bool:
    try:
        import redis

        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5).ping()
    except Exception as exc:  # any failure means: skip Redis
        print(f"Redis skipped: nothing answers at {REDIS_URL} ({exc})")
        return False
    return True


def run_backend(
    backend: str, scratch: Path, large: int, rounds: int, index_only: bool = False
) -> dict[str, Any]:
    run_id = uuid.uuid4().hex[:10]

    def store(size: int, name: str) -> Store:
        return Store(backend, size, scratch / f"{backend}-{name}", f"bench-{run_id}-{name}")

    results: dict[str, Any] = {}
    small, big = store(1000, "small"), store(large, "large")
    try:
        began = time.monotonic()
        small.fill()
        big.fill()
        print(f"  {backend}: filled 1k and {large:,} in {time.monotonic() - began:.0f} s")
        results["search catch-up s"] = search_catch_up(big)
        search_catch_up(small)
        print(f"  {backend}: search index of {large:,}: {results['search catch-up s']:.2f} s")
        results["index"] = index_costs(small, big, rounds)
        if index_only:
            return results
        other_small, other_big = quiet_app(small.config), quiet_app(big.config)
        small_purges = []
        for _ in range(rounds):
            small.fill()
            small_purges.append(purge_everything(small, other_small))
        results["purge small"] = min(small_purges, key=lambda found: found["ms"])
        big.fill()  # what part 1's purges removed
        results["purge large"] = purge_everything(big, other_big)
        print(
            f"  {backend}: purge of everything at {large:,}: {results['purge large']['ms']:.1f} ms"
        )
        small.fill()
        results["flush small"] = flush_all(small)
        big.fill()
        results["flush large"] = flush_all(big)
        print(f"  {backend}: flush --all at {large:,}: {results['flush large']:.2f} s")
        with contextlib.suppress(AttributeError):
            while big.engine.remove_invalidated(1.0):
                pass
        big.fill()
        results["gunicorn"] = purge_through_gunicorn(big)
        for app in (other_small, other_big):
            app.auth.store.close()
            app.cache.engine.storage.close()
    finally:
        small.close()
        big.close()
    return results


def report(results: dict[str, dict[str, Any]], large: int, start_time: float) -> bool:
    met = True
    label = f"{large // 1000}k"
    print(f"\n### Index costs in-process (best of the rounds, ms), 1k vs {label} entries\n")
    print(f"| storage | operation | 1k ms | {label} ms | growth | goal | |")
    print("|---|---|---:|---:|---:|---:|---|")
    for backend, found in results.items():
        small, big = found["index"]["small"], found["index"]["large"]
        for operation in OPERATIONS:
            growth = big[operation] / small[operation]
            unbounded = operation in UNBOUNDED
            goal = "reported" if unbounded else f"<= {GROWTH_GOAL:.0f}x"
            ok = unbounded or growth <= GROWTH_GOAL
            met &= ok
            verdict = "" if unbounded else ("met" if ok else "**NOT met**")
            print(
                f"| {backend} | {operation} | {small[operation]:.3f} | {big[operation]:.3f} | "
                f"{growth:.1f}x | {goal} | {verdict} |"
            )
    print('\n### `POST /cache {"all": true}` and `sitecache cache flush --all`\n')
    print(
        "| storage | entries | purge, REST in-process | deleted | GC removal (slices, longest)"
        " | flush --all wall | gunicorn |"
    )
    print("|---|---:|---:|---:|---|---:|---|")
    for backend, found in results.items():
        if "purge small" not in found:  # --index-only
            continue
        for size, name in ((1000, "small"), (large, "large")):
            purge = found[f"purge {name}"]
            removal = purge["removal"]
            gc = (
                f"{removal['seconds']:.2f} s ({removal['slices']}, "
                f"{removal['longest slice ms']:.0f} ms)"
                if removal
                else "-"
            )
            flush = found[f"flush {name}"]
            met &= purge["ms"] <= PURGE_GOAL_MS
            if backend == "disk" and name == "large":
                met &= flush <= FLUSH_GOAL_S
            through = "-"
            if name == "large":
                g = found["gunicorn"]
                through = f"{g['status']} in {g['ms']:.1f} ms, then {g['after'] or '-'}"
            print(
                f"| {backend} | {size:,} | {purge['ms']:.1f} ms | {purge['deleted']:,} | {gc} | "
                f"{flush:.2f} s | {through} |"
            )
    catch_up = ", ".join(
        f"{backend} {found['search catch-up s']:.2f} s" for backend, found in results.items()
    )
    print(f"\nSearch index of the {large:,} stored by the fill, caught up after it: {catch_up}")
    print(f"\n(`sitecache --version` alone takes {start_time:.2f} s to start)")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000, help="the large size")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (>= 3)")
    parser.add_argument("--dir", default=None, help="where the disk stores live")
    parser.add_argument("--backend", choices=["disk", "redis"], action="append")
    parser.add_argument("--index-only", action="store_true", help="part 1 only")
    options = parser.parse_args()
    backends = options.backend or ["disk", "redis"]
    if "redis" in backends and not redis_answers():
        backends.remove("redis")
    print(f"sitecache from {Path(sitecache.__file__).parent}; Python {sys.version.split()[0]}")
    print(f"load average before: {os.getloadavg()}")
    began = time.monotonic()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="sitecache-purge-", dir=options.dir) as directory:
        for backend in backends:
            print(f"{backend}...", flush=True)
            results[backend] = run_backend(
                backend, Path(directory), options.entries, options.rounds, options.index_only
            )
        started = 0.0 if options.index_only else command_start()
    met = report(results, options.entries, started)
    print(f"\nload average after: {os.getloadavg()}; took {time.monotonic() - began:.0f} s")
    print(f"all goals met: {'yes' if met else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
