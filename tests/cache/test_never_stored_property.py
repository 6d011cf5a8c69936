"""Property: no response CACHE_API.md says must never be stored is stored or served to another.

Generated requests (methods, cookies, Authorization, query strings, forwarded hosts) meet
generated responses (status, Set-Cookie, Cache-Control, Vary, empty bodies) under generated
settings. After each exchange, an anonymous visitor asks for the same URL while the app answers
something else: unless the first exchange was storable, the visitor must get the fresh answer.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitecache.cache import CacheEngine, CacheRules, MemoryStorage, PageCache

EXAMPLES = int(os.environ.get("SITECACHE_PROPERTY_EXAMPLES", "10000"))
AUTH_COOKIES = ("sitecache_session", "wordpress_logged_in_x", "comment_author_1", "wp-postpass_1")

requests = st.fixed_dictionaries(
    {
        "method": st.sampled_from(
            ["GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]
        ),
        "path": st.sampled_from(["/", "/a/", "/site-json/x", "/login", "/caf\u00e9/"]),
        "query": st.sampled_from(
            ["", "", "utm_source=x", "page=2", "rest_route=/", "s=q&utm_id=1"]
        ),
        "cookies": st.lists(st.sampled_from([*AUTH_COOKIES, "theme", "cart"]), max_size=3),
        "authorization": st.sampled_from([None, None, "Basic YTpi", "Bearer t"]),
        "forwarded_host": st.sampled_from([None, None, "evil.example", "example.org"]),
        "host": st.sampled_from(["example.org", "example.org", "evil.example"]),
    }
)
responses = st.fixed_dictionaries(
    {
        "status": st.sampled_from([200, 200, 200, 404, 500, 301, 204, 206]),
        "set_cookie": st.booleans(),
        "cache_control": st.sampled_from(
            [None, None, "public, max-age=60", "private", "no-store", "no-cache", "PRIVATE"]
        ),
        "vary": st.sampled_from([None, None, "*", "Cookie", "Accept-Language", "authorization"]),
        "empty": st.booleans(),
    }
)
cache_settings = st.fixed_dictionaries(
    {
        "cache_404": st.booleans(),
        "known_users": st.sampled_from(["bypass", "bypass_any_cookie", "anonymous"]),
        "cache_query_strings": st.booleans(),
    }
)


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
    """CACHE_API.md's "never stored" list, written out independently of the guards."""
    cookies = request["cookies"]
    front_end_get = request["method"] in ("GET", "HEAD") and not request["path"].startswith(
        ("/site-json", "/login")
    )
    logged_in = any(name in AUTH_COOKIES for name in cookies)
    if logged_in and not (config["known_users"] == "anonymous" and front_end_get):
        return True
    control = (response["cache_control"] or "").lower()
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
        or not (response["status"] == 200 or (response["status"] == 404 and config["cache_404"]))
        or response["empty"]
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


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
@given(request=requests, response=responses, config=cache_settings)
def test_a_response_that_must_never_be_stored_is_never_stored_nor_served_to_another(
    request: dict[str, Any], response: dict[str, Any], config: dict[str, Any]
) -> None:
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
