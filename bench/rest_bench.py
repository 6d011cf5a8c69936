"""REST server speed, each figure a ratio against a baseline measured in the same run.

Three parts (``make bench`` or ``python bench/rest_bench.py [--seconds S] [--rounds R]``):

1. In process: ``GET /site-json/bench/v1/items/<id>?per_page=…&status=…&_fields=id,title`` with
   validated and sanitized arguments beside a plain werkzeug app that parses the same query and
   returns the same JSON. Both are called as WSGI callables with a prebuilt environ, interleaved.
2. In process: route match + dispatch at 10, 100, 1,000 and 10,000 registered routes (goal: flat,
   at most 1.2x the cost at 10 routes), for the last route registered in a crowded namespace and
   for a route of another namespace.
3. Under gunicorn (2 sync workers each): sitecache beside a bare WSGI app answering the same
   bytes, for the API index, an application-password GET and its 401, and the page cache's
   ``site-cache/v1/settings`` (`rest_gunicorn.under_gunicorn`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from typing import Any

from rest_gunicorn import under_gunicorn
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request, Response

from sitecache.app import create_app
from sitecache.hooks import Hooks
from sitecache.rest import RestRequest, RestServer, return_true
from sitecache.rest.debug import DebugNotices
from sitecache.rest.urls import RestSettings

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
