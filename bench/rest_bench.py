"""In-process throughput and latency of a REST route, beside a bare werkzeug baseline.

The route: ``GET /site-json/bench/v1/items/<id>?per_page=…&status=…&_fields=id,title`` with
validated and sanitized arguments (integer bounds, enum, pattern) and ``_fields`` filtering.
The baseline: a plain ``werkzeug`` application that parses the same query and returns the same
JSON, with none of the REST framework. Both are called as WSGI callables with a prebuilt environ
(no sockets), interleaved, in the same run; the ratio tells what the framework costs.

Run: ``make bench`` or ``python bench/rest_bench.py``.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request, Response

from sitecache.app import create_app
from sitecache.rest import RestRequest, RestServer, return_true

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


def main() -> int:
    with tempfile.TemporaryDirectory() as data_dir:
        app = create_app({"data_dir": data_dir, "site_url": "http://bench.local"})
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
    print(f"Python {sys.version.split()[0]}; GET {PATH}?{QUERY}")
    for name, (rate, p50, p99) in (
        ("sitecache REST route", (ours_rate, ours_p50, ours_p99)),
        ("bare werkzeug baseline", (base_rate, base_p50, base_p99)),
    ):
        print(f"{name:<24} {rate:>9,.0f} req/s   p50 {p50:7.1f} µs   p99 {p99:7.1f} µs")
    print(f"framework cost: {base_rate / ours_rate:.2f}x the baseline's time per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
