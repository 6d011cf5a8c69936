"""PageCache around a plain WSGI app: ``gunicorn examples.pagecache_app:app``.

``$PAGECACHE_HOSTS`` (comma-separated, e.g. ``example.org,www.example.org``) names the hosts it
caches; unset, only loopback names (``localhost``, ``127.0.0.1``, ``[::1]``, any port) are
cached. ``$PAGECACHE_DIR`` is where pages are kept (``var/example-cache``).
"""

import os

from sitecache.cache import DiskStorage, PageCache


def hello(environ, start_response):  # type: ignore[no-untyped-def]
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Cache-Tag", "home")])
    return [b"<h1>Hello</h1><p>Generated once, then served from the cache.</p>"]


hosts = [host for host in os.environ.get("PAGECACHE_HOSTS", "").split(",") if host] or None
storage = DiskStorage(os.environ.get("PAGECACHE_DIR", "var/example-cache"))
app = PageCache(hello, storage, hosts=hosts)
# Later, e.g. after an edit: app.purge_tags(["home"]) or app.purge_url("/")
