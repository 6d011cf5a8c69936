"""Property: no response the cache must never store is stored or served to another.

Generated requests (methods, cookies, Authorization, query strings, forwarded hosts) meet
generated responses (status, Set-Cookie, Cache-Control, Vary, empty bodies) under generated
settings. After each exchange, an anonymous visitor asks for the same URL while the app answers
something else: unless the first exchange was storable, the visitor must get the fresh answer.

`EXCHANGES` exchanges in all (10,000 unless ``SITECACHE_PROPERTY_EXAMPLES`` says otherwise), each
against a fresh engine, storage and app, every field drawn uniformly from its row of `REQUESTS`,
`RESPONSES` and `SETTINGS` (a value listed twice is twice as likely). Hypothesis hands each
example a seeded random generator that draws `BATCH` exchanges: drawing fifteen choices per
exchange through Hypothesis cost three times what the exchange itself costs. A failure names the
exchange that failed; `check_exchange` with it reproduces it alone.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from sitecache.cache import CacheEngine, CacheRules, MemoryStorage, PageCache

EXCHANGES = int(os.environ.get("SITECACHE_PROPERTY_EXAMPLES", "10000"))
#: exchanges per Hypothesis example
BATCH = 50
#: post-password (unlock) cookies: never stored, whatever known_users says
UNLOCK_COOKIES = ("wp-postpass_1", "sitecache_postpass_1")
AUTH_COOKIES = ("sitecache_session", "wordpress_logged_in_x", "comment_author_1", *UNLOCK_COOKIES)
#: a request sends up to three of these cookies (repeats allowed)
COOKIE_NAMES = (*AUTH_COOKIES, "theme", "cart")

Table = Mapping[str, Sequence[Any]]

REQUESTS: Table = {
    "method": ("GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"),
    "path": ("/", "/a/", "/site-json/x", "/login", "/caf\u00e9/"),
    "query": ("", "", "utm_source=x", "page=2", "rest_route=/", "s=q&utm_id=1"),
    "authorization": (None, None, "Basic YTpi", "Bearer t"),
    "forwarded_host": (None, None, "evil.example", "example.org"),
    "host": ("example.org", "example.org", "evil.example"),
}
RESPONSES: Table = {
    "status": (200, 200, 200, 404, 500, 301, 204, 206),
    "set_cookie": (False, True),
    "cache_control": (
        None, None, "public, max-age=60", "private", "no-store", "no-cache", "PRIVATE"
    ),
    "vary": (None, None, "*", "Cookie", "Accept-Language", "authorization"),
    "empty": (False, True),
}  # fmt: skip
SETTINGS: Table = {
    "cache_404": (False, True),
    "known_users": ("bypass", "bypass_any_cookie", "anonymous"),
    "cache_query_strings": (False, True),
}


def draw(table: Table, rng: random.Random) -> dict[str, Any]:
    """One value of each field of ``table``."""
    return {name: rng.choice(options) for name, options in table.items()}


def draw_exchange(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A request (with its cookie names), a response and the settings."""
    request = draw(REQUESTS, rng)
    request["cookies"] = [rng.choice(COOKIE_NAMES) for _ in range(rng.randint(0, 3))]
    return request, draw(RESPONSES, rng), draw(SETTINGS, rng)


def environ_for(request: dict[str, Any]) -> dict[str, Any]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": request["method"],
        "PATH_INFO": request["path"],
        "QUERY_STRING": request["query"],
        "HTTP_HOST": request["host"],
        "SERVER_NAME": request["host"],
        "SERVER_PORT": "80",
        "wsgi.url_scheme": "http",
    }
    if request["cookies"]:
        environ["HTTP_COOKIE"] = "; ".join(f"{name}=v" for name in request["cookies"])
    if request["authorization"]:
        environ["HTTP_AUTHORIZATION"] = request["authorization"]
    if request["forwarded_host"]:
        environ["HTTP_X_FORWARDED_HOST"] = request["forwarded_host"]
    return environ


