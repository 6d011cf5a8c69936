"""The page cache under load: hits and misses through gunicorn beside a bare app, index costs.

Measured in one run, the contenders alternating round by round (the machine is noisy):

1. **Hits** through gunicorn (2 sync workers) on disk and Redis storage, beside a bare WSGI app
   that replays the very status, headers and bytes of a recorded hit under the same gunicorn
   settings; with and without ``Accept-Encoding: gzip``. Load comes from ``wrk`` when it is
   installed, else from a bounded Python load generator (threads, ``http.client``).
   (``SITECACHE_BENCH_LOADER=python`` forces the latter.) Goals: hit >= 0.85x bare on disk,
   >= 0.7x on Redis. The workers' CPU time per request is reported beside req/s.
   **Peers** in the same rounds, same gunicorn settings and load (`peer_apps.py`, ``PEERS``):
   Django's per-site cache (LocMemCache, FileBasedCache) and Flask-Caching's ``@cached()``
   (SimpleCache, RedisCache) in front of the same page, hits without gzip, as ratios to the
   same bare app; a peer whose view rendered after warm-up is marked invalid
   (``--skip-peers`` leaves them out).
2. **Misses**: every request a new path (stored, then never asked again) beside the bare app
   (`miss_bench.py` compares them with the same app with caching off, #18).
3. **Index costs** in-process: ``engine.stats()`` (count), ``list_entries`` (first page of 20)
   and ``purge_tags`` of one tag touching 10 entries, at 1k and 100k entries, on memory, disk
   and Redis. Goal: 100k costs at most 2x what 1k costs.
4. A cProfile of ``PageCache.__call__`` on a hit with a prebuilt environ (top 15 by tottime).

Redis comes from ``REDIS_URL`` (default ``redis://127.0.0.1:6379/15``), in a namespace unique to
this run and cleared at the end; it is skipped with a message when none answers.

Run: ``make bench`` or ``python bench/cache_bench.py [--seconds 2 --rounds 6 --entries 100000]``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import cProfile
import http.client
import io
import json
import os
import pstats
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cache_apps  # bench/ is on sys.path when this file runs as a script
import peer_apps
from werkzeug.test import EnvironBuilder

from sitecache.cache import CacheEngine, CacheEntry, DiskStorage, MemoryStorage, PageCache
from sitecache.cache.entry import encode_entry
from sitecache.cache.keys import hash_key
from sitecache.cache.storage import Storage, StorageError

REPOSITORY = Path(__file__).resolve().parents[1]
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
#: ``SITECACHE_BENCH_LOADER=python`` uses the Python load generator even where wrk is installed.
WRK = shutil.which("wrk") if os.environ.get("SITECACHE_BENCH_LOADER", "wrk") == "wrk" else None
HIT_GOALS = {"disk": 0.85, "redis": 0.70}
GROWTH_GOAL = 2.0
GZIP = "gzip, deflate, br"


# ---------------------------------------------------------------------- gunicorn servers
def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    """One gunicorn (2 sync workers) serving an app factory of `cache_apps` (or of ``module``)."""

    name: str
    factory: str
    environment: dict[str, str]
    module: str = "bench.cache_apps"
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        self.port = free_port()
        command = [
            sys.executable, "-m", "gunicorn",
            "--workers", "2", "--worker-class", "sync",
            "--bind", f"127.0.0.1:{self.port}",
            "--chdir", str(REPOSITORY),
            "--log-level", "warning",
            f"{self.module}:{self.factory}",
        ]  # fmt: skip
        environment = {**os.environ, **self.environment, "PYTHONPATH": str(REPOSITORY)}
        self.process = subprocess.Popen(command, env=environment)  # noqa: S603
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"gunicorn for {self.name} exited with {self.process.returncode}"
                )
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.2),
            ):
                return
            time.sleep(0.1)
        raise RuntimeError(f"gunicorn for {self.name} did not start in {timeout} s")

    def cpu_seconds(self) -> float:
        """User and system CPU time of the workers so far (0 where /proc cannot tell)."""
        assert self.process is not None
        total = 0
        try:
            task = f"/proc/{self.process.pid}/task/{self.process.pid}/children"
            with open(task, encoding="ascii") as handle:
                workers = handle.read().split()
            for pid in workers:
                with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            return 0.0
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def get(self, path: str = "/", accept_encoding: str = "identity") -> tuple[int, Any, bytes]:
        """One request: status, headers (an `http.client.HTTPMessage`), body."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request("GET", path, headers={"Accept-Encoding": accept_encoding})
            response = connection.getresponse()
            return response.status, response.headers, response.read()
        finally:
            connection.close()


