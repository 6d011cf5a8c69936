"""Preload throughput (pages/s) on the demo site, beside a baseline: the same pages uncached.

The demo content (`sitecache.site.demo.fill_demo`) is loaded; a preload (`Preloader`, the code
``POST /site-cache/v1/preload`` runs) visits the site's own URL list (home, every post newest
first, then the category and tag archives) in-process through the page cache on the default
disk storage, storing every page with its gzip copy. The baseline renders the same URLs by
calling the uncached site directly: what a preload cannot avoid. Both run in the same process,
alternating for several rounds; the best round of each counts.

Goal (issue #8): at least 200 pages/s on the 2-core development machine. WP Super Cache
preloads one URL per second by design.

Run: ``make bench`` or ``python bench/preload_bench.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time

from sitecache.app import App, create_app
from sitecache.cache.api.preload import anonymous_get
from sitecache.site.demo import fill_demo

ROUNDS = 3
GOAL = 200.0


def preload_round(app: App, total: int) -> float:
    app.cache.engine.purge_all()
    preloader = app.cache_api.preloader
    started = time.perf_counter()
    progress = preloader.start()
    assert progress["running"], progress
    preloader.wait()
    elapsed = time.perf_counter() - started
    final = preloader.progress()
    assert (final["done"], final["failed"]) == (total, 0), final
    return elapsed


def baseline_round(app: App, urls: list[str]) -> float:
    started = time.perf_counter()
    for url in urls:
        answer = anonymous_get(app.cache.app, url, "http://bench.local", "bench")
        assert answer.status == 200, (url, answer.status)
    return time.perf_counter() - started


def main() -> int:
    with tempfile.TemporaryDirectory() as data_dir:
        app = create_app(
            {
                "data_dir": data_dir,
                "site_url": "http://bench.local",
                "password_hash_cost": 1024,
                "cache_timers": False,
            }
        )
        summary = fill_demo(app.content, app.auth.users)
        urls = app.cache_api.preload_urls()
        preload_times: list[float] = []
        baseline_times: list[float] = []
        for _ in range(ROUNDS):
            baseline_times.append(baseline_round(app, urls))
            preload_times.append(preload_round(app, len(urls)))
        entries = app.cache.engine.stats()["entries"]["total"]
        assert entries == len(urls), (entries, len(urls))
    preload_rate = len(urls) / min(preload_times)
    baseline_rate = len(urls) / min(baseline_times)
    print(f"demo site:              {summary.posts} posts, {len(urls)} URLs to preload "
          "(disk storage, gzip on)")  # fmt: skip
    print(f"render only, no cache:  {baseline_rate:8.0f} pages/s")
    print(f"preload (render+store): {preload_rate:8.0f} pages/s")
    print(f"preload / render-only:  {preload_rate / baseline_rate:8.2f}x")
    verdict = "met" if preload_rate >= GOAL else "NOT met"
    print(f"goal >= {GOAL:.0f} pages/s:    {verdict}")
    return 0 if preload_rate >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
