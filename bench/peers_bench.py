"""The peers table: what a cache miss costs in sitecache and in other caches, on the same origin.

Every contender serves the same origin, a ~24 KB page rendered by Jinja2 (`jinja_page`, about
1.2-1.5 ms of CPU), from gunicorn with 2 sync workers; ``wrk -t2 -c16`` asks for a new URL on
every request, so every request of a cached contender is a miss that renders and stores.
Renders are counted at the origin (one byte per render in a file): a row whose renders fall
short of its requests did not miss every time and is marked invalid.

Rows, each beside **the same stack uncached** (its baseline, measured in the same rounds):

- Flask-Caching ``@cached()`` on SimpleCache and RedisCache, beside the same Flask app with no
  cache (`peer_apps.flask_app`);
- Django's per-site cache on LocMemCache, RedisCache and FileBasedCache, beside the same Django
  project with no cache middleware (`peer_apps.django_app`);
- nginx ``proxy_cache`` (disk) and Varnish (malloc) as proxies in front of the bare origin,
  beside the bare origin alone; their CPU is the proxy's processes' plus the origin's workers';
- sitecache's ``PageCache`` on memory, disk (SQLite) and Redis around the bare origin, beside
  the bare origin alone (`cache_apps.cached_app("jinja")`).

Rounds alternate the order of the contenders (``--rounds``, 5 by default; ``--quick``: 1 round
of 1 s, a smoke run). Per round, CPU per request is the workers' (and the proxy's) ``/proc``
user + system time over wrk's count; a row's **extra CPU per miss** is the median over rounds of
its CPU per request minus its baseline's in the same round, its **throughput** the median of the
per-round ratios of requests per second. The goals of issue #32 (sitecache memory <= Django
LocMemCache, disk <= nginx proxy_cache, Redis <= Flask-Caching RedisCache) are printed as met
or not met.

Redis comes from ``REDIS_URL`` (default ``redis://127.0.0.1:6379/15``), in a namespace unique to
this run and cleared at the end; its rows are skipped with a message when none answers, and a
proxy that is not installed is skipped the same way. ``--docs PATH`` also writes the table into
the marked section of that documentation page.

Run: ``make bench`` or ``python bench/peers_bench.py [--rounds 5 --seconds 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import peer_apps  # bench/ is on sys.path when this file runs as a script
from cache_bench import REDIS_URL, Server, clear_redis, free_port, redis_namespace

WRK = shutil.which("wrk")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
VARNISHD = shutil.which("varnishd") or "/usr/sbin/varnishd"
#: The section of the documentation page `--docs` rewrites.
BEGIN = "<!-- peers table: written by bench/peers_bench.py --docs -->"
END = "<!-- end of the peers table -->"
#: A row is valid when the origin rendered at least this share of its requests (all misses).
MISS_SHARE = 0.98


# ---------------------------------------------------------------------- contenders
@dataclass(frozen=True)
class Contender:
    """One stack under load: a row of the table or the baseline of some."""

    name: str
    label: str
    #: the gunicorn app factory of the origin, ``module:factory()``
    app: str
    environment: tuple[tuple[str, str], ...] = ()
    #: the uncached contender it is compared with (``""``: a baseline itself)
    baseline: str = ""
    #: ``nginx`` or ``varnish`` in front of the origin, or ``""``
    proxy: str = ""
    needs_redis: bool = False


def _env(**values: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(values.items()))


JINJA = ("SITECACHE_BENCH_ORIGIN", "jinja")
#: Every contender, baselines first, in the order of the table.
CONTENDERS: tuple[Contender, ...] = (
    Contender("origin", "the origin alone (bare WSGI)", "bench.jinja_page:origin_app()"),
    Contender(
        "flask",
        "Flask, no cache",
        "bench.peer_apps:flask_app()",
        (JINJA, ("SITECACHE_BENCH_PEER_CACHE", "none")),
    ),
    Contender(
        "django",
        "Django, no cache",
        "bench.peer_apps:django_app()",
        (JINJA, ("SITECACHE_BENCH_PEER_CACHE", "none")),
    ),
    Contender(
        "flask-simple",
        "Flask-Caching `@cached`, SimpleCache (memory)",
        "bench.peer_apps:flask_app()",
        (JINJA, ("SITECACHE_BENCH_PEER_CACHE", "simple")),
        "flask",
    ),
    Contender(
        "varnish",
        "Varnish (malloc), proxy in front",
        "bench.jinja_page:origin_app()",
        baseline="origin",
        proxy="varnish",
    ),
    Contender(
        "django-locmem",
        "Django per-site cache, LocMemCache",
        "bench.peer_apps:django_app()",
        (JINJA, ("SITECACHE_BENCH_PEER_CACHE", "locmem")),
        "django",
    ),
    Contender(
        "nginx",
        "nginx proxy_cache (disk), proxy in front",
        "bench.jinja_page:origin_app()",
        baseline="origin",
        proxy="nginx",
    ),
    Contender(
        "flask-redis",
        "Flask-Caching, RedisCache",
        "bench.peer_apps:flask_app()",
        (JINJA, ("SITECACHE_BENCH_PEER_CACHE", "redis")),
        "flask",
        needs_redis=True,
    ),
    Contender(
        "sitecache-memory",
        "**sitecache PageCache, memory**",
        'bench.cache_apps:cached_app("jinja")',
        (("SITECACHE_BENCH_BACKEND", "memory"),),
        "origin",
    ),
    Contender(
        "django-redis",
        "Django per-site cache, RedisCache",
        "bench.peer_apps:django_app()",
        (JINJA, ("SITECACHE_BENCH_PEER_CACHE", "redis")),
        "django",
        needs_redis=True,
    ),
    Contender(
        "sitecache-disk",
        "**sitecache PageCache, disk (SQLite)**",
        'bench.cache_apps:cached_app("jinja")',
        (("SITECACHE_BENCH_BACKEND", "disk"),),
        "origin",
    ),
    Contender(
        "sitecache-redis",
        "**sitecache PageCache, Redis**",
        'bench.cache_apps:cached_app("jinja")',
        (("SITECACHE_BENCH_BACKEND", "redis"),),
        "origin",
        needs_redis=True,
    ),
    Contender(
        "django-file",
        "Django per-site cache, FileBasedCache",
        "bench.peer_apps:django_app()",
        (JINJA, ("SITECACHE_BENCH_PEER_CACHE", "file")),
        "django",
    ),
)
#: The goals of #32: each sitecache row's extra CPU per miss at most that of the peer named.
GOALS: tuple[tuple[str, str], ...] = (
    ("sitecache-memory", "django-locmem"),
    ("sitecache-disk", "nginx"),
    ("sitecache-redis", "flask-redis"),
)


# ---------------------------------------------------------------------- the proxies
def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and of every descendant alive now."""
    total, pending, seen = 0, [pid], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/stat", encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as handle:
                    pending.extend(int(child) for child in handle.read().split())
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return total / os.sysconf("SC_CLK_TCK")