# ---------------------------------------------------------------------- load generators
def wrk_rate(port: int, seconds: float, accept_encoding: str, unique: bool) -> tuple[float, int]:
    """Requests per second and requests from ``wrk`` (1 thread, 4 connections); every path
    new if ``unique``."""
    assert WRK is not None
    command = [
        WRK,
        "-t1",
        "-c4",
        f"-d{max(1, round(seconds))}s",
        "-H",
        f"Accept-Encoding: {accept_encoding}",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        if unique:
            script = Path(scratch) / "unique.lua"
            script.write_text(
                "local n = 0\n"
                "request = function()\n"
                "  n = n + 1\n"
                f'  return wrk.format("GET", "/miss-{uuid.uuid4().hex[:12]}/" .. n)\n'
                "end\n",
                encoding="utf-8",
            )
            command += ["-s", str(script)]
        output = subprocess.run(  # noqa: S603
            [*command, f"http://127.0.0.1:{port}/"],
            capture_output=True,
            text=True,
            check=True,
            timeout=seconds + 30,
        ).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        raise RuntimeError(f"wrk saw {errors.group(1)} error responses:\n{output}")
    match = re.search(r"Requests/sec:\s+([\d.]+)", output)
    count = re.search(r"(\d+) requests in", output)
    if match is None or count is None:
        raise RuntimeError(f"unexpected wrk output:\n{output}")
    return float(match.group(1)), int(count.group(1))


def python_rate(
    port: int, seconds: float, accept_encoding: str, unique: bool, limit: int = 200_000
) -> tuple[float, int]:
    """Requests per second and requests from 4 threads of `http.client`, bounded by time and
    count."""
    deadline = time.monotonic() + seconds
    done = [0] * 4
    failures: list[str] = []
    prefix = uuid.uuid4().hex[:12]

    def worker(slot: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {"Accept-Encoding": accept_encoding}
        try:
            while time.monotonic() < deadline and sum(done) < limit:
                path = f"/miss-{prefix}/{slot}-{done[slot]}" if unique else "/"
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    failures.append(f"{response.status} for {path}")
                    return
                done[slot] += 1
        except (OSError, http.client.HTTPException) as exc:
            failures.append(repr(exc))
        finally:
            connection.close()

    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"load generator failures: {failures[:3]}")
    return sum(done) / (time.monotonic() - start), sum(done)


def rate(
    server: Server, seconds: float, accept_encoding: str, unique: bool = False
) -> tuple[float, float]:
    """Requests per second on ``server`` with the best load generator available, and the CPU
    time its workers spent per request (µs), which other people's load disturbs far less."""
    cpu = server.cpu_seconds()
    if WRK is not None:
        per_second, count = wrk_rate(server.port, seconds, accept_encoding, unique)
    else:
        per_second, count = python_rate(server.port, seconds, accept_encoding, unique)
    return per_second, (server.cpu_seconds() - cpu) / max(count, 1) * 1e6


# ---------------------------------------------------------------------- part 1 and 2
@dataclass
class Series:
    """Requests per second of one contender, one figure per interleaved round."""

    rates: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, figures: tuple[float, float]) -> float:
        self.rates.append(figures[0])
        self.cpu.append(figures[1])
        return figures[0]

    @property
    def median(self) -> float:
        return statistics.median(self.rates)

    @property
    def best(self) -> float:
        return max(self.rates)


