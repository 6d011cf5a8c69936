"""An application plugin for the cache e2e suite: many slow pages for the preload to visit."""

from __future__ import annotations

import time
from typing import Any

from werkzeug.wrappers import Request, Response

from sitecache.app import App

PAGES = 300
DELAY = 0.01


def activate(app: App) -> None:
    """Serve ``/e2e-page/<n>`` (each rendering takes `DELAY` seconds) and preload them."""
    paths = [f"/e2e-page/{number}" for number in range(PAGES)]

    def page(request: Request) -> Response:
        time.sleep(DELAY)
        return Response(
            f"<html><body>{request.path}{'.' * 400}</body></html>", mimetype="text/html"
        )

    for path in paths:
        app.views[path] = page

    def urls(found: list[str], settings: Any) -> list[str]:
        return [*found, *paths]

    app.hooks.add_filter("cache_preload_urls", urls)
