"""PageCache around a plain WSGI app: ``gunicorn --bind HOST:PORT examples.pagecache_app:app``,
or ``python examples/pagecache_app.py --host HOST --port PORT`` (werkzeug's server; default
``$HOST``/``$PORT``, else ``127.0.0.1:8000``).

Everything else comes from the environment:

- ``$PAGECACHE_HOSTS`` (comma-separated, e.g. ``example.org,www.example.org``): the hosts it
  caches; unset, only loopback names (``localhost``, ``127.0.0.1``, ``[::1]``, any port);
- ``$PAGECACHE_BACKEND``: ``disk`` (default) or ``redis``;
- ``$PAGECACHE_DIR``: where the disk backend keeps pages (``var/example-cache``);
- ``$PAGECACHE_REDIS_URL`` and ``$PAGECACHE_NAMESPACE``: the Redis backend's server
  (``redis://127.0.0.1:6379/0``) and key namespace (``pagecache-example``); every node that
  names the same ones shares one cache.

Purge from any process that opens the same storage::

    from sitecache.cache import Purger
    with Purger.open("disk", path="var/example-cache") as purger:
        purger.purge_tags(["home"])
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Sequence
from typing import Any

from sitecache.cache import PageCache, cache_control, open_storage


@cache_control(tags=["home"])
def hello(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    """The page: tagged ``home`` so that ``purge_tags(["home"])`` removes it."""
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [b"<h1>Hello</h1><p>Generated once, then served from the cache.</p>"]


def build(environ: dict[str, str] | os._Environ[str] = os.environ) -> PageCache:
    """The cached application, configured from ``environ`` (see the module docstring)."""
    hosts = [host for host in environ.get("PAGECACHE_HOSTS", "").split(",") if host] or None
    storage = open_storage(
        environ.get("PAGECACHE_BACKEND", "disk"),
        path=environ.get("PAGECACHE_DIR", "var/example-cache"),
        redis_url=environ.get("PAGECACHE_REDIS_URL", "redis://127.0.0.1:6379/0"),
        namespace=environ.get("PAGECACHE_NAMESPACE", "pagecache-example"),
    )
    return PageCache(hello, storage, hosts=hosts)


app = build()
# Later, e.g. after an edit: app.purge_tags(["home"]) or app.purge_url("/")


def listen_address(argv: Sequence[str] | None = None) -> tuple[str, int]:
    """``(host, port)`` from ``--host``/``--port``, else ``$HOST``/``$PORT``, else
    ``127.0.0.1:8000``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    arguments = parser.parse_args(argv)
    return arguments.host, arguments.port


if __name__ == "__main__":
    from werkzeug.serving import run_simple

    host, port = listen_address()
    run_simple(host, port, app)