def must_never_store(
    request: dict[str, Any], response: dict[str, Any], config: dict[str, Any]
) -> bool:
    """The "never stored" list, written out independently of the guards."""
    cookies = request["cookies"]
    front_end_get = request["method"] in ("GET", "HEAD") and not request["path"].startswith(
        ("/site-json", "/login")
    )
    logged_in = any(name in AUTH_COOKIES for name in cookies)
    if logged_in and not (config["known_users"] == "anonymous" and front_end_get):
        return True
    if any(name in UNLOCK_COOKIES for name in cookies):
        return True
    control = (response["cache_control"] or "").lower()
    # Statuses other than 200 (and 404 with cache_404), and empty bodies, only with a lifetime
    # of the response's own; a partial answer never.
    explicit = "max-age" in control
    status = response["status"]
    usual = status == 200 or (status == 404 and config["cache_404"])
    return bool(
        request["authorization"]
        or request["method"] not in ("GET", "HEAD")
        or request["path"].startswith(("/site-json", "/login"))
        or "rest_route" in request["query"]
        or request["host"] != "example.org"
        or request["forwarded_host"] == "evil.example"
        or response["set_cookie"]
        or any(word in control for word in ("private", "no-store", "no-cache"))
        or (response["vary"] or "").lower() in ("*", "cookie", "authorization")
        or status == 206
        or not (usual or explicit)
        or (response["empty"] and not explicit)
    )


class ScriptedApp:
    """Answers the generated response first, then a different page for the visitor."""

    def __init__(self, response: dict[str, Any]) -> None:
        self.response = response
        self.calls = 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        self.calls += 1
        if self.calls > 1:
            start_response("200 OK", [("Content-Type", "text/html")])
            return [b"visitor page"]
        spec = self.response
        headers = [("Content-Type", "text/html")]
        if spec["set_cookie"]:
            headers.append(("Set-Cookie", "session=secret; HttpOnly"))
        if spec["cache_control"]:
            headers.append(("Cache-Control", spec["cache_control"]))
        if spec["vary"]:
            headers.append(("Vary", spec["vary"]))
        start_response(f"{spec['status']} X", headers)
        return [] if spec["empty"] else [b"first answer: private to its requester"]


def run(cache: PageCache, environ: dict[str, Any]) -> tuple[str, bytes]:
    seen: list[str] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        seen.append(status)
        return lambda data: None

    body = b"".join(cache(environ, start_response))
    return seen[0], body


def check_exchange(
    request: dict[str, Any], response: dict[str, Any], config: dict[str, Any]
) -> None:
    """One exchange, then the anonymous visitor, against a fresh engine, storage and app."""
    app = ScriptedApp(response)
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})))
    assert isinstance(engine.update_settings(config), dict)
    cache = PageCache(app, engine=engine)
    run(cache, environ_for(request))
    forbidden = must_never_store(request, response, config)
    if forbidden:
        assert engine.storage.summary(engine.clock()).total == 0
    visitor = {**request, "method": "GET", "cookies": [], "authorization": None,
               "forwarded_host": None, "host": "example.org"}  # fmt: skip
    _, body = run(cache, environ_for(visitor))
    if forbidden:
        assert body == b"visitor page"


@settings(
    max_examples=math.ceil(EXCHANGES / BATCH),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
    # Nothing to shrink: the failing exchange is named (and reproduces alone).
    phases=[Phase.explicit, Phase.generate],
)
@given(rng=st.randoms(use_true_random=True))
def test_a_response_that_must_never_be_stored_is_never_stored_nor_served_to_another(
    rng: random.Random,
) -> None:
    for _ in range(BATCH):
        request, response, config = draw_exchange(rng)
        try:
            check_exchange(request, response, config)
        except AssertionError as failure:
            raise AssertionError(f"{request=} {response=} {config=}") from failure