def ratio(ours: Series, bare: Series) -> float:
    """Best against best: other people's load on the machine only ever lowers a figure, so
    each side's best round is the one least disturbed."""
    return ours.best / bare.best


def round_ratio(ours: Series, bare: Series) -> float:
    """The median of the per-round ratios (each round measured the two side by side)."""
    return statistics.median(a / b for a, b in zip(ours.rates, bare.rates, strict=True))


def record_hit(server: Server, path: Path) -> None:
    """Write the replay file of the bare app from real hits on ``server`` (both encodings)."""
    recorded: dict[str, Any] = {}
    for name, encoding in (("identity", "identity"), ("gzip", GZIP)):
        status, headers, body = server.get("/", encoding)
        cache_status = headers.get("Cache-Status", "")
        assert status == 200, status
        assert cache_status.startswith("sitecache; hit"), cache_status
        # A client that takes br too gets the brotli copy (#32), made by the first hit asking.
        encoded = headers.get("Content-Encoding") in ("gzip", "br")
        assert encoded == (name == "gzip"), name
        kept = [
            (header, value)
            for header, value in headers.items()
            if header.lower() not in ("date", "server", "connection", "transfer-encoding")
        ]
        recorded[name] = {
            "status": f"{status} OK",
            "headers": kept,
            "body": base64.b64encode(body).decode("ascii"),
        }
    path.write_text(json.dumps(recorded), encoding="utf-8")


def check_same_answer(bare: Server, cached: Server) -> list[str]:
    """The header names of both answers; raises if the bodies or header sets differ."""
    names: list[str] = []
    for encoding in ("identity", GZIP):
        _, bare_headers, bare_body = bare.get("/", encoding)
        status, headers, body = cached.get("/", encoding)
        assert status == 200, (cached.name, status)
        cache_status = headers.get("Cache-Status", "")
        assert cache_status.startswith("sitecache; hit"), (cached.name, cache_status)
        assert body == bare_body, f"{cached.name}: the hit and the bare app send other bytes"
        ours = sorted(header.lower() for header in headers)
        theirs = sorted(header.lower() for header in bare_headers)
        assert ours == theirs, (cached.name, ours, theirs)
        names = [
            header for header in headers if header.lower() not in ("date", "server", "connection")
        ]
    return names


def servers_for(scratch: Path, redis_namespace: str | None) -> dict[str, Server]:
    """The PageCache servers: disk, and Redis when it answers."""
    servers: dict[str, Server] = {
        "disk": Server(
            "disk",
            "cached_app()",
            {"SITECACHE_BENCH_BACKEND": "disk", "SITECACHE_BENCH_PATH": str(scratch / "disk")},
        )
    }
    if redis_namespace is not None:
        servers["redis"] = Server(
            "redis",
            "cached_app()",
            {
                "SITECACHE_BENCH_BACKEND": "redis",
                "SITECACHE_BENCH_REDIS_URL": REDIS_URL,
                "SITECACHE_BENCH_NAMESPACE": redis_namespace,
            },
        )
    return servers


def encodings_of(name: str, others: dict[str, Server]) -> tuple[str, ...]:
    """The Accept-Encoding values contender ``name`` is measured with (peers: identity)."""
    return ("identity",) if name in others else ("identity", GZIP)


def run_rounds(
    contenders: dict[str, Server], others: dict[str, Server], seconds: float, rounds: int
) -> tuple[dict[tuple[str, str], Series], dict[str, Series]]:
    """Hits (every contender) and misses (not the peers), alternating order round by round."""
    hits: dict[tuple[str, str], Series] = {}
    misses: dict[str, Series] = {}
    for round_number in range(rounds):
        order = list(contenders) if round_number % 2 == 0 else list(reversed(contenders))
        for encoding in ("identity", GZIP):
            for name in order:
                if encoding not in encodings_of(name, others):
                    continue
                series = hits.setdefault((name, encoding), Series())
                figure = series.add(rate(contenders[name], seconds, encoding))
                print(f"  round {round_number + 1}: hit {name} {encoding}: {figure:,.0f}/s")
        for name in order:
            if name in others:
                continue
            series = misses.setdefault(name, Series())
            figure = series.add(rate(contenders[name], seconds, "identity", unique=True))
            print(f"  round {round_number + 1}: miss {name}: {figure:,.0f}/s", flush=True)
    return hits, misses


