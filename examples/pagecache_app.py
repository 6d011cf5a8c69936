"""PageCache around a plain WSGI app: ``gunicorn examples.pagecache_app:app``."""

from sitecache.cache import DiskStorage, PageCache


def hello(environ, start_response):  # type: ignore[no-untyped-def]
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Cache-Tag", "home")])
    return [b"<h1>Hello</h1><p>Generated once, then served from the cache.</p>"]


app = PageCache(hello, DiskStorage("var/example-cache"), hosts=["localhost:8000", "127.0.0.1:8000"])
# Later, e.g. after an edit: app.purge_tags(["home"]) or app.purge_url("/")