class Proxy(Protocol):
    port: int

    def start(self, origin_port: int) -> None: ...
    def cpu_seconds(self) -> float: ...
    def stop(self) -> None: ...


@dataclass
class Process:
    """A proxy in the foreground, in its own scratch directory."""

    directory: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    def launch(self, command: list[str]) -> None:
        log = (self.directory / "proxy.log").open("wb")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{command[0]} exited: {(self.directory / 'proxy.log').read_text()[-2000:]}"
                )
            try:
                import socket

                with socket.create_connection(("127.0.0.1", self.port), 0.2):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"{command[0]} did not listen on {self.port} in 30 s")

    def cpu_seconds(self) -> float:
        """CPU seconds of the proxy's processes (master, workers, children)."""
        assert self.process is not None
        return tree_cpu_seconds(self.process.pid)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def nginx_conf(directory: Path, port: int, origin_port: int) -> str:
    """nginx.conf of a caching reverse proxy: every 200 kept an hour on disk, 2 workers."""
    return f"""user root;
worker_processes 2;
daemon off;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {directory}/body;
  proxy_temp_path {directory}/proxy;
  fastcgi_temp_path {directory}/fastcgi;
  uwsgi_temp_path {directory}/uwsgi;
  scgi_temp_path {directory}/scgi;
  proxy_cache_path {directory}/cache levels=1:2 keys_zone=peers:16m max_size=4g
                   inactive=1h use_temp_path=off;
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://127.0.0.1:{origin_port};
      proxy_cache peers;
      proxy_cache_valid 200 1h;
      add_header X-Cache-Status $upstream_cache_status;
    }}
  }}
}}
"""


