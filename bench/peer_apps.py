"""Other libraries' page caches in front of the page of `cache_apps.origin`, for `cache_bench.py`.

Each factory builds a WSGI app whose view sends the very page of `cache_apps.origin` (same
bytes, ``Content-Type``, ``Content-Length`` and ``Cache-Tag``) behind a peer's cache:

- `django_app()`: Django's per-site cache (``UpdateCacheMiddleware`` then
  ``FetchFromCacheMiddleware``, settings configured in code, no other middleware) on the cache
  backend named by ``SITECACHE_BENCH_PEER_CACHE``: ``locmem`` (``LocMemCache``, per worker) or
  ``file`` (``FileBasedCache`` under ``SITECACHE_BENCH_PATH``).
- `flask_app()`: Flask with Flask-Caching's ``@cache.cached()`` on the view, on ``simple``
  (``SimpleCache``, per worker) or ``redis`` (``RedisCache`` at ``SITECACHE_BENCH_REDIS_URL``
  under the key prefix ``SITECACHE_BENCH_NAMESPACE``; `clear_redis_prefix` removes its keys).

For the peers table (`peers_bench.py`), ``SITECACHE_BENCH_ORIGIN=jinja`` makes the view render
the Jinja2 page of `jinja_page` for its path instead of sending `PAGE`, Django also caches on
``redis`` (``django.core.cache.backends.redis.RedisCache``, same URL and namespace), and
``SITECACHE_BENCH_PEER_CACHE=none`` is the same framework with no cache at all (the uncached
stack each peer is compared with).

Every render (a miss) appends one byte to the file ``SITECACHE_BENCH_RENDERS`` when it is set,
so the benchmark can check, across both workers, that the peer answers from its cache: after
warm-up, `render_count` must not grow.

Serve with ``python -m gunicorn -w 2 -k sync 'bench.peer_apps:django_app()'``.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

try:
    from bench import jinja_page
    from bench.cache_apps import PAGE
except ImportError:  # run with bench/ itself on the path, as the benchmark scripts are
    import jinja_page  # type: ignore[no-redef]
    from cache_apps import PAGE  # type: ignore[no-redef]

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

#: The headers every peer's view sends with `PAGE` (those of `cache_apps.origin`).
HEADERS = (("Cache-Tag", "front-page, post-42"), ("Content-Length", str(len(PAGE))))
CONTENT_TYPE = "text/html; charset=utf-8"
#: How long the peers keep a page (seconds): far longer than a benchmark run.
TIMEOUT = 3600


def count_render() -> None:
    """Append one byte to the render counter file, when the environment names one."""
    path = os.environ.get("SITECACHE_BENCH_RENDERS")
    if path:
        with open(path, "ab") as handle:
            handle.write(b".")


def page_for(path: str) -> tuple[bytes, tuple[tuple[str, str], ...]]:
    """The body and extra headers a peer's view sends for ``path``: `PAGE` with `HEADERS`, or
    the Jinja2 page of the path when ``SITECACHE_BENCH_ORIGIN`` is ``jinja``."""
    if os.environ.get("SITECACHE_BENCH_ORIGIN") == "jinja":
        body = jinja_page.render(path)
        return body, (("Cache-Tag", jinja_page.TAGS), ("Content-Length", str(len(body))))
    return PAGE, HEADERS


def render_count(path: Path) -> int:
    """How many renders the apps counted in ``path`` (0 before the first)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def django_caches(kind: str) -> dict[str, dict[str, Any]]:
    """The ``CACHES`` setting for ``kind`` (``locmem``, ``file``, ``redis`` or ``none``)."""
    if kind == "redis":
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": os.environ.get(
                    "SITECACHE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/15"
                ),
                "KEY_PREFIX": redis_prefix(os.environ["SITECACHE_BENCH_NAMESPACE"]),
                "TIMEOUT": TIMEOUT,
            }
        }
    if kind == "none":
        return {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    if kind == "file":
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                "LOCATION": os.environ["SITECACHE_BENCH_PATH"],
                "TIMEOUT": TIMEOUT,
            }
        }
    if kind == "locmem":
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                "LOCATION": "sitecache-bench",
                "TIMEOUT": TIMEOUT,
            }
        }
    raise ValueError(f"unknown Django cache {kind!r}: locmem or file")


