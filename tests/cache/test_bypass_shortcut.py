"""REST and admin GETs are bypassed by the page cache without being classified (#18,
`RequestClassifier.shortcut`), answered as the classified path answers them: the same status,
headers and body, the same counters, the same debug line; every other request is classified."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
from werkzeug.test import EnvironBuilder

from sitecache.app import App

Answer = tuple[str, list[tuple[str, str]], bytes]
WSGI = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def answer(app: WSGI, environ: dict[str, Any]) -> Answer:
    started: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        started.extend([status, headers])

    chunks = app(dict(environ), start_response)
    body = b"".join(chunks)
    close = getattr(chunks, "close", None)
    if close is not None:
        close()
    return started[0], list(started[1]), body


def counted(app: App, wsgi: WSGI, environ: dict[str, Any]) -> tuple[Answer, dict[str, int]]:
    """The answer of ``wsgi`` and what it added to the cache's outcome counters (the
    application's latency histogram, `sitecache.cache.latency`, counts every request apart)."""
    counters = app.cache.engine.counters
    before = counters.pending()
    got = answer(wsgi, environ)
    after = counters.pending()
    return got, {
        name: after[name] - before.get(name, 0)
        for name in after
        if after[name] != before.get(name, 0) and not name.startswith(("latency_le:", "latency_us"))
    }


def environ_of(method: str = "GET", path: str = "/site-json/", **options: Any) -> dict[str, Any]:
    environ = EnvironBuilder(
        method=method, path=path.lstrip("/"), base_url="http://example.org", **options
    ).get_environ()
    environ["PATH_INFO"] = path  # as sent (the builder would read "//x" as a host)
    return environ


@pytest.fixture
def app(app: App) -> App:
    app.cache.engine.counters.interval = 1e9  # no flush between the two answers compared
    return app


BASIC = {"Authorization": "Basic " + base64.b64encode(b"nobody:nothing").decode()}
REQUESTS = [
    ("GET", "/site-json/", {}),
    ("HEAD", "/site-json/", {}),
    ("GET", "/site-json/site/v2/users/me", {}),
    ("GET", "/site-json/site/v2/users/me", {"headers": BASIC}),
    ("GET", "/site-json/site/v2/nothing-here", {}),
    ("GET", "/site-json", {"query_string": "_jsonp=cb"}),
    ("GET", "/login", {}),
    ("GET", "/site-admin/", {}),
    ("GET", "/wp-json/", {}),
    ("GET", "/index.php/site-json/", {}),
    ("POST", "/site-json/site/v2/users", {"json": {}}),
    ("DELETE", "/site-json/site/v2/users/1", {}),
    ("GET", "/", {"query_string": "rest_route=/site/v2/users/me"}),
    ("GET", "//site-json/", {}),
    ("GET", "/site-jsonx", {}),
]
"""REST, login and admin requests, and some that look like them; the cache stores none."""


@pytest.mark.parametrize(("method", "path", "options"), REQUESTS)
@pytest.mark.parametrize("enabled", [True, False])
def test_the_shortcut_answers_and_counts_as_classification_does(
    app: App, method: str, path: str, options: dict[str, Any], enabled: bool
) -> None:
    app.cache.engine.update_settings({"enabled": enabled})
    shortcut = counted(app, app.cache, environ_of(method, path, **options))
    without_shortcut(app)
    classified = counted(app, app.cache, environ_of(method, path, **options))
    assert shortcut == classified


def without_shortcut(app: App) -> None:
    """Make the cache classify every request (the reference the shortcut must agree with)."""
    app.cache._classifier.shortcut = lambda environ, settings: None  # type: ignore[method-assign]


def test_rest_gets_skip_classification_and_are_counted_as_rest_or_admin(app: App) -> None:
    classified: list[Any] = []
    classifier = app.cache._classifier
    original = classifier.classify

    def spy(environ: dict[str, Any], settings: Any) -> Any:
        classified.append(environ["PATH_INFO"])
        return original(environ, settings)

    classifier.classify = spy  # type: ignore[method-assign]
    (status, headers, _), added = counted(app, app, environ_of(path="/site-json/"))
    assert status == "200 OK"
    assert ("Cache-Status", "sitecache; fwd=bypass; detail=rest_or_admin") in headers
    assert added == {"bypass": 1, "bypass:rest_or_admin": 1}
    assert classified == []
    answer(app, environ_of(path="/"))
    answer(app, environ_of("POST", "/site-json/site/v2/users", json={}))
    assert classified == ["/", "/site-json/site/v2/users"]


def test_the_shortcut_runs_the_tick_and_writes_the_debug_line(app: App, caplog: Any) -> None:
    ticks: list[float] = []
    app.cache.tick = lambda now, environ: ticks.append(now)
    app.cache.engine.update_settings({"debug": True})
    logged: list[str] = []
    app.cache.debug_logger.handlers.clear()
    app.cache.debug_logger.addHandler(_ListHandler(logged))
    answer(app, environ_of(path="/site-json/", query_string="secret=1"))
    assert len(ticks) == 1
    assert logged == ["GET /site-json/ ?secret 200 sitecache; fwd=bypass; detail=rest_or_admin"]


def test_serve_filters_see_what_the_shortcut_sends(app: App) -> None:
    seen: list[bytes] = []

    def serve_filter(body: bytes, environ: Mapping[str, Any]) -> bytes:
        seen.append(body)
        return body

    app.cache.serve_filters.append(serve_filter)
    shortcut = answer(app.cache, environ_of(path="/login"))
    without_shortcut(app)
    classified = answer(app.cache, environ_of(path="/login"))
    assert shortcut == classified
    assert len(seen) == 2


def test_only_gets_and_heads_under_a_bypass_path_take_the_short_way(app: App) -> None:
    classifier = app.cache._classifier
    settings = app.cache.engine.settings()
    assert classifier.shortcut(environ_of(path="/site-json/site/v2/posts"), settings)
    assert classifier.shortcut(environ_of("HEAD", "/login"), settings) == "rest_or_admin"
    assert classifier.shortcut(environ_of("POST", "/site-json/site/v2/posts"), settings) is None
    assert classifier.shortcut(environ_of(path="/site-jsonx"), settings) is None
    assert classifier.shortcut(environ_of(path="/", query_string="rest_route=/"), settings) is None


class _ListHandler(logging.Handler):
    """A logging handler that keeps each message."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__()
        self.messages = messages

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