class Nginx(Process):
    def start(self, origin_port: int) -> None:
        self.port = free_port()
        # The cache's 16 x 256 directories made beforehand, as a long-running nginx has them:
        # otherwise the first misses of a run pay nginx's mkdir of each (slow on some disks).
        for top in range(16):
            for sub in range(256):
                (self.directory / "cache" / f"{top:x}" / f"{sub:02x}").mkdir(parents=True)
        conf = self.directory / "nginx.conf"
        conf.write_text(nginx_conf(self.directory, self.port, origin_port), encoding="utf-8")
        self.launch([NGINX, "-c", str(conf), "-p", str(self.directory)])


class Varnish(Process):
    def start(self, origin_port: int) -> None:
        self.port = free_port()
        self.launch(
            [
                VARNISHD, "-F", "-n", str(self.directory / "varnish"),
                "-a", f"127.0.0.1:{self.port}", "-b", f"127.0.0.1:{origin_port}",
                "-s", "malloc,512m", "-p", "default_ttl=3600", "-T", "none",
            ]
        )  # fmt: skip


# ---------------------------------------------------------------------- load
def wrk_script(directory: Path) -> Path:
    """A wrk script asking every request for a new path (per thread, per run)."""
    script = directory / f"unique-{uuid.uuid4().hex[:8]}.lua"
    prefix = uuid.uuid4().hex[:12]
    script.write_text(
        "local threads = 0\n"
        "function setup(thread)\n"
        "  threads = threads + 1\n"
        '  thread:set("slot", threads)\n'
        "end\n"
        "local n = 0\n"
        "request = function()\n"
        "  n = n + 1\n"
        f'  return wrk.format("GET", "/peers-{prefix}/" .. slot .. "/" .. n)\n'
        "end\n",
        encoding="utf-8",
    )
    return script


def wrk(port: int, seconds: float, scratch: Path) -> tuple[float, int]:
    """Requests per second and requests of ``wrk -t2 -c16`` asking for new paths only."""
    assert WRK is not None
    command = [
        WRK, "-t2", "-c16", f"-d{max(1, round(seconds))}s",
        "-H", "Accept-Encoding: identity",
        "-s", str(wrk_script(scratch)), f"http://127.0.0.1:{port}/",
    ]  # fmt: skip
    output = subprocess.run(  # noqa: S603
        command, capture_output=True, text=True, check=True, timeout=seconds + 60
    ).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        raise RuntimeError(f"wrk saw {errors.group(1)} error responses:\n{output}")
    per_second = re.search(r"Requests/sec:\s+([\d.]+)", output)
    count = re.search(r"(\d+) requests in", output)
    if per_second is None or count is None:
        raise RuntimeError(f"unexpected wrk output:\n{output}")
    return float(per_second.group(1)), int(count.group(1))


@dataclass
class Running:
    """A contender started: its gunicorn, its proxy when it has one, its render counter."""

    contender: Contender
    server: Server
    renders: Path
    proxy: Proxy | None = None

    @property
    def port(self) -> int:
        return self.proxy.port if self.proxy is not None else self.server.port

    def cpu_seconds(self) -> float:
        proxy = self.proxy.cpu_seconds() if self.proxy is not None else 0.0
        return self.server.cpu_seconds() + proxy

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        self.server.stop()


@dataclass
class Measure:
    """One contender in one round."""

    per_second: float
    cpu_us: float  # CPU per request, µs
    requests: int
    renders: int


def measure(running: Running, seconds: float, scratch: Path) -> Measure:
    """One load run of ``running``: rate, CPU per request, requests and renders counted."""
    before_cpu = running.cpu_seconds()
    before_renders = peer_apps.render_count(running.renders)
    per_second, count = wrk(running.port, seconds, scratch)
    time.sleep(0.05)  # the last answers' renders are counted
    cpu = running.cpu_seconds() - before_cpu
    renders = peer_apps.render_count(running.renders) - before_renders
    return Measure(per_second, cpu / max(count, 1) * 1e6, count, renders)


