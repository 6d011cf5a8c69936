"""Where the REST benchmark's requests spend their time, in process (#18).

``python bench/rest_profile.py [--requests N] [--top K] [SCENARIO ...]`` builds the site of
``rest_bench.py`` part 3 (`rest_gunicorn`: an administrator with an application password) and
calls the application as a WSGI callable with a prebuilt environ for each scenario (all by
default; a scenario is named by a word of its name: ``index``, ``401``, ``settings``,
``app-password``). For each it prints the cost per request without a profiler (best of seven
runs of 300), then a cProfile run of N requests: the profiled time per area of the code (each
function's own time, by the file it lives in) and the functions with the most own time. A
profiler charges every call, so the shares lean toward code that makes many small calls; the
unprofiled cost is the figure to compare.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rest_gunicorn import SCENARIOS, make_site, scenario_environ

from sitecache.app import create_app

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

AREAS: tuple[tuple[str, str], ...] = (
    ("sitecache/rest/http", "serving: request, headers, response (rest/http*.py)"),
    ("sitecache/rest/json_encoding", "JSON encoding"),
    ("sitecache/rest/index", "API index"),
    ("sitecache/rest/server", "dispatch (rest/server.py)"),
    ("sitecache/rest/request", "request object and arguments (rest/request.py)"),
    ("sitecache/rest/", "rest, other (routes, responses, links, CORS)"),
    ("sitecache/hooks", "filters (hooks.py)"),
    ("sitecache/schema", "schema: validation, sanitizing, context"),
    ("sitecache/auth", "auth: authentication, permissions, handlers"),
    ("sitecache/cache", "page cache middleware"),
    ("sitecache/", "sitecache, other (app.py, errors)"),
    ("werkzeug", "werkzeug"),
    ("sqlite3", "database (sqlite3)"),
    ("json", "json (stdlib)"),
)
"""File-path fragment → area, first match wins."""


def area_of(filename: str, function: str) -> str:
    """The area a profiled function belongs to."""
    where = f"{filename} {function}"
    for fragment, area in AREAS:
        if fragment in where:
            return area
    return "Python built-ins and the rest"


def request_once(app: WsgiApp, environ: dict[str, Any]) -> None:
    answer = app(dict(environ), lambda *args: None)
    b"".join(answer)
    close = getattr(answer, "close", None)
    if close is not None:
        close()


def cost(app: WsgiApp, environ: dict[str, Any]) -> float:
    """Microseconds per request, best of seven runs of 300."""
    fastest = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(300):
            request_once(app, environ)
        fastest = min(fastest, (time.perf_counter() - start) / 300)
    return fastest * 1e6


def profile(app: WsgiApp, environ: dict[str, Any], requests: int, top: int) -> None:
    """Print the profiled time per area and the ``top`` functions by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(requests):
        request_once(app, environ)
    profiler.disable()
    stats = pstats.Stats(profiler)
    rows: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    areas: dict[str, float] = {}
    calls = 0
    for (filename, _line, function), (_, ncalls, own, _cumulative, _) in rows.items():
        area = area_of(filename, function)
        areas[area] = areas.get(area, 0.0) + own
        calls += ncalls
    total = sum(areas.values())
    print(f"   profiled: {calls / requests:,.0f} calls per request")
    for area, seconds in sorted(areas.items(), key=lambda item: -item[1]):
        print(f"   {seconds / total:6.1%}  {area}")
    print(f"   top {top} functions by own time (share of profiled time, calls per request):")
    ranked = sorted(rows.items(), key=lambda item: -item[1][2])[:top]
    for (filename, line, function), (_, ncalls, own, _cumulative, _) in ranked:
        place = filename.split("site-packages/")[-1].split("f-rest/")[-1]
        print(f"   {own / total:6.1%} {ncalls / requests:6.1f}  {function} ({place}:{line})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="profiled requests")
    parser.add_argument("--top", type=int, default=15, help="functions listed per scenario")
    parser.add_argument("scenarios", nargs="*", help="words naming the scenarios (default all)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        config, authorization = make_site(Path(temporary))
        app = create_app(config, cache_timers=False)
        for name, path, authorized, _ in SCENARIOS:
            if options.scenarios and not any(word in name for word in options.scenarios):
                continue
            environ = scenario_environ(path, authorization if authorized else None)
            request_once(app, environ)  # the first request fires rest_api_init
            print(f"== {name}: {cost(app, environ):.1f} µs per request (no profiler)")
            profile(app, environ, options.requests, options.top)
        app.auth.store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