def check_peers_after(
    others: dict[str, Server], warm: dict[str, int], headers: dict[str, list[str]]
) -> dict[str, dict[str, Any]]:
    """Each peer's renders after warm-up and after the load (equal: its rows were hits)."""
    checked: dict[str, dict[str, Any]] = {}
    for name, server in others.items():
        after = renders(server)
        checked[name] = {"warm": warm[name], "after": after, "headers": headers[name]}
        if after != warm[name]:
            print(
                f"WARNING: {PEERS[name].label} rendered {after - warm[name]} times under "
                "load: its row measures misses, not hits (marked invalid)",
                flush=True,
            )
    return checked


def load_tests(
    seconds: float, rounds: int, scratch: Path, redis_namespace: str | None, peers: bool = True
) -> dict[str, Any]:
    """Parts 1 and 2: hits and misses through gunicorn, interleaved with the bare app; the
    peers' hits (`PEERS`, identity only) in the same rounds when ``peers``."""
    servers = servers_for(scratch, redis_namespace)
    replay = scratch / "replay.json"
    bare = Server("bare", "bare_app()", {"SITECACHE_BENCH_REPLAY": str(replay)})
    others = peer_servers(scratch, redis_namespace) if peers else {}
    try:
        for server in servers.values():
            server.start()
            status, headers, _ = server.get("/", "identity")  # the miss that primes the cache
            assert status == 200, (server.name, status)
            assert "stored" in headers.get("Cache-Status", ""), headers
        record_hit(servers["disk"], replay)
        bare.start()
        header_names: list[str] = []
        for server in servers.values():
            header_names = check_same_answer(bare, server)
        peer_headers: dict[str, list[str]] = {}
        for name, server in others.items():
            server.start()
            peer_headers[name] = check_peer(bare, server)
        contenders = {"bare": bare, **servers, **others}
        for name, server in contenders.items():  # warm both workers of every server
            for encoding in encodings_of(name, others):
                rate(server, 1, encoding)
        warm = {name: renders(server) for name, server in others.items()}
        for name, server in servers.items():
            status, headers, _ = server.get(f"/miss-check-{uuid.uuid4().hex}", "identity")
            assert "fwd=uri-miss; stored" in headers.get("Cache-Status", ""), (name, headers)
        hits, misses = run_rounds(contenders, others, seconds, rounds)
        for name, server in servers.items():  # still hits after the load
            _, headers, _ = server.get("/", "identity")
            assert headers.get("Cache-Status", "").startswith("sitecache; hit"), (name, headers)
        checked = check_peers_after(others, warm, peer_headers)
        return {"hits": hits, "misses": misses, "headers": header_names, "peers": checked}
    finally:
        bare.stop()
        for server in (*servers.values(), *others.values()):
            server.stop()


# ---------------------------------------------------------------------- peers
@dataclass(frozen=True)
class Peer:
    """Another library's page cache in front of the same page (`peer_apps`)."""

    label: str
    factory: str
    cache: str
    needs_redis: bool = False


#: The peers measured beside PageCache, by contender name (hits, identity only: none of them
#: stores a compressed variant, so a gzip row would compare different bytes).
PEERS: dict[str, Peer] = {
    "django-locmem": Peer("Django per-site cache, LocMemCache", "django_app()", "locmem"),
    "django-file": Peer("Django per-site cache, FileBasedCache", "django_app()", "file"),
    "flask-simple": Peer("Flask-Caching @cached(), SimpleCache", "flask_app()", "simple"),
    "flask-redis": Peer("Flask-Caching @cached(), RedisCache", "flask_app()", "redis", True),
}