def start(contender: Contender, scratch: Path, namespace: str | None) -> Running:
    """Start ``contender``'s gunicorn (and proxy) in ``scratch``."""
    renders = scratch / f"renders-{contender.name}"
    environment = dict(contender.environment)
    environment.update(
        SITECACHE_BENCH_RENDERS=str(renders),
        SITECACHE_BENCH_PATH=str(scratch / f"store-{contender.name}"),
        SITECACHE_BENCH_REDIS_URL=REDIS_URL,
        SITECACHE_BENCH_NAMESPACE=f"{namespace or 'unused'}-{contender.name}",
    )
    module, factory = contender.app.split(":", 1)
    server = Server(contender.name, factory, environment, module=module)
    server.start()
    running = Running(contender, server, renders)
    if contender.proxy:
        directory = scratch / f"proxy-{contender.name}"
        directory.mkdir()
        running.proxy = (Nginx if contender.proxy == "nginx" else Varnish)(directory)
        try:
            running.proxy.start(server.port)
        except Exception:
            server.stop()
            raise
    return running


def available(namespace: str | None) -> tuple[list[Contender], list[str]]:
    """The contenders this machine can run, and why the others were skipped."""
    chosen, skipped = [], []
    for contender in CONTENDERS:
        if contender.needs_redis and namespace is None:
            skipped.append(f"{contender.name}: no Redis at {REDIS_URL}")
        elif contender.proxy == "nginx" and not Path(NGINX).exists():
            skipped.append(f"{contender.name}: nginx is not installed")
        elif contender.proxy == "varnish" and not Path(VARNISHD).exists():
            skipped.append(f"{contender.name}: varnishd is not installed")
        else:
            chosen.append(contender)
    return chosen, skipped


def run_rounds(
    contenders: list[Contender], scratch: Path, namespace: str | None, rounds: int, seconds: float
) -> dict[str, list[Measure]]:
    """Every contender, ``rounds`` times, the order reversed every other round."""
    started: dict[str, Running] = {}
    results: dict[str, list[Measure]] = {}
    try:
        for contender in contenders:
            started[contender.name] = start(contender, scratch, namespace)
        for running in started.values():  # both workers warm (imports, first renders)
            measure(running, 1, scratch)
        for number in range(rounds):
            order = list(started) if number % 2 == 0 else list(reversed(started))
            for name in order:
                figures = measure(started[name], seconds, scratch)
                results.setdefault(name, []).append(figures)
                print(
                    f"  round {number + 1}: {name}: {figures.per_second:,.0f}/s, "
                    f"{figures.cpu_us:,.0f} µs CPU/req, {figures.renders}/{figures.requests} "
                    "rendered",
                    flush=True,
                )
    finally:
        for running in started.values():
            running.stop()
    return results


# ---------------------------------------------------------------------- figures
@dataclass
class Row:
    """A cached contender's figures against its baseline."""

    name: str
    label: str
    extra_cpu_us: float
    throughput: float
    cpu_us: float
    baseline_cpu_us: float
    missed_all: bool
    notes: list[str] = field(default_factory=list)


def summarize(
    contenders: Sequence[Contender], results: Mapping[str, Sequence[Measure]]
) -> list[Row]:
    """One row per cached contender measured with its baseline: the medians over rounds of
    the per-round extra CPU per request and of the per-round throughput ratio, sorted by
    extra CPU."""
    rows = []
    for contender in contenders:
        ours, base = results.get(contender.name), results.get(contender.baseline)
        if not contender.baseline or not ours or not base:
            continue
        paired = list(zip(ours, base, strict=False))
        extra = statistics.median(mine.cpu_us - theirs.cpu_us for mine, theirs in paired)
        ratio = statistics.median(
            mine.per_second / theirs.per_second for mine, theirs in paired if theirs.per_second
        )
        missed_all = all(m.renders >= MISS_SHARE * m.requests for m in ours)
        rows.append(
            Row(
                contender.name,
                contender.label,
                extra,
                ratio,
                statistics.median(m.cpu_us for m in ours),
                statistics.median(m.cpu_us for m in base),
                missed_all,
            )
        )
    return sorted(rows, key=lambda row: row.extra_cpu_us)


