"""Preload throughput (pages/s) beside a baseline: rendering the same pages with no cache.

The demo site's front page template is served at ``PAGES`` paths. The preload (`Preloader`, the
code ``POST /site-cache/v1/preload`` runs) visits them in-process through the page cache on the
default disk storage, storing every page with its gzip copy. The baseline renders the same
pages by calling the uncached site directly (what the preload cannot avoid). Both run in the
same process, one after the other, several rounds; the best round counts.

Goal (issue #8): at least 200 pages/s on the 2-core development machine. WP Super Cache
preloads one URL per second by design.

Run: ``make bench`` or ``python bench/preload_bench.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time

from werkzeug.wrappers import Request, Response

from sitecache.app import App, create_app
from sitecache.cache.api.preload import anonymous_get

PAGES = 1000
ROUNDS = 3
GOAL = 200.0


def build(data_dir: str) -> tuple[App, list[str]]:
    app = create_app(
        {"data_dir": data_dir, "site_url": "http://example.org", "password_hash_cost": 1024}
    )
    paths = [f"/demo/{number}" for number in range(PAGES)]

    def page(request: Request) -> Response:
        response = app.site.page(app.site.render("front.html"))
        response.headers["Cache-Tag"] = f"page-{request.path.rsplit('/', 1)[1]}"
        return response

    for path in paths:
        app.views[path] = page
    app.hooks.add_filter("cache_preload_urls", lambda urls, settings: paths)
    return app, paths


def preload_round(app: App) -> float:
    app.cache.engine.purge_all()
    preloader = app.cache_api.preloader
    started = time.perf_counter()
    progress = preloader.start()
    assert progress["running"], progress
    preloader.wait()
    elapsed = time.perf_counter() - started
    final = preloader.progress()
    assert (final["done"], final["failed"]) == (PAGES, 0), final
    return elapsed


def baseline_round(app: App, paths: list[str]) -> float:
    started = time.perf_counter()
    for path in paths:
        answer = anonymous_get(app.cache.app, path, "http://example.org", "bench")
        assert answer.status == 200
    return time.perf_counter() - started


def main() -> int:
    with tempfile.TemporaryDirectory() as data_dir:
        app, paths = build(data_dir)
        preload_times: list[float] = []
        baseline_times: list[float] = []
        for _ in range(ROUNDS):
            baseline_times.append(baseline_round(app, paths))
            preload_times.append(preload_round(app))
        entries = app.cache.engine.stats()["entries"]["total"]
        assert entries == PAGES, entries
    preload_rate = PAGES / min(preload_times)
    baseline_rate = PAGES / min(baseline_times)
    print(f"pages:                 {PAGES} (demo front page template, disk storage, gzip on)")
    print(f"render only, no cache: {baseline_rate:8.0f} pages/s")
    print(f"preload (render+store):{preload_rate:8.0f} pages/s")
    print(f"preload / render-only: {preload_rate / baseline_rate:8.2f}x")
    verdict = "met" if preload_rate >= GOAL else "NOT met"
    print(f"goal >= {GOAL:.0f} pages/s:   {verdict}")
    return 0 if preload_rate >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
