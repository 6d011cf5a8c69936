"""The WSGI applications `cache_bench.py` serves with gunicorn, configured by environment.

- `cached_app()`: `PageCache` around `origin` (a fixed ~20 KB HTML page with ``Cache-Tag``),
  on the storage named by ``SITECACHE_BENCH_BACKEND`` (``disk``: a `DiskStorage` under
  ``SITECACHE_BENCH_PATH``; ``redis``: a `RedisStorage` on ``SITECACHE_BENCH_REDIS_URL`` in the
  namespace ``SITECACHE_BENCH_NAMESPACE``; ``memory``).
- `tagged_app()`: the same page as `origin` with a ``Cache-Tag`` of ten tags
  (`tagged_origin`), no cache: "the same app with caching off" of the miss benchmark
  (`miss_bench.py`); `cached_app("tagged")` is it behind `PageCache`.
- `bare_app()`: the ceiling. It replays, with no logic at all, the status, headers and bytes
  of a real cache hit recorded by the benchmark in the JSON file ``SITECACHE_BENCH_REPLAY``
  (one answer for clients that accept gzip, one for the others), so that both sides send the
  same bytes and the same headers through the same gunicorn.

Serve with ``python -m gunicorn -w 2 -k sync 'bench.cache_apps:cached_app()'`` from the
repository root.
"""

from __future__ import annotations

import base64
import json
import os
import random
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from sitecache.cache import DiskStorage, MemoryStorage, PageCache, Storage

try:
    from bench import jinja_page
except ImportError:  # run with bench/ itself on the path, as the benchmark scripts are
    import jinja_page  # type: ignore[no-redef]

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

_WORDS = (  # noqa: SIM905 - a word list reads better as prose
    "cache page server request response header body static dynamic visitor editor post "
    "comment archive category tag feed theme plugin option query index latency worker "
    "process memory disk network proxy origin purge stale fresh expire render template "
    "the a of and to in is for on with as by at from that this it be are was"
).split()


def make_page(size: int = 20_000, seed: int = 7) -> bytes:
    """A deterministic HTML page of about ``size`` bytes: head, navigation, article, footer."""
    rng = random.Random(seed)  # noqa: S311 - filler text, not security

    def sentence() -> str:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 18))]
        return " ".join(words).capitalize() + "."

    head = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>A page worth caching &ndash; Bench Site</title>\n"
        '<link rel="stylesheet" href="/static/site.css?ver=1.4.2">\n'
        '<link rel="alternate" type="application/rss+xml" href="/feed/">\n</head>\n'
        '<body class="home blog">\n<header><h1><a href="/">Bench Site</a></h1>\n<nav><ul>\n'
    )
    parts = [head]
    parts.extend(
        f'<li><a href="/category/{word}/">{word.title()}</a></li>\n' for word in _WORDS[:12]
    )
    parts.append("</ul></nav></header>\n<main>\n")
    post = 0
    while sum(len(part) for part in parts) < size - 400:
        post += 1
        parts.append(
            f'<article id="post-{post}" class="post type-post status-publish">\n'
            f'<h2><a href="/{2026}/11/post-{post}/">{sentence()}</a></h2>\n'
            f'<p class="meta">Posted on <time datetime="2026-11-{post % 28 + 1:02d}">'
            f"November {post % 28 + 1}, 2026</time> by editor</p>\n"
        )
        parts.extend(f"<p>{' '.join(sentence() for _ in range(4))}</p>\n" for _ in range(3))
        parts.append("</article>\n")
    parts.append(
        "</main>\n<footer><p>&copy; 2026 Bench Site. Proudly served from a page cache.</p>"
        "</footer>\n</body>\n</html>\n"
    )
    return "".join(parts).encode("utf-8")


PAGE = make_page()


def origin(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """The cached application: the same page on every path, tagged for purges."""
    start_response(
        "200 OK",
        [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(PAGE))),
            ("Cache-Tag", "front-page, post-42"),
        ],
    )
    return [PAGE]


#: ten purge tags, as a post page of the site carries (post, author, terms, archives)
TAGS = ", ".join(
    ["front-page", "post-42", "author-3", "category-7", "category-12"]
    + [f"term-{number}" for number in (4, 9, 15, 21, 30)]
)


def tagged_origin(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """`origin` with a ``Cache-Tag`` of ten tags (`TAGS`)."""
    start_response(
        "200 OK",
        [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(PAGE))),
            ("Cache-Tag", TAGS),
        ],
    )
    return [PAGE]


