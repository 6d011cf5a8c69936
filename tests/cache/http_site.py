"""A small site with a changeable page, behind `PageCache`, for the end-to-end tests of HTTP
semantics under gunicorn (``tests.cache.http_site:app``).

``GET /page/`` answers the page's current version with ``Cache-Control: max-age=600`` and an
``ETag``; ``POST /page/`` makes a new version (kept in the file ``$HTTP_SITE_STATE``, shared by
every worker) and answers ``303 See Other``; ``GET /hold/?s=0.5`` keeps its worker busy that
long (a query string: never cached), so that a test can have the other worker answer. Every
answer says which worker process sent it (``X-Served-By``). The cache is a disk cache in
``$HTTP_SITE_CACHE``, for loopback hosts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sitecache.cache import DiskStorage, PageCache

STATE = Path(os.environ.get("HTTP_SITE_STATE", "http-site-state"))


def version() -> int:
    """The page's current version (1 until a POST changes it)."""
    try:
        return int(STATE.read_text(encoding="ascii"))
    except (OSError, ValueError):
        return 1


def origin(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    """The page, or a change of it."""
    if environ["PATH_INFO"] == "/hold/":
        time.sleep(float(environ.get("QUERY_STRING", "s=0.5").partition("=")[2] or 0.5))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"held"]
    if environ["REQUEST_METHOD"] == "POST":
        new = STATE.with_suffix(".new")
        new.write_text(str(version() + 1), encoding="ascii")
        new.replace(STATE)
        start_response("303 See Other", [("Location", "/page/"), ("Content-Length", "0")])
        return []
    current = version()
    start_response(
        "200 OK",
        [
            ("Content-Type", "text/html"),
            ("Cache-Control", "max-age=600"),
            ("ETag", f'"v{current}"'),
        ],
    )
    return [f"<p>version {current}</p>".encode()]


cache = PageCache(origin, DiskStorage(os.environ.get("HTTP_SITE_CACHE", "http-site-cache")))


def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    """The cached site, each answer naming the worker that sent it."""

    def served(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        return start_response(status, [*headers, ("X-Served-By", str(os.getpid()))], exc_info)

    return cache(environ, served)
