"""In-process speed of the content site's pages on the demo content, beside a baseline.

Each page is answered by the site itself (`app.site`, below the page cache) from a prebuilt
environ (no sockets). The baseline renders the same home page's template from data already in
memory (no routing, no database): the ratio tells what reading the content costs. The demo
fill (255 posts, ~500 comments in one transaction) is timed too.

Run: ``make bench`` or ``python bench/site_bench.py``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable

from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from sitecache.app import create_app
from sitecache.site.demo import fill_demo
from sitecache.site.targets import Listing

PAGES = ("/", "/page/7/", "/category/performance/", "/search/gzip/", "/feed/", "/sitemap.xml")


def rate(callable_: Callable[[], object], rounds: int = 5, calls: int = 200) -> float:
    """Calls per second: the median of ``rounds`` rounds of ``calls`` calls."""
    rates = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            callable_()
        rates.append(calls / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> int:
    with tempfile.TemporaryDirectory() as data_dir:
        app = create_app(
            {"data_dir": data_dir, "site_url": "http://bench.local", "cache_timers": False}
        )
        start = time.perf_counter()
        summary = fill_demo(app.content, app.auth.users)
        fill_seconds = time.perf_counter() - start

        def page(path: str) -> Callable[[], object]:
            environ = EnvironBuilder(path=path, base_url="http://bench.local").get_environ()

            def answer() -> object:
                response = app.site(Request(dict(environ)))
                assert response.status_code == 200, (path, response.status_code)
                return response.get_data()

            return answer

        urls = list(app.site.preload_urls(1, False))
        single_path = urls[1].removeprefix("http://bench.local")
        target = app.site.resolve("/", {})
        assert isinstance(target, Listing), target
        home = app.site.page(target, {})
        template = app.templates.get_template("list.html")
        context = dict(home.context)

        def baseline() -> object:
            return template.render(site_name="x", home_url="", api_root="", discovery_tags="",
                                   feed_url="", **context)  # fmt: skip

        for path in (*PAGES, single_path):  # warm up
            page(path)()
        base = rate(baseline)
        print(f"Python {sys.version.split()[0]}; demo: {summary.posts} posts, "
              f"{summary.comments} comments, filled in {fill_seconds * 1000:.0f} ms")  # fmt: skip
        print(f"{'template only (baseline)':<28} {base:>8,.0f} pages/s")
        for path in (*PAGES, single_path):
            measured = rate(page(path))
            print(f"{path:<28} {measured:>8,.0f} pages/s   {base / measured:5.2f}x the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
