"""The ``site-cache/v1`` management API mounted under ``/cache-admin`` of an existing site.

The existing site (here a small WSGI app; a Flask or Django application alike) is cached by a
`PageCache` that shares its engine with a sitecache application mounted with werkzeug's
``DispatcherMiddleware``: the management routes, their settings, stats, listing and purges act
on the very cache the site is served from, and the cache's timers (GC, preload) run on it.
Only the sitecache application's REST API, its login and logout pages and its account pages
(``/site-admin/``: the account, the REST nonce, the cache dashboard, the application
authorization screen) are reachable under the mount; they build their links, form actions and
redirects from the mount point, so every one of them stays under ``/cache-admin``.

Set up the data directory once (its administrator, then an application password)::

    export SITECACHE_DATA_DIR=var/mounted SITECACHE_CONFIG=...   # as for `sitecache serve`
    sitecache init
    sitecache app-password create admin --name ops

then serve ``gunicorn --bind HOST:PORT examples.mounted_api:application`` and call, e.g.::

    curl -u 'admin:xxxx xxxx ...' $SITE/cache-admin/site-json/site-cache/v1/stats
    curl -u 'admin:xxxx xxxx ...' -H 'Content-Type: application/json' \\
         -d '{"tags": ["home"]}' $SITE/cache-admin/site-json/site-cache/v1/cache

A browser (or a script in it) uses the session cookie instead of an application password:

1. ``GET /cache-admin/login`` shows the login form; it posts to ``/cache-admin/login``, which
   sets the session cookie and redirects to the account page, ``/cache-admin/site-admin/``
   (the cache dashboard is at ``/cache-admin/site-admin/cache``);
2. ``GET /cache-admin/site-admin/rest-nonce`` (with the cookie) answers a ``site_rest`` nonce;
3. a request to ``/cache-admin/site-json/site-cache/v1/...`` with the cookie and the nonce in
   the ``X-Site-Nonce`` header acts as the logged-in user (without the nonce it is anonymous).

The session cookie's path is ``/``: while logged in, the existing site's pages bypass the cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from werkzeug.middleware.dispatcher import DispatcherMiddleware

from sitecache import create_app
from sitecache.app import App
from sitecache.cache import PageCache, cache_headers
from sitecache.cache.capture import StartResponse, WSGIApp

#: Where the management API is mounted.
MOUNT = "/cache-admin"
#: The paths of the mounted application that are reachable (prefixes): its REST API, login,
#: logout and account pages (the account, its nonce, the cache dashboard, authorization).
REACHABLE = ("/site-json/", "/login", "/logout", "/site-admin/")


def existing_site(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """The site that was there first: a home page tagged ``home``, other pages ``page``."""
    path = environ.get("PATH_INFO", "/")
    tags = ["home"] if path == "/" else ["page"]
    body = f"<h1>Existing site</h1><p>{'home' if path == '/' else 'a page'}</p>".encode()
    headers = [("Content-Type", "text/html; charset=utf-8"), *cache_headers(tags=tags)]
    start_response("200 OK", headers)
    return [body]


def only_the_api(admin: App) -> WSGIApp:
    """``admin`` answering only under `REACHABLE` (its front pages are a 404 here)."""

    def mounted(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path.startswith(REACHABLE) or path + "/" in REACHABLE:
            return admin(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"Not Found"]

    return mounted


def build(admin: App) -> DispatcherMiddleware:
    """The existing site, cached on ``admin``'s cache engine, with ``admin`` under `MOUNT`."""
    site = PageCache(existing_site, engine=admin.cache.engine)
    return DispatcherMiddleware(site, {MOUNT: only_the_api(admin)})


# The configuration comes from the environment, as for `sitecache serve`.
application = build(create_app())