def peer_servers(scratch: Path, redis_namespace: str | None) -> dict[str, Server]:
    """A gunicorn per peer of `PEERS` (the Redis one only when Redis answers)."""
    servers: dict[str, Server] = {}
    for name, peer in PEERS.items():
        if peer.needs_redis and redis_namespace is None:
            continue
        environment = {
            "SITECACHE_BENCH_PEER_CACHE": peer.cache,
            "SITECACHE_BENCH_PATH": str(scratch / f"peer-{name}"),
            "SITECACHE_BENCH_RENDERS": str(scratch / f"renders-{name}"),
            "SITECACHE_BENCH_REDIS_URL": REDIS_URL,
            "SITECACHE_BENCH_NAMESPACE": redis_namespace or "unused",
        }
        servers[name] = Server(name, peer.factory, environment, module="bench.peer_apps")
    return servers


def renders(server: Server) -> int:
    """How many times the peer behind ``server`` rendered the page (its misses) so far."""
    return peer_apps.render_count(Path(server.environment["SITECACHE_BENCH_RENDERS"]))


def check_peer(bare: Server, peer: Server) -> list[str]:
    """The header names of the peer's answer; raises unless it sends the page of the bare app
    and rendered it (the counter works)."""
    _, _, bare_body = bare.get("/", "identity")
    status, headers, body = peer.get("/", "identity")
    assert status == 200, (peer.name, status)
    assert body == bare_body, f"{peer.name}: the peer and the bare app send other bytes"
    assert renders(peer) >= 1, f"{peer.name}: no render counted"
    return [header for header in headers if header.lower() not in ("date", "server", "connection")]


# ---------------------------------------------------------------------- part 3
def small_entry(number: int, now: float) -> CacheEntry:
    """A small stored page tagged ``group-<number // 10>`` (ten entries per tag)."""
    created = now - 100_000 + number
    return CacheEntry(
        url=f"http://bench.local/{number // 1000}/post-{number}/",
        host="bench.local",
        path=f"/{number // 1000}/post-{number}/",
        variant="",
        status=200,
        headers=(("Content-Type", "text/html; charset=utf-8"),),
        body=b"<p>" + b"x" * 200 + b"</p>",
        gzip_body=b"",
        created=created,
        expires=now + 86_400,
        tags=(f"group-{number // 10}", "post"),
        etag=f'"e{number}"',
    )


def fill(storage: Storage, start: int, stop: int, now: float) -> None:
    """Store entries ``start`` .. ``stop - 1`` with `Storage.put` (keys are their hashes)."""
    for number in range(start, stop):
        entry = small_entry(number, now)
        key = hash_key(entry.url)
        storage.put(key, encode_entry(entry), entry.info(key), 200_000)