def table(rows: Sequence[Row]) -> list[str]:
    """The Markdown peers table."""
    lines = [
        "| cache in front of the same app | extra CPU per miss | throughput vs uncached "
        "| CPU per request (uncached) |",
        "|---|---:|---:|---:|",
    ]
    for row in rows:
        invalid = "" if row.missed_all else " (INVALID: it did not miss every time)"
        lines.append(
            f"| {row.label}{invalid} | {row.extra_cpu_us:+,.0f} µs | {row.throughput:.2f}x | "
            f"{row.cpu_us:,.0f} µs ({row.baseline_cpu_us:,.0f}) |"
        )
    return lines


def goals(rows: Sequence[Row]) -> list[str]:
    """The goals of #32, one line each: met or not (or not measured)."""
    by_name = {row.name: row for row in rows}
    lines = []
    for ours, peer in GOALS:
        if ours not in by_name or peer not in by_name:
            lines.append(f"{ours} <= {peer}: not measured here")
            continue
        mine, theirs = by_name[ours], by_name[peer]
        met = mine.extra_cpu_us <= theirs.extra_cpu_us
        lines.append(
            f"extra CPU per miss, {ours} {mine.extra_cpu_us:+,.0f} µs <= {peer} "
            f"{theirs.extra_cpu_us:+,.0f} µs: {'goal met' if met else 'goal NOT met'}"
        )
    return lines


def replace_section(text: str, section: str) -> str:
    """``text`` with what lies between `BEGIN` and `END` replaced by ``section`` (appended
    with both markers when they are missing)."""
    start, end = text.find(BEGIN), text.find(END)
    block = f"{BEGIN}\n{section.strip()}\n{END}"
    if start < 0 or end < start:
        return text.rstrip() + "\n\n" + block + "\n"
    return text[:start] + block + text[end + len(END) :]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternated rounds")
    parser.add_argument("--seconds", type=float, default=3, help="length of one load run")
    parser.add_argument("--quick", action="store_true", help="1 round of 1 s: a smoke run")
    parser.add_argument("--only", action="append", help="contender names (baselines follow)")
    parser.add_argument("--docs", help="a documentation page whose peers section to rewrite")
    options = parser.parse_args(argv)
    if WRK is None:
        print("peers skipped: wrk is not installed (Debian: apt-get install wrk)")
        return 0
    rounds, seconds = (1, 1.0) if options.quick else (options.rounds, options.seconds)
    namespace = redis_namespace()
    contenders, skipped = available(namespace)
    if options.only:
        wanted = set(options.only)
        wanted |= {c.baseline for c in contenders if c.name in wanted and c.baseline}
        contenders = [c for c in contenders if c.name in wanted]
    for reason in skipped:
        print(f"skipped {reason}")
    scratch = Path(tempfile.mkdtemp(prefix="sitecache-peers-"))
    try:
        results = run_rounds(contenders, scratch, namespace, rounds, seconds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if namespace is not None:
            for contender in contenders:
                clear_redis(f"{namespace}-{contender.name}")
    rows = summarize(contenders, results)
    heading = (
        f"### Misses on the same origin: {rounds} alternated round(s) of {seconds:g} s, "
        "wrk -t2 -c16, every URL new, medians"
    )
    said = goals(rows)
    if all("goal" in line for line in said):
        said.append(f"all goals met: {'no' if any('NOT' in line for line in said) else 'yes'}")
    print("\n".join([heading, "", *table(rows), "", *said]))
    lines = [heading, "", *table(rows), "", *(f"- {line}" for line in said)]
    if options.docs and not options.quick:
        page = Path(options.docs)
        text = page.read_text(encoding="utf-8") if page.exists() else ""
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        section = "\n".join([f"Measured {stamp}, load {os.getloadavg()[0]:.1f}:", "", *lines])
        page.write_text(replace_section(text, section), encoding="utf-8")
        print(f"wrote {page}")
    invalid = [row.name for row in rows if not row.missed_all]
    if invalid:
        print(f"invalid rows (hits among the requests): {', '.join(invalid)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
