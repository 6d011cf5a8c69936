"""Hypothesis throws hostile requests at the whole application (#10 acceptance): paths, query
strings, headers (non-ASCII, surrogates, malformed credentials), JSON and raw bodies, with and
without valid credentials. Nothing may answer 500, and every REST answer is JSON.

The run is bounded and derandomized (`make test` runs the same examples every time); set
``SITECACHE_FUZZ_EXAMPLES`` for a longer hunt.
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitecache.app import App, create_app
from sitecache.rest.http import query_params

EXAMPLES = int(os.environ.get("SITECACHE_FUZZ_EXAMPLES", "300"))
PREFIX = "/site-json"
PATHS = [
    "/",
    "/index.php",
    "/login",
    "/logout",
    "/site-admin/",
    "/site-admin/rest-nonce",
    "/site-admin/authorize-application",
    "/no-such-page",
    PREFIX,
    f"{PREFIX}/",
    f"{PREFIX}/site/v2",
    f"{PREFIX}/batch/v1",
    f"{PREFIX}/site/v2/users/me/application-passwords",
    f"{PREFIX}/site/v2/users/1/application-passwords",
    f"{PREFIX}/site/v2/users/2/application-passwords/introspect",
    f"{PREFIX}/site/v2/users/me/application-passwords/0f8fad5b-d9cb-469f-a165-70867728950e",
]
PARAMETERS = [
    "rest_route", "_sitenonce", "_method", "_jsonp", "_envelope", "_embed", "_fields",
    "_pretty", "context", "page", "per_page", "redirect_to", "app_name", "app_id",
    "success_url", "reject_url", "name", "requests", "log", "pwd",
]  # fmt: skip
HEADERS = [
    "HTTP_X_SITE_NONCE", "HTTP_AUTHORIZATION", "HTTP_COOKIE", "HTTP_X_HTTP_METHOD_OVERRIDE",
    "HTTP_ORIGIN", "HTTP_ACCEPT", "HTTP_USER_AGENT", "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_FORWARDED_FOR", "HTTP_HOST", "HTTP_CONTENT_MD5",
]  # fmt: skip
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]

# Any code point, lone surrogates included.
hostile_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(hostile_text, children, max_size=4)
    ),
    max_leaves=12,
)


def latin1(text: str) -> str:
    """``text`` as a WSGI server hands it over: its UTF-8 bytes read as latin-1 (surrogates
    kept as their own bytes, as a hostile server or middleware might)."""
    return text.encode("utf-8", "surrogatepass").decode("latin-1")


@st.composite
def requests(draw: st.DrawFn, credentials: dict[str, str]) -> dict[str, Any]:
    path = draw(st.sampled_from(PATHS))
    if draw(st.booleans()):
        path += draw(st.sampled_from(["", "/", "/x", "/%ED%A0%80", "/é", "/\n"])) + quote(
            draw(hostile_text), safe="/", errors="surrogatepass"
        )
    pairs = draw(st.lists(st.tuples(st.sampled_from(PARAMETERS), hostile_text), max_size=4))
    query = "&".join(f"{quote(key)}={quote(value, errors='surrogatepass')}" for key, value in pairs)
    if draw(st.booleans()):
        query += "&" + latin1(draw(hostile_text))  # raw, unescaped text in the query string
    headers = {
        name: draw(st.one_of(hostile_text, hostile_text.map(latin1)))
        for name in draw(st.lists(st.sampled_from(HEADERS), max_size=4, unique=True))
    }
    credential = draw(st.sampled_from(["none", "basic", "bad-basic", "garbage-basic"]))
    if credential == "basic":
        headers["HTTP_AUTHORIZATION"] = credentials["basic"]
    elif credential == "bad-basic":
        login = draw(hostile_text).encode("utf-8", "surrogatepass")
        token = base64.b64encode(login + b":" + draw(st.binary(max_size=20))).decode()
        headers["HTTP_AUTHORIZATION"] = f"Basic {token}"
    elif credential == "garbage-basic":
        headers["HTTP_AUTHORIZATION"] = "Basic " + latin1(draw(hostile_text))
    kind = draw(st.sampled_from(["none", "json", "raw", "form"]))
    content_type = ""
    body = b""
    if kind == "json":
        content_type = "application/json"
        body = json.dumps(draw(json_values)).encode("ascii")
    elif kind == "raw":
        content_type = draw(st.sampled_from(["application/json", "text/plain", ""]))
        body = draw(st.binary(max_size=64))
    elif kind == "form":
        content_type = "application/x-www-form-urlencoded"
        body = "&".join(
            f"{quote(k)}={quote(v, errors='surrogatepass')}"
            for k, v in draw(
                st.lists(st.tuples(st.sampled_from(PARAMETERS), hostile_text), max_size=4)
            )
        ).encode("ascii")
    return {
        "method": draw(st.sampled_from(METHODS)),
        "path": path,
        "query": query,
        "headers": headers,
        "content_type": content_type,
        "body": body,
    }


def call(app: App, request: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    """Run one request through the WSGI application; ``(status, headers, body)``."""
    path = request["path"]
    raw_path = path.encode("utf-8", "surrogatepass").decode("latin-1")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": request["method"],
        "SCRIPT_NAME": "",
        "PATH_INFO": raw_path.partition("?")[0],
        "QUERY_STRING": request["query"],
        "SERVER_NAME": "example.org",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(request["body"]),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "CONTENT_LENGTH": str(len(request["body"])),
        "CONTENT_TYPE": request["content_type"],
        **request["headers"],
    }
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        answer["status"] = int(status.split()[0])
        answer["headers"] = {name.lower(): value for name, value in headers}
        return lambda data: None

    chunks = app(environ, start_response)
    try:
        body = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    return answer["status"], answer["headers"], body


def is_rest(request: dict[str, Any]) -> bool:
    """Whether the request addresses the REST API: a path under the prefix, or a non-empty
    ``rest_route`` parameter on ``/`` or ``/index.php`` (as in WordPress)."""
    path = request["path"]
    if path == PREFIX or path.startswith(PREFIX + "/"):
        return True
    route = query_params({"QUERY_STRING": request["query"]}).get("rest_route")
    return path in ("/", "/index.php") and route not in (None, "")


@pytest.fixture(scope="module")
def fuzzed_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[App, dict[str, str]]:
    data_dir: Path = tmp_path_factory.mktemp("fuzz") / "var"
    app = create_app(
        {
            "data_dir": str(data_dir),
            "site_url": "http://example.org",
            "password_hash_cost": 1024,
            "cache_timers": False,
        }
    )
    user = app.auth.users.create("ada", "correct horse battery", "administrator", "a@example.org")
    password, _ = app.auth.app_passwords.create(user, "fuzz")
    token = base64.b64encode(f"ada:{password}".encode()).decode()
    return app, {"basic": f"Basic {token}"}


def test_no_request_gets_a_500_and_every_rest_answer_is_json(
    fuzzed_app: tuple[App, dict[str, str]],
) -> None:
    app, credentials = fuzzed_app

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(request=requests(credentials))
    def check(request: dict[str, Any]) -> None:
        status, headers, body = call(app, request)
        assert status != 500, (request, body[:500])
        if not is_rest(request) or request["method"] == "HEAD" or status == 204:
            return
        content_type = headers.get("content-type", "")
        if content_type.startswith("application/javascript") and body.startswith(b"/**/"):
            return  # JSONP, as asked for
        # (A refused JSONP callback is a JSON error labelled JavaScript, as in WordPress.)
        assert content_type.startswith(("application/json", "application/javascript")), (
            request,
            content_type,
            body[:200],
        )
        json.loads(body)

    check()