def timed(operation: Callable[[], object], repeat: int) -> float:
    """The best time of ``operation`` over ``repeat`` runs, in milliseconds (other people's
    load only ever adds time, so the best run is the least disturbed)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        operation()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def index_costs(storage: Storage, size: int, now: float, repeat: int = 15) -> dict[str, float]:
    """Milliseconds of count, list and purge-by-tag on ``storage`` holding ``size`` entries."""
    engine = CacheEngine(storage)
    engine.stats()
    count = timed(engine.stats, repeat)
    rows, total = engine.list_entries(1, 20)
    assert len(rows) == 20, len(rows)
    assert total == size, (total, size)
    listing = timed(lambda: engine.list_entries(1, 20), repeat)
    groups = iter(range(size // 20, size // 10))  # a fresh tag per run, ten entries each
    purged: list[int] = []
    purge = timed(
        lambda: purged.append(engine.purge_tags([f"group-{next(groups)}"]).deleted), repeat
    )
    assert set(purged) == {10}, purged
    return {"count": count, "list": listing, "purge": purge}


@contextlib.contextmanager
def storages(index_dir: Path, redis_namespace: str | None) -> Iterator[dict[str, Storage]]:
    """Fresh memory, disk (under ``index_dir``) and (when it answers) Redis stores."""
    found: dict[str, Storage] = {
        "memory": MemoryStorage(max_bytes=1 << 30),  # no eviction while filling
        "disk": DiskStorage(index_dir / "index-disk"),
    }
    if redis_namespace is not None:
        from sitecache.cache.storage.redis import RedisStorage

        found["redis"] = RedisStorage(REDIS_URL, f"{redis_namespace}-index")
    try:
        yield found
    finally:
        for storage in found.values():
            if storage.backend == "redis":
                storage.clear_namespace()  # type: ignore[attr-defined]
            storage.close()


def index_tests(index_dir: Path, redis_namespace: str | None, large: int) -> dict[str, Any]:
    """Part 3: index costs at 1k and ``large`` entries on every backend."""
    results: dict[str, Any] = {}
    now = time.time()
    with storages(index_dir, redis_namespace) as found:
        for name, storage in found.items():
            started = time.monotonic()
            fill(storage, 0, 1000, now)
            small = index_costs(storage, 1000 - 0, now)
            # index_costs purged 15 groups (150 entries): put them back, then grow.
            fill(storage, 0, 1000, now)
            fill(storage, 1000, large, now)
            big = index_costs(storage, large, now)
            results[name] = {"1k": small, "large": big, "fill_seconds": time.monotonic() - started}
            print(
                f"  index costs on {name}: done in {time.monotonic() - started:.1f} s", flush=True
            )
    return results


# ---------------------------------------------------------------------- part 4
def profile_hit(
    scratch: Path, redis_namespace: str | None, calls: int = 20_000
) -> tuple[str, dict[str, float]]:
    """cProfile of `PageCache.__call__` on a disk hit; and µs per call of each app in-process."""
    cache = PageCache(cache_apps.origin, DiskStorage(scratch / "profile-disk"))
    memory = PageCache(cache_apps.origin, MemoryStorage())
    apps = {"PageCache hit, memory": memory, "PageCache hit, disk": cache}
    if redis_namespace is not None:
        from sitecache.cache.storage.redis import RedisStorage

        storage = RedisStorage(REDIS_URL, redis_namespace + "-profile")
        apps["PageCache hit, Redis"] = PageCache(cache_apps.origin, storage)
    environ = EnvironBuilder(path="/", base_url="http://127.0.0.1:8000").get_environ()

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        del status, headers, exc_info

    for app in apps.values():
        app(dict(environ), start_response)  # prime
    probe: list[Any] = []
    cache(dict(environ), lambda status, headers, exc_info=None: probe.append(dict(headers)))
    assert probe[0]["Cache-Status"].startswith("sitecache; hit"), probe

    def per_call(app: Any) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(calls // 4):
                app(environ, start_response)
            best = min(best, (time.perf_counter() - start) / (calls // 4) * 1e6)
        return best

    costs = {"origin app": per_call(cache_apps.origin)}
    for name, app in apps.items():
        costs[name] = per_call(app)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        cache(environ, start_response)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
    for app in apps.values():
        app.engine.close()
    return out.getvalue(), costs


# ---------------------------------------------------------------------- report
def verdict(ok: bool) -> str:
    return "met" if ok else "**NOT met**"


def report(load: dict[str, Any], index: dict[str, Any], large: int) -> bool:
    """Print the markdown tables; whether every goal was met."""
    all_met = True
    hits, misses = load["hits"], load["misses"]
    print(f"\n### Hits through gunicorn (2 sync workers), {LOADER}\n")
    print("Hit responses carry: " + ", ".join(load["headers"]) + "\n")
    print(
        "req/s: best of the interleaved rounds (median in brackets); hit/bare: best against "
        "best (the median of the per-round ratios in brackets); worker CPU: median user+system "
        "time of the 2 workers per request, which other load on the machine disturbs less.\n"
    )
    print(
        "| storage | Accept-Encoding | hit req/s | bare req/s | hit/bare | goal | | "
        "worker CPU µs/req, hit / bare |"
    )
    print("|---|---|---:|---:|---:|---:|---|---:|")
    for backend in ("disk", "redis"):
        for encoding in ("identity", GZIP):
            if (backend, encoding) not in hits:
                continue
            ours, bare = hits[(backend, encoding)], hits[("bare", encoding)]
            value = ratio(ours, bare)
            ok = value >= HIT_GOALS[backend]
            all_met &= ok
            label = "gzip" if encoding == GZIP else "identity"
            print(
                f"| {backend} | {label} | {ours.best:,.0f} ({ours.median:,.0f}) | "
                f"{bare.best:,.0f} ({bare.median:,.0f}) | {value:.2f}x "
                f"({round_ratio(ours, bare):.2f}x) | >= {HIT_GOALS[backend]:.2f}x | "
                f"{verdict(ok)} | "
                f"{statistics.median(ours.cpu):.0f} / {statistics.median(bare.cpu):.0f} |"
            )
    if not hits:
        print("| - | - | skipped | | | | --skip-load |")
    elif ("redis", "identity") not in hits:
        print("| redis | - | skipped | | | | no Redis answered |")
    report_peers(load)
    print("\n### Misses (every request a new path, stored) beside the bare app\n")
    print("| storage | miss req/s | bare req/s | miss/bare | worker CPU µs/req, miss / bare |")
    print("|---|---:|---:|---:|---:|")
    for backend in ("disk", "redis"):
        if backend in misses:
            ours, bare = misses[backend], misses["bare"]
            print(
                f"| {backend} | {ours.best:,.0f} ({ours.median:,.0f}) | "
                f"{bare.best:,.0f} ({bare.median:,.0f}) | {ratio(ours, bare):.2f}x "
                f"({round_ratio(ours, bare):.2f}x) | "
                f"{statistics.median(ours.cpu):.0f} / {statistics.median(bare.cpu):.0f} |"
            )
    print(f"\n### Index costs in-process (best of 15, ms), 1k vs {large:,} entries\n")
    print(
        "| storage | operation | 1k ms | "
        f"{large // 1000}k ms | growth | goal <= {GROWTH_GOAL:.0f}x | |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    labels = {"count": "count (stats)", "list": "list (page 1, 20)", "purge": "purge 1 tag (10)"}
    for backend, figures in index.items():
        for operation, label in labels.items():
            small, big = figures["1k"][operation], figures["large"][operation]
            growth = big / small if small else float("inf")
            ok = growth <= GROWTH_GOAL
            all_met &= ok
            print(
                f"| {backend} | {label} | {small:.3f} | {big:.3f} | {growth:.1f}x | "
                f"<= {GROWTH_GOAL:.0f}x | {verdict(ok)} |"
            )
    return all_met


def report_peers(load: dict[str, Any]) -> None:
    """Print the table of the peers' hits beside PageCache's, all against the same bare app."""
    hits, peers = load["hits"], load.get("peers", {})
    if not peers:
        return
    print(
        "\n### Peers: other page caches in front of the same page under the same gunicorn "
        "(identity)\n"
    )
    print(
        "| cache | hit req/s | bare req/s | hit/bare | worker CPU µs/req, hit / bare | "
        "renders after warm-up / after load | |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    bare = hits[("bare", "identity")]
    rows: list[tuple[str, str, str]] = [
        (f"sitecache PageCache, {backend}", backend, "hits (Cache-Status)")
        for backend in ("disk", "redis")
        if (backend, "identity") in hits
    ]
    for name, checked in peers.items():
        valid = checked["after"] == checked["warm"]
        rows.append(
            (
                PEERS[name].label,
                name,
                f"{checked['warm']} / {checked['after']} | "
                + ("valid" if valid else "**INVALID**: rendered under load (misses, not hits)"),
            )
        )
    for label, name, check in rows:
        ours = hits[(name, "identity")]
        check = check if "|" in check else f"{check} | valid"
        print(
            f"| {label} | {ours.best:,.0f} ({ours.median:,.0f}) | "
            f"{bare.best:,.0f} ({bare.median:,.0f}) | {ratio(ours, bare):.2f}x "
            f"({round_ratio(ours, bare):.2f}x) | "
            f"{statistics.median(ours.cpu):.0f} / {statistics.median(bare.cpu):.0f} | {check} |"
        )
    print(
        "\nSame page, same gunicorn settings, same load, in the same interleaved rounds as the "
        "hits above; no goal (reported). A peer's row is valid when its view rendered no page "
        "after warm-up (renders counted across both workers).\n"
    )
    for name, checked in peers.items():
        print(f"- {PEERS[name].label} answers with: " + ", ".join(checked["headers"]))


LOADER = f"wrk -t1 -c4 ({WRK})" if WRK else "Python load generator (4 threads, http.client)"


def redis_namespace() -> str | None:
    """A namespace unique to this run when a Redis answers at `REDIS_URL`, else ``None``."""
    try:
        from sitecache.cache.storage.redis import RedisStorage

        probe = RedisStorage(REDIS_URL, "probe", timeout=0.5)
        probe.client.ping()
        probe.close()
    except (ImportError, StorageError, OSError) as exc:
        print(f"Redis skipped: nothing answers at {REDIS_URL} ({exc}); set REDIS_URL to run it.")
        return None
    except Exception as exc:  # redis.RedisError without importing redis here
        print(f"Redis skipped: {REDIS_URL} does not answer ({exc}); set REDIS_URL to run it.")
        return None
    return f"bench-{uuid.uuid4().hex[:12]}"


def clear_redis(namespace: str | None) -> None:
    if namespace is None:
        return
    from sitecache.cache.storage.redis import RedisStorage

    for suffix in ("", "-index", "-profile"):  # the servers', `index_tests`', `profile_hit`'s
        storage = RedisStorage(REDIS_URL, namespace + suffix)
        storage.clear_namespace()
        storage.close()
    peer_apps.clear_redis_prefix(REDIS_URL, namespace)  # Flask-Caching's RedisCache


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=2, help="length of one load run")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds (>= 3)")
    parser.add_argument("--entries", type=int, default=100_000, help="the large index size")
    parser.add_argument("--skip-load", action="store_true", help="only the in-process parts")
    parser.add_argument(
        "--skip-peers", action="store_true", help="no Django / Flask-Caching rows in the load"
    )
    parser.add_argument(
        "--index-dir",
        default="/dev/shm" if os.access("/dev/shm", os.W_OK) else None,  # noqa: S108
        help="where the disk store of the index costs lives (default: /dev/shm when there)",
    )
    options = parser.parse_args()
    began = time.monotonic()
    print(f"Python {sys.version.split()[0]}; page {len(cache_apps.PAGE):,} bytes; {LOADER}")
    print(f"index-cost disk store under {options.index_dir or tempfile.gettempdir()}")
    namespace = redis_namespace()
    load: dict[str, Any] = {"hits": {}, "misses": {}, "headers": []}
    with tempfile.TemporaryDirectory(prefix="sitecache-bench-") as directory:
        scratch = Path(directory)
        try:
            if not options.skip_load:
                print("load tests (hits, misses)...", flush=True)
                load = load_tests(
                    options.seconds, options.rounds, scratch, namespace, not options.skip_peers
                )
            print("index costs...", flush=True)
            with tempfile.TemporaryDirectory(
                prefix="sitecache-bench-index-", dir=options.index_dir
            ) as index_dir:
                index = index_tests(Path(index_dir), namespace, options.entries)
            profile, costs = profile_hit(scratch, namespace)
        finally:
            clear_redis(namespace)
    all_met = report(load, index, options.entries)
    print("\n### In-process cost of one call (best of 3, µs)\n")
    for name, value in costs.items():
        print(f"- {name}: {value:.1f} µs")
    print("\n### cProfile of PageCache.__call__ on a disk hit (top 15 by tottime)\n")
    print("```\n" + profile.strip() + "\n```")
    took = time.monotonic() - began
    verdicts = "yes" if all_met else "no"
    if options.skip_load:
        verdicts += " (the hit goals were not measured: --skip-load)"
    print(f"\nall goals met: {verdicts}; bench took {took:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