#: The applications `cached_app` may put behind the cache, by name (``jinja``: the rendered
#: page of the peers table, `jinja_page.origin`).
ORIGINS: dict[str, WsgiApp] = {
    "origin": origin,
    "tagged": tagged_origin,
    "jinja": jinja_page.origin,
}


def open_bench_storage() -> Storage:
    """The storage the environment names (see the module docstring)."""
    backend = os.environ.get("SITECACHE_BENCH_BACKEND", "memory")
    if backend == "disk":
        return DiskStorage(os.environ["SITECACHE_BENCH_PATH"])
    if backend == "redis":
        from sitecache.cache.storage.redis import RedisStorage

        return RedisStorage(
            os.environ.get("SITECACHE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/15"),
            os.environ.get("SITECACHE_BENCH_NAMESPACE", "bench"),
        )
    return MemoryStorage()


def cached_app(name: str = "origin") -> WsgiApp:
    """`PageCache` around the origin called ``name`` (`ORIGINS`) on the configured storage
    (loopback hosts only)."""
    return PageCache(ORIGINS[name], open_bench_storage())


def tagged_app() -> WsgiApp:
    """`tagged_origin` alone: the cached app of the miss benchmark with caching off."""
    return tagged_origin


def bare_app() -> WsgiApp:
    """A WSGI app replaying a recorded hit: same status, headers and bytes, no logic."""
    with open(os.environ["SITECACHE_BENCH_REPLAY"], encoding="utf-8") as handle:
        recorded = json.load(handle)

    def answer(name: str) -> tuple[str, list[tuple[str, str]], list[bytes]]:
        item = recorded[name]
        headers = [(str(header), str(value)) for header, value in item["headers"]]
        return str(item["status"]), headers, [base64.b64decode(item["body"])]

    plain_status, plain_headers, plain_body = answer("identity")
    gzip_status, gzip_headers, gzip_body = answer("gzip")

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if "gzip" in environ.get("HTTP_ACCEPT_ENCODING", ""):
            start_response(gzip_status, gzip_headers)
            return gzip_body
        start_response(plain_status, plain_headers)
        return plain_body

    return app


# ---------------------------------------------------------------------- the demo site (#18)
def fill_site(data_dir: str) -> int:
    """Fill ``data_dir`` with the demo content (`sitecache.site.demo.fill_demo`) for
    `site_app`; how many pages `site_pages` then finds."""
    from sitecache.app import create_app
    from sitecache.site.demo import fill_demo

    app = create_app({"data_dir": data_dir, "cache_timers": False})
    fill_demo(app.content, app.auth.users)
    return len(site_pages(app))


def site_pages(app: Any) -> list[str]:
    """The paths of the demo site's pages: home, every post and page, term archives."""
    return [urlsplit(url).path or "/" for url in app.site.preload_urls(None, True)]


def site_app(cached: str = "on") -> WsgiApp:
    """The realistic origin of the miss benchmark: the project's own demo site (data under
    ``SITECACHE_BENCH_SITE_DIR``, filled by `fill_site`), its pages rendered from SQLite
    through templates (no ``site_url``: the cache keys loopback hosts by port), behind
    `PageCache` on the configured storage (``cached="on"``) or alone (``"off"``: the same app
    with caching off, ``App._serve``).

    Request ``/<anything>/<n>`` is answered with the site's page number ``n`` (modulo their
    count; home without a number), so the load generator's new paths are each a miss of the
    cache, yet each renders a real page of the site: a post, a page or an archive.
    """
    from sitecache.app import create_app

    backend = os.environ.get("SITECACHE_BENCH_BACKEND", "disk")
    config: dict[str, Any] = {
        "data_dir": os.environ["SITECACHE_BENCH_SITE_DIR"],
        "cache_timers": False,
        "cache_backend": backend,
    }
    if backend == "redis":
        config["redis_url"] = os.environ.get("SITECACHE_BENCH_REDIS_URL", "")
        config["cache_namespace"] = os.environ.get("SITECACHE_BENCH_NAMESPACE", "bench")
    app = create_app(config)
    pages = site_pages(app)
    serve = app._serve

    def origin(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        last = str(environ.get("PATH_INFO", "")).rstrip("/").rsplit("/", 1)[-1]
        page = pages[int(last) % len(pages)] if last.isdigit() else "/"
        return serve({**environ, "PATH_INFO": page}, start_response)

    if cached == "off":
        return origin
    return PageCache(origin, engine=app.cache.engine)
