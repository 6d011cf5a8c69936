"""REST server speed, each figure a ratio against a baseline measured in the same run.

Three parts (``make bench`` or ``python bench/rest_bench.py [--seconds S] [--rounds R]``):

1. In process: ``GET /site-json/bench/v1/items/<id>?per_page=…&status=…&_fields=id,title`` with
   validated and sanitized arguments beside a plain werkzeug app that parses the same query and
   returns the same JSON. Both are called as WSGI callables with a prebuilt environ, interleaved.
2. In process: route match + dispatch at 10, 100, 1,000 and 10,000 registered routes (goal: flat,
   at most 1.2x the cost at 10 routes), for the last route registered in a crowded namespace and
   for a route of another namespace.
3. Under gunicorn (2 sync workers each): sitecache beside a bare WSGI app that answers every
   scenario with the very status, headers and body sitecache answered (captured first), loaded
   with wrk (``-t2 -c32``) when installed, else a bounded Python load generator; the two are
   measured alternately, round after round. Scenarios: the API index, an application-password
   GET of ``site/v2/users/me/application-passwords``, its 401 (no credentials), and an
   application-password GET of ``site-cache/v1/settings``. That last route is a stand-in
   registered by this benchmark (same permission as the real one: ``manage_options``; a
   settings-sized object) until the page cache's own route exists.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request, Response

from sitecache.app import App, create_app
from sitecache.auth.roles import require_site_admin
from sitecache.hooks import Hooks
from sitecache.rest import RestRequest, RestServer, return_true
from sitecache.rest.debug import DebugNotices
from sitecache.rest.urls import RestSettings

REPOSITORY = Path(__file__).resolve().parents[1]

QUERY = "per_page=20&status=publish&search=hello&_fields=id,title"
PATH = "/site-json/bench/v1/items/42"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def item(request: RestRequest) -> dict[str, Any]:
    return {
        "id": request["id"],
        "title": f"Item {request['id']}",
        "status": request["status"],
        "per_page": request["per_page"],
        "content": "x" * 200,
    }


def register(server: RestServer) -> None:
    server.register_rest_route(
        "bench/v1",
        "/items/(?P<id>\\d+)",
        {
            "methods": "GET",
            "callback": item,
            "permission_callback": return_true,
            "args": {
                "id": {"type": "integer", "minimum": 1},
                "per_page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
                "status": {"type": "string", "enum": ["publish", "draft"], "default": "publish"},
                "search": {"type": "string", "maxLength": 100, "pattern": "^[\\w ]*$"},
            },
        },
    )


@Request.application  # type: ignore[arg-type]
def baseline(request: Request) -> Response:
    """The same answer without the framework: parse, check, filter by hand."""
    per_page = int(request.args.get("per_page", "10"))
    data = {
        "id": 42,
        "title": "Item 42",
        "status": request.args.get("status", "publish"),
        "per_page": per_page,
        "content": "x" * 200,
    }
    fields = request.args.get("_fields", "").split(",")
    data = {key: value for key, value in data.items() if key in fields}
    return Response(json.dumps(data), content_type="application/json; charset=UTF-8")


def call(app: WsgiApp, environ: dict[str, Any]) -> bytes:
    status: list[str] = []

    def start_response(line: str, headers: Any, exc_info: Any = None) -> None:
        status.append(line)

    chunks = app(dict(environ), start_response)
    body = b"".join(chunks)
    close = getattr(chunks, "close", None)
    if close is not None:
        close()
    assert status[0].startswith("200"), status
    return body


def measure(app: WsgiApp, environ: dict[str, Any], requests: int) -> list[float]:
    """Latency of each of ``requests`` calls, in seconds."""
    latencies = []
    for _ in range(requests):
        start = time.perf_counter()
        call(app, environ)
        latencies.append(time.perf_counter() - start)
    return latencies


def summary(latencies: list[float]) -> tuple[float, float, float]:
    """Requests per second, p50 and p99 latency in microseconds."""
    ordered = sorted(latencies)
    rate = len(ordered) / sum(ordered)
    p50 = statistics.median(ordered) * 1e6
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e6
    return rate, p50, p99


def inprocess_route() -> None:
    """Part 1: one validated REST route against a bare werkzeug app, in process."""
    with tempfile.TemporaryDirectory() as data_dir:
        # No background timers in this process: the figures are the request path alone.
        app = create_app(
            {"data_dir": data_dir, "site_url": "http://bench.local", "cache_timers": False}
        )
        app.hooks.add_action("rest_api_init", register)
        environ = EnvironBuilder(
            path=PATH, query_string=QUERY, base_url="http://bench.local"
        ).get_environ()
        ours_body = json.loads(call(app, environ))
        theirs_body = json.loads(call(baseline, environ))
        assert ours_body == theirs_body == {"id": 42, "title": "Item 42"}, (ours_body, theirs_body)

        for _ in range(300):  # warm up both
            call(app, environ)
            call(baseline, environ)
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(5):  # interleaved rounds: machine noise hits both sides alike
            ours += measure(app, environ, 1000)
            theirs += measure(baseline, environ, 1000)

    ours_rate, ours_p50, ours_p99 = summary(ours)
    base_rate, base_p50, base_p99 = summary(theirs)
    print(f"== 1. In process: GET {PATH}?{QUERY}")
    for name, (rate, p50, p99) in (
        ("sitecache REST route", (ours_rate, ours_p50, ours_p99)),
        ("bare werkzeug baseline", (base_rate, base_p50, base_p99)),
    ):
        print(f"{name:<24} {rate:>9,.0f} req/s   p50 {p50:7.1f} µs   p99 {p99:7.1f} µs")
    print(f"framework cost: {base_rate / ours_rate:.2f}x the baseline's time per request")


# ---------------------------------------------------------------------- 2. route scaling
ROUTE_COUNTS = (10, 100, 1_000, 10_000)


def scaled_server(count: int) -> RestServer:
    """A REST server with ``count`` routes in ``bench/v1`` and one in ``other/v1``."""
    hooks = Hooks()
    server = RestServer(hooks, RestSettings(), DebugNotices(hooks))

    def thing(request: RestRequest) -> dict[str, Any]:
        return {"id": request["id"]}

    def routes(server: RestServer) -> None:
        server.register_rest_route(
            "other/v1",
            "/thing/(?P<id>\\d+)",
            {"methods": "GET", "callback": thing, "permission_callback": return_true},
        )
        for number in range(count - 1):
            server.register_rest_route(
                "bench/v1",
                f"/things-{number}/(?P<id>\\d+)",
                {
                    "methods": "GET",
                    "callback": thing,
                    "permission_callback": return_true,
                    "args": {"id": {"type": "integer", "minimum": 1}},
                },
            )

    hooks.add_action("rest_api_init", routes)
    server.ensure_initialized()
    return server


def dispatch_cost(server: RestServer, route: str, run: int, calls: int = 1000) -> float:
    """Microseconds per match + dispatch of ``GET route/<id>`` over ``calls`` calls.

    Every call asks for another id, so no path is seen twice (the registry keeps the candidate
    routes of recent paths: this measures the index itself, not that memo).
    """
    paths = [f"{route}/{run * calls + number + 1}" for number in range(calls)]
    start = time.perf_counter()
    for path in paths:
        response = server.dispatch(RestRequest("GET", path))
    elapsed = time.perf_counter() - start
    assert response.get_status() == 200, response.get_data()
    return elapsed / calls * 1e6


def route_scaling(runs: int = 9) -> None:
    """Part 2: the cost of match + dispatch as the number of routes grows (the best of
    ``runs`` runs per size, the sizes interleaved so that machine noise hits them alike)."""
    print("\n== 2. In process: route match + dispatch by number of registered routes (goal ≤ 1.2x)")
    servers = {count: scaled_server(count) for count in ROUTE_COUNTS}
    crowded = dict.fromkeys(ROUTE_COUNTS, float("inf"))
    other = dict.fromkeys(ROUTE_COUNTS, float("inf"))
    for run in range(runs):
        for count, server in servers.items():
            cost = dispatch_cost(server, f"/bench/v1/things-{count - 2}", run)
            crowded[count] = min(crowded[count], cost)
            other[count] = min(other[count], dispatch_cost(server, "/other/v1/thing", run))
    print(f"{'routes':>7}  {'last of bench/v1':>17}  {'ratio':>6}  {'other/v1':>9}  {'ratio':>6}")
    first = ROUTE_COUNTS[0]
    for count in ROUTE_COUNTS:
        print(
            f"{count:>7,}  {crowded[count]:>14.1f} µs  {crowded[count] / crowded[first]:>5.2f}x"
            f"  {other[count]:>6.1f} µs  {other[count] / other[first]:>5.2f}x"
        )


# ---------------------------------------------------------------------- 3. under gunicorn
SETTINGS_STANDIN: dict[str, Any] = {
    "enabled": True,
    "max_age": 3600,
    "stale_while_revalidate": 10,
    "gc_interval": 600,
    "compression": True,
    "known_users": "bypass",
    "cache_query_strings": False,
    "ignored_query_params": ["utm_source", "utm_medium", "utm_campaign", "fbclid", "gclid"],
    "rejected_uris": [],
    "rejected_user_agents": [],
    "rejected_cookies": [],
    "mobile": False,
    "mobile_user_agents": ["Android", "iPhone", "iPad", "Mobile"],
    "cache_404": False,
    "use_304": True,
    "lock_down": False,
    "clear_on_post_edit": False,
    "refresh_single_only_on_comments": False,
    "pages": {
        "search": True,
        "feed": True,
        "category": False,
        "home": False,
        "frontpage": False,
        "tag": False,
        "archives": False,
        "pages": False,
        "single": False,
        "author": False,
    },
    "preload_interval": 0,
    "preload_posts": "all",
    "preload_taxonomies": True,
    "static_files": False,
    "debug": False,
    "storage": "files",
    "cache_path": "/var/lib/sitecache/pages",
}
"""What the stand-in ``site-cache/v1/settings`` route answers (CACHE_API.md's settings)."""


def plugin(app: App) -> None:
    """The benchmark's plugin: the stand-in ``site-cache/v1/settings`` route (admins only)."""

    def settings(request: RestRequest) -> dict[str, Any]:
        return dict(SETTINGS_STANDIN)

    def routes(server: RestServer) -> None:
        server.register_rest_route(
            "site-cache/v1",
            "/settings",
            {"methods": "GET", "callback": settings, "permission_callback": require_site_admin},
        )

    app.hooks.add_action("rest_api_init", routes)


_CANNED: dict[str, tuple[str, list[tuple[str, str]], bytes]] = {}


def bare_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """The baseline: a bare WSGI app answering each scenario with sitecache's captured answer."""
    if not _CANNED:
        with open(os.environ["REST_BENCH_CANNED"], encoding="utf-8") as source:
            for key, (status, headers, body) in json.load(source).items():
                _CANNED[key] = (status, [tuple(pair) for pair in headers], body.encode("latin-1"))
    key = canned_key(environ["PATH_INFO"], "HTTP_AUTHORIZATION" in environ)
    status, headers, body = _CANNED[key]
    start_response(status, headers)
    return [body]


def canned_key(path: str, authorized: bool) -> str:
    return f"{path} {'auth' if authorized else 'anon'}"


SCENARIOS = (
    # name, path, authorized, goal
    ("API index", "/site-json/", False, 0.5),
    (
        "app-password GET users/me/application-passwords",
        "/site-json/site/v2/users/me/application-passwords",
        True,
        0.6,
    ),
    (
        "401 users/me/application-passwords",
        "/site-json/site/v2/users/me/application-passwords",
        False,
        0.7,
    ),
    (
        "app-password GET site-cache/v1/settings (stand-in)",
        "/site-json/site-cache/v1/settings",
        True,
        0.5,
    ),
)
_HOP_HEADERS = {"date", "server", "connection", "transfer-encoding"}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fetch(
    port: int, path: str, authorization: str | None
) -> tuple[int, str, list[tuple[str, str]], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "GET", path, headers={"Authorization": authorization} if authorization else {}
        )
        answer = connection.getresponse()
        return answer.status, answer.reason, answer.getheaders(), answer.read()
    finally:
        connection.close()


class Gunicorn:
    """One gunicorn (2 sync workers) serving ``target`` on a free loopback port."""

    def __init__(self, target: str, environment: dict[str, str], log: Path) -> None:
        self.port = free_port()
        command = [
            sys.executable, "-m", "gunicorn",
            "--bind", f"127.0.0.1:{self.port}",
            "--workers", "2",
            "--worker-class", "sync",
            "--chdir", str(REPOSITORY),
            target,
        ]  # fmt: skip
        env = {**os.environ, **environment}
        env["PYTHONPATH"] = os.pathsep.join([str(REPOSITORY), str(REPOSITORY / "bench")])
        with log.open("wb") as handle:
            self.process = subprocess.Popen(  # noqa: S603 - a fixed command
                command, stdout=handle, stderr=subprocess.STDOUT, env=env
            )
        self.log = log
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited early:\n{log.read_text()}")
            try:
                fetch(self.port, "/site-json/", None)
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"gunicorn did not answer:\n{log.read_text()}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def load_wrk(port: int, path: str, authorization: str | None, seconds: float) -> float:
    command = ["wrk", "-t2", "-c32", f"-d{seconds:g}s"]
    if authorization:
        command += ["-H", f"Authorization: {authorization}"]
    output = subprocess.run(  # noqa: S603 - a fixed command
        [*command, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True
    ).stdout
    found = re.search(r"Requests/sec:\s*([\d.]+)", output)
    if found is None:
        raise RuntimeError(f"wrk failed:\n{output}")
    return float(found.group(1))


def load_python(port: int, path: str, authorization: str | None, seconds: float) -> float:
    """A bounded load generator: 16 threads, one connection per request, for ``seconds``."""
    deadline = time.monotonic() + seconds
    counts = [0] * 16

    def worker(slot: int) -> None:
        while time.monotonic() < deadline:
            fetch(port, path, authorization)
            counts[slot] += 1

    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(16)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.monotonic() - start)


def in_process_costs(
    config: Path, canned_file: Path, authorization: str
) -> dict[str, tuple[float, float]]:
    """Microseconds per request of each scenario with the two apps called in process (best of
    seven runs of 300): the same requests without sockets, gunicorn or the load generator,
    which tells what is left of the application's own cost when the machine is noisy."""
    os.environ["REST_BENCH_CANNED"] = str(canned_file)
    _CANNED.clear()
    app = create_app(config)
    costs: dict[str, tuple[float, float]] = {}
    for name, path, authorized, _ in SCENARIOS:
        environ = scenario_environ(path, authorization if authorized else None)
        best: list[float] = []
        for target in (bare_app, app):
            fastest = float("inf")
            for _ in range(7):
                start = time.perf_counter()
                for _ in range(300):
                    answer = target(dict(environ), lambda *args: None)
                    b"".join(answer)
                    close = getattr(answer, "close", None)
                    if close is not None:
                        close()
                fastest = min(fastest, (time.perf_counter() - start) / 300)
            best.append(fastest * 1e6)
        costs[name] = (best[0], best[1])
    app.auth.store.close()
    return costs


def make_site(root: Path) -> tuple[Path, str]:
    """The benchmark's site under ``root``: an administrator with an application password and
    the stand-in route (`plugin`). Returns its configuration file and the ``Authorization``
    header value of the application password."""
    data_dir = root / "var"
    setup = create_app({"data_dir": str(data_dir), "password_hash_cost": 1024})
    admin = setup.auth.users.create("admin", "bench-password", role="administrator")
    password, _ = setup.auth.app_passwords.create(admin, "bench")
    setup.auth.store.close()
    config = root / "sitecache.toml"
    config.write_text(
        f'plugins = ["rest_bench:plugin"]\ndata_dir = "{data_dir}"\n', encoding="utf-8"
    )
    return config, "Basic " + base64.b64encode(f"admin:{password}".encode()).decode()


def scenario_environ(path: str, authorization: str | None) -> dict[str, Any]:
    """The WSGI environ of one scenario's request (from the loopback, as wrk's)."""
    headers = {"Authorization": authorization} if authorization else {}
    return EnvironBuilder(
        path=path, headers=headers, environ_base={"REMOTE_ADDR": "127.0.0.1"}
    ).get_environ()


def under_gunicorn(seconds: float, rounds: int) -> None:
    """Part 3: sitecache and the bare WSGI app under the same gunicorn settings."""
    load = load_wrk if shutil.which("wrk") else load_python
    tool = "wrk -t2 -c32" if load is load_wrk else "Python load generator (16 threads)"
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        config, authorization = make_site(root)
        ours = Gunicorn(
            "sitecache.app:create_app()", {"SITECACHE_CONFIG": str(config)}, root / "ours.log"
        )
        bare: Gunicorn | None = None
        try:
            canned: dict[str, Any] = {}
            for name, path, authorized, _ in SCENARIOS:
                status, reason, headers, body = fetch(
                    ours.port, path, authorization if authorized else None
                )
                expected = 401 if name.startswith("401") else 200
                assert status == expected, (name, status, body)
                kept = [(key, value) for key, value in headers if key.lower() not in _HOP_HEADERS]
                canned[canned_key(path, authorized)] = (
                    f"{status} {reason}",
                    kept,
                    body.decode("latin-1"),
                )
            canned_file = root / "canned.json"
            canned_file.write_text(json.dumps(canned), encoding="utf-8")
            in_process = in_process_costs(config, canned_file, authorization)
            bare = Gunicorn(
                "rest_bench:bare_app", {"REST_BENCH_CANNED": str(canned_file)}, root / "bare.log"
            )
            print(
                f"\n== 3. Under gunicorn (2 sync workers each), {tool}, {rounds} alternated"
                f" rounds of {seconds:g} s per side"
            )
            print(
                "   site-cache/v1/settings is a STAND-IN registered by this benchmark"
                " (manage_options, settings-sized object): the real route is not built yet."
            )
            print(
                f"{'scenario':<52} {'bytes':>6} {'bare req/s':>11} {'ours req/s':>11}"
                f" {'ratio':>6} {'goal':>6}         {'in process: bare':>16}  {'ours':>8}"
            )
            for name, path, authorized, goal in SCENARIOS:
                auth = authorization if authorized else None
                load(bare.port, path, auth, 1)  # warm up both
                load(ours.port, path, auth, 1)
                theirs: list[float] = []
                mine: list[float] = []
                for number in range(rounds):
                    first, second = (bare, ours) if number % 2 == 0 else (ours, bare)
                    for server in (first, second):
                        rate = load(server.port, path, auth, seconds)
                        (theirs if server is bare else mine).append(rate)
                base_rate = statistics.mean(theirs)
                our_rate = statistics.mean(mine)
                ratio = our_rate / base_rate
                size = len(canned[canned_key(path, authorized)][2])
                verdict = "ok" if ratio >= goal else "MISSED"
                bare_cost, our_cost = in_process[name]
                print(
                    f"{name:<52} {size:>6} {base_rate:>11,.0f} {our_rate:>11,.0f}"
                    f" {ratio:>5.3f}x {goal:>4.1f}x {verdict:<6}"
                    f" {bare_cost:>13.1f} µs {our_cost:>6.1f} µs"
                )
        finally:
            ours.stop()
            if bare is not None:
                bare.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement under gunicorn")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds per scenario")
    parser.add_argument(
        "--parts", default="123", help="which parts to run (1 route, 2 scaling, 3 gunicorn)"
    )
    options = parser.parse_args()
    print(f"Python {sys.version.split()[0]}")
    if "1" in options.parts:
        inprocess_route()
    if "2" in options.parts:
        route_scaling()
    if "3" in options.parts:
        under_gunicorn(options.seconds, options.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