def django_app(kind: str | None = None) -> WsgiApp:
    """Django's per-site cache around a view sending `PAGE` (minimal settings, in code)."""
    import django
    from django.conf import settings
    from django.core.wsgi import get_wsgi_application
    from django.http import HttpRequest, HttpResponse
    from django.urls import re_path

    def page(request: HttpRequest) -> HttpResponse:
        count_render()
        body, headers = page_for(request.path)
        response = HttpResponse(body, content_type=CONTENT_TYPE)
        for header, value in headers:
            response[header] = value
        return response

    urls = types.ModuleType("sitecache_bench_django_urls")
    urls.urlpatterns = [re_path(r"^.*$", page)]  # type: ignore[attr-defined]
    sys.modules[urls.__name__] = urls
    kind = kind or os.environ.get("SITECACHE_BENCH_PEER_CACHE", "locmem")
    middleware = [
        "django.middleware.cache.UpdateCacheMiddleware",
        "django.middleware.cache.FetchFromCacheMiddleware",
    ]
    settings.configure(
        DEBUG=False,
        SECRET_KEY="sitecache-bench-not-secret",  # noqa: S106 - no sessions, no signing
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        ROOT_URLCONF=urls.__name__,
        INSTALLED_APPS=[],
        MIDDLEWARE=[] if kind == "none" else middleware,
        CACHES=django_caches(kind),
        CACHE_MIDDLEWARE_SECONDS=TIMEOUT,
        CACHE_MIDDLEWARE_KEY_PREFIX="sitecache-bench",
        USE_TZ=True,
    )
    django.setup()
    application: WsgiApp = get_wsgi_application()
    return application


def flask_config(kind: str) -> dict[str, Any]:
    """The Flask-Caching configuration for ``kind`` (``simple`` or ``redis``)."""
    if kind == "simple":
        return {"CACHE_TYPE": "SimpleCache", "CACHE_DEFAULT_TIMEOUT": TIMEOUT}
    if kind == "redis":
        return {
            "CACHE_TYPE": "RedisCache",
            "CACHE_REDIS_URL": os.environ.get(
                "SITECACHE_BENCH_REDIS_URL", "redis://127.0.0.1:6379/15"
            ),
            "CACHE_KEY_PREFIX": redis_prefix(os.environ["SITECACHE_BENCH_NAMESPACE"]),
            "CACHE_DEFAULT_TIMEOUT": TIMEOUT,
        }
    raise ValueError(f"unknown Flask-Caching cache {kind!r}: simple or redis")


def redis_prefix(namespace: str) -> str:
    """The key prefix of Flask-Caching's entries for the run namespace ``namespace``."""
    return f"{namespace}-flask-caching:"


def flask_app(kind: str | None = None) -> WsgiApp:
    """Flask with Flask-Caching's ``@cache.cached()`` on a view sending `PAGE`."""
    from flask import Flask, Response
    from flask_caching import Cache

    app = Flask("sitecache_bench_flask")
    kind = kind or os.environ.get("SITECACHE_BENCH_PEER_CACHE", "simple")

    def page(path: str) -> Response:
        count_render()
        body, headers = page_for("/" + path)
        response = Response(body, content_type=CONTENT_TYPE)
        for header, value in headers:
            response.headers[header] = value
        return response

    # "none": no Flask-Caching at all (its NullCache would still wrap the view)
    view = page if kind == "none" else Cache(app, config=flask_config(kind)).cached()(page)
    app.add_url_rule("/", defaults={"path": ""}, view_func=view)
    app.add_url_rule("/<path:path>", view_func=view)

    return app.wsgi_app  # type: ignore[return-value]


def clear_redis_prefix(url: str, namespace: str) -> int:
    """Delete every key Flask-Caching wrote under the run's prefix; how many went."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=redis_prefix(namespace) + "*", count=500))
        return int(client.delete(*keys)) if keys else 0
    finally:
        client.close()
