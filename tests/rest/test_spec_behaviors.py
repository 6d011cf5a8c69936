"""One test per behaviour common to all REST routes (nine of them, WordPress's).

Every test drives an application through the werkzeug test client, as an HTTP caller would,
and checks each clause of its row. The details come from
WordPress's REST server; the product decisions win over WordPress: only an
exact ``True`` from a permission callback allows, empty JSON objects are ``{}``, ``_fields``
skips only a redundant child (``meta,meta.key1,id`` keeps ``id``), and debug headers are sent
only by an application created with ``debug=True``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true
from sitecache.rest.discovery import discovery_link_header, discovery_link_tags
from tests.rest.support import HeaderLogin, body_of

AppFactory = Callable[..., App]
Register = Callable[[RestServer], None]

API_ROOT = "http://example.org/site-json/"
CORS_METHODS = "OPTIONS, GET, POST, PUT, PATCH, DELETE"


# ---------------------------------------------------------------------- helpers
def make_client(app: App, register: Register) -> Client:
    """A client for ``app`` with ``register`` hooked on ``rest_api_init``."""
    app.hooks.add_action("rest_api_init", register)
    app.server.add_authenticator(HeaderLogin())
    return Client(app)


def public(
    callback: Callable[[RestRequest], Any], methods: str | list[str] = "GET", **extra: Any
) -> dict[str, Any]:
    """A public handler."""
    return {
        "methods": methods,
        "callback": callback,
        "permission_callback": return_true,
        **extra,
    }


# ---------------------------------------------------------------------- row 1
ARTICLE: dict[str, Any] = {"id": 1, "title": "Hello", "meta": {"key1": "a", "key2": "b"}}
ARTICLES: list[dict[str, Any]] = [
    {"id": 1, "title": "One", "meta": {"key1": "a", "key2": "b"}},
    {"id": 2, "title": "Two", "meta": {"key1": "c", "key2": "d"}},
]


def register_fields_routes(server: RestServer) -> None:
    server.register_rest_route(
        "fields/v1", "/article", public(lambda request: dict(ARTICLE), ["GET", "POST"])
    )
    server.register_rest_route(
        "fields/v1", "/articles", public(lambda request: [dict(item) for item in ARTICLES])
    )
    server.register_rest_route("fields/v1", "/nothing", public(lambda request: []))
    server.register_rest_route(
        "fields/v1",
        "/broken",
        public(lambda request: RestError("fields_broken", "Broken.", {"status": 409, "id": 5})),
    )


FIELDS_CASES = [
    pytest.param(
        "GET", "/article?_fields=id,title", {"id": 1, "title": "Hello"}, id="comma-separated"
    ),
    pytest.param("GET", "/article?_fields=meta.key1", {"meta": {"key1": "a"}}, id="nested-by-dot"),
    pytest.param(
        "GET",
        "/article?_fields=meta",
        {"meta": {"key1": "a", "key2": "b"}},
        id="parent-keeps-all-children",
    ),
    pytest.param(
        "GET",
        "/article?_fields=meta,meta.key1,id",
        {"id": 1, "meta": {"key1": "a", "key2": "b"}},
        id="parent-then-child-keeps-parent-and-later-fields",
    ),
    pytest.param(
        "GET",
        "/article?_fields=meta.key1,meta",
        {"meta": {"key1": "a", "key2": "b"}},
        id="child-then-parent-keeps-parent-whole",
    ),
    pytest.param("POST", "/article", {"id": 1, "title": "Hello"}, id="from-the-form-body"),
    pytest.param(
        "GET",
        "/articles?_fields=id,meta.key2",
        [{"id": 1, "meta": {"key2": "b"}}, {"id": 2, "meta": {"key2": "d"}}],
        id="each-item-of-a-list",
    ),
    pytest.param("GET", "/article?_fields=", ARTICLE, id="empty-field-list-ignored"),
    pytest.param("GET", "/article?_fields=,", ARTICLE, id="list-of-empty-names-ignored"),
    pytest.param("GET", "/nothing?_fields=id", [], id="empty-data-list-stays-empty"),
    pytest.param(
        "GET",
        "/broken?_fields=id",
        {"code": "fields_broken", "message": "Broken.", "data": {"status": 409, "id": 5}},
        id="error-untouched",
    ),
]


@pytest.mark.parametrize(("method", "path", "expected"), FIELDS_CASES)
def test_behavior_1_fields_keeps_listed_fields_nested_by_dot_per_item_and_ignores_errors(
    app: App, method: str, path: str, expected: Any
) -> None:
    client = make_client(app, register_fields_routes)
    if method == "POST":
        response = client.post(f"/site-json/fields/v1{path}", data={"_fields": "id,title"})
    else:
        response = client.get(f"/site-json/fields/v1{path}")

    assert body_of(response) == expected


# ---------------------------------------------------------------------- row 2
def register_embed_routes(server: RestServer) -> None:
    def post(request: RestRequest) -> RestResponse:
        response = RestResponse({"id": 1})
        response.add_link("author", server.rest_url("/embed/v1/people/2"), {"embeddable": True})
        response.add_link("editor", server.rest_url("/embed/v1/people/3"), {"embeddable": True})
        response.add_link(
            "https://api.w.org/term", server.rest_url("/embed/v1/people/4"), {"embeddable": True}
        )
        response.add_link("false", server.rest_url("/embed/v1/people/5"), {"embeddable": True})
        return response

    server.register_rest_route("embed/v1", "/post", public(post))
    server.register_rest_route(
        "embed/v1",
        "/people/(?P<id>\\d+)",
        public(lambda request: {"id": int(request["id"])}),
    )


ALL_RELATIONS = ["author", "editor", "wp:term", "false"]
EMBED_CASES = [
    pytest.param("", None, id="no-embed-parameter-embeds-nothing"),
    pytest.param("_embed", ALL_RELATIONS, id="present-without-value"),
    pytest.param("_embed=", ALL_RELATIONS, id="empty"),
    pytest.param("_embed=true", ALL_RELATIONS, id="true"),
    pytest.param("_embed=1", ALL_RELATIONS, id="one"),
    pytest.param("_embed=author", ["author"], id="one-relation"),
    pytest.param("_embed=author,wp:term", ["author", "wp:term"], id="comma-separated-list"),
    pytest.param("_embed[]=editor&_embed[]=author", ["author", "editor"], id="array-syntax"),
    pytest.param("_embed=false", ["false"], id="false-is-a-relation-name"),
]


@pytest.mark.parametrize(("query", "relations"), EMBED_CASES)
def test_behavior_2_embed_absent_empty_true_or_1_embeds_all_else_a_comma_separated_list(
    app: App, query: str, relations: list[str] | None
) -> None:
    client = make_client(app, register_embed_routes)

    data = body_of(client.get(f"/site-json/embed/v1/post?{query}"))

    assert sorted(data["_links"]) == sorted([*ALL_RELATIONS, "curies"])
    if relations is None:
        assert "_embedded" not in data
        return
    ids = {"author": 2, "editor": 3, "wp:term": 4, "false": 5}
    assert sorted(data["_embedded"]) == sorted(relations)
    for relation in relations:
        assert data["_embedded"][relation] == [{"id": ids[relation]}]


# ---------------------------------------------------------------------- row 3
VIEW_EDIT_EMBED = ["view", "edit", "embed"]
VIEW_EDIT = ["view", "edit"]
EDIT = ["edit"]

CONTEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "context": VIEW_EDIT_EMBED},
        "secret": {"type": "string", "context": EDIT},
        "nested": {
            "type": "object",
            "context": VIEW_EDIT,
            "properties": {
                "shown": {"type": "string", "context": VIEW_EDIT},
                "hidden": {"type": "string", "context": EDIT},
            },
        },
        "rows": {
            "type": "array",
            "context": VIEW_EDIT,
            "items": {
                "type": "object",
                "context": VIEW_EDIT,
                "properties": {
                    "shown": {"type": "string", "context": VIEW_EDIT},
                    "hidden": {"type": "string", "context": EDIT},
                },
            },
        },
        "edit_items": {
            "type": "array",
            "context": VIEW_EDIT,
            "items": {"type": "string", "context": EDIT},
        },
        "patterned": {
            "type": "object",
            "context": VIEW_EDIT,
            "patternProperties": {"^x_": {"type": "string", "context": EDIT}},
            "additionalProperties": {"type": "string", "context": VIEW_EDIT},
        },
        "extra": {
            "type": "object",
            "context": VIEW_EDIT,
            "additionalProperties": {
                "type": "object",
                "context": VIEW_EDIT,
                "properties": {
                    "shown": {"type": "string", "context": VIEW_EDIT},
                    "hidden": {"type": "string", "context": EDIT},
                },
            },
        },
        "any": {
            "context": VIEW_EDIT,
            "anyOf": [
                {"type": "integer"},
                {
                    "type": "object",
                    "properties": {
                        "shown": {"type": "string", "context": VIEW_EDIT},
                        "hidden": {"type": "string", "context": EDIT},
                    },
                },
            ],
        },
        "one": {
            "context": VIEW_EDIT,
            "oneOf": [
                {"type": "integer"},
                {
                    "type": "object",
                    "properties": {
                        "shown": {"type": "string", "context": VIEW_EDIT},
                        "hidden": {"type": "string", "context": EDIT},
                    },
                },
            ],
        },
    },
}

CONTEXT_DATA: dict[str, Any] = {
    "id": 1,
    "secret": "s",
    "nested": {"shown": "a", "hidden": "b"},
    "rows": [{"shown": "a", "hidden": "b"}, {"shown": "c", "hidden": "d"}],
    "edit_items": ["p", "q"],
    "patterned": {"x_private": "p", "plain": "q"},
    "extra": {"first": {"shown": "a", "hidden": "b"}},
    "any": {"shown": "a", "hidden": "b"},
    "one": {"shown": "a", "hidden": "b"},
}

CONTEXT_VIEW: dict[str, Any] = {
    "id": 1,
    "nested": {"shown": "a"},
    "rows": [{"shown": "a"}, {"shown": "c"}],
    "edit_items": [],
    "patterned": {"plain": "q"},
    "extra": {"first": {"shown": "a"}},
    "any": {"shown": "a"},
    "one": {"shown": "a"},
}


def register_context_routes(server: RestServer) -> None:
    context_arg = {"context": {"type": "string", "default": "view"}}
    server.register_rest_route(
        "ctx/v1",
        "/thing",
        public(lambda request: copy.deepcopy(CONTEXT_DATA), args=context_arg),
        schema=lambda: CONTEXT_SCHEMA,
    )
    server.register_rest_route(
        "ctx/v1",
        "/things",
        public(lambda request: copy.deepcopy([CONTEXT_DATA] * 2), args=context_arg),
        schema=lambda: CONTEXT_SCHEMA,
    )


CONTEXT_CASES = [
    pytest.param("/thing", CONTEXT_VIEW, id="default-view"),
    pytest.param("/thing?context=view", CONTEXT_VIEW, id="view"),
    pytest.param("/thing?context=edit", CONTEXT_DATA, id="edit-keeps-everything"),
    pytest.param("/thing?context=embed", {"id": 1}, id="embed"),
    pytest.param("/things?context=view", [CONTEXT_VIEW, CONTEXT_VIEW], id="list-item-by-item"),
]


@pytest.mark.parametrize(("path", "expected"), CONTEXT_CASES)
def test_behavior_3_context_removes_fields_outside_the_requested_context_recursively(
    app: App, path: str, expected: Any
) -> None:
    client = make_client(app, register_context_routes)

    response = client.get(f"/site-json/ctx/v1{path}")

    assert response.status_code == 200
    assert body_of(response) == expected


# ---------------------------------------------------------------------- row 4
def test_behavior_4_options_returns_route_help_data_and_matched_route_else_empty_data(
    app: App,
) -> None:
    calls: list[str] = []

    def callback(request: RestRequest) -> dict[str, Any]:
        calls.append("callback")
        return {}

    def permission(request: RestRequest) -> bool:
        calls.append("permission")
        return True

    schema = {"title": "widget", "type": "object", "properties": {}}

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "opt/v1",
            "/widgets/(?P<id>\\d+)",
            [
                {
                    "methods": "GET",
                    "callback": callback,
                    "permission_callback": permission,
                    "args": {"id": {"type": "integer", "description": "The id."}},
                },
                {
                    "methods": "DELETE",
                    "callback": callback,
                    "permission_callback": permission,
                    "args": {"force": {"type": "boolean", "default": False}},
                },
            ],
            schema=lambda: schema,
        )

    client = make_client(app, register)

    response = client.options("/site-json/opt/v1/widgets/5")

    assert response.status_code == 200
    assert body_of(response) == {
        "namespace": "opt/v1",
        "methods": ["GET", "DELETE"],
        "endpoints": [
            {
                "methods": ["GET"],
                "args": {"id": {"type": "integer", "description": "The id.", "required": False}},
            },
            {
                "methods": ["DELETE"],
                "args": {"force": {"type": "boolean", "default": False, "required": False}},
            },
        ],
        "schema": schema,
    }
    # The matched route shows in the Allow header; no handler callback runs.
    assert response.headers["Allow"] == "GET, DELETE"
    assert "callback" not in calls

    overridden = client.get("/site-json/opt/v1/widgets/5?_method=OPTIONS")
    assert body_of(overridden) == body_of(response)

    unknown = client.options("/site-json/opt/v1/nowhere")
    assert unknown.status_code == 200
    assert body_of(unknown) == {}
    assert "Allow" not in unknown.headers


# ---------------------------------------------------------------------- row 5
PERMISSION_RESULTS = [
    pytest.param(True, True, id="true-allows"),
    pytest.param(False, False, id="false"),
    pytest.param(None, False, id="none"),
    pytest.param(1, False, id="one-is-not-true"),
    pytest.param("yes", False, id="truthy-string"),
    pytest.param(["x"], False, id="list"),
    pytest.param(RestError("nope", "No.", {"status": 403}), False, id="error"),
]


@pytest.mark.parametrize(("result", "allowed"), PERMISSION_RESULTS)
def test_behavior_5_allow_lists_uppercase_methods_whose_permission_is_exactly_true(
    app: App, result: Any, allowed: bool
) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "allow/v1",
            "/thing",
            [
                {
                    "methods": "get",
                    "callback": lambda request: {"ok": True},
                    "permission_callback": return_true,
                },
                {
                    "methods": "post, put",
                    "callback": lambda request: {"ok": True},
                    "permission_callback": lambda request: result,
                },
                {"methods": ["delete"], "callback": lambda request: {"ok": True}},
            ],
        )

    client = make_client(app, register)

    response = client.get("/site-json/allow/v1/thing")

    expected = "GET, POST, PUT, DELETE" if allowed else "GET, DELETE"
    assert response.status_code == 200
    assert response.headers["Allow"] == expected
    # Every response of the matched route carries it, errors included.
    forbidden = client.post("/site-json/allow/v1/thing")
    assert forbidden.headers["Allow"] == expected
    if not allowed:
        assert forbidden.status_code in (401, 403)


# ---------------------------------------------------------------------- row 6
ORIGIN_CASES = [
    pytest.param("https://app.example.com", "https://app.example.com", id="origin-echoed"),
    pytest.param("null", "null", id="null-kept"),
]


@pytest.mark.parametrize(("origin", "echoed"), ORIGIN_CASES)
def test_behavior_6_cross_origin_headers_for_an_origin_and_vary_for_anonymous_get(
    app: App, origin: str, echoed: str
) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route("cors/v1", "/thing", public(lambda request: {"ok": True}))

    client = make_client(app, register)

    response = client.get("/site-json/cors/v1/thing", headers={"Origin": origin})

    assert response.headers["Access-Control-Allow-Origin"] == echoed
    assert response.headers["Access-Control-Allow-Methods"] == CORS_METHODS
    assert response.headers["Access-Control-Allow-Credentials"] == "true"
    assert response.headers.getlist("Vary") == ["Origin"]

    anonymous = client.get("/site-json/cors/v1/thing")
    assert "Access-Control-Allow-Origin" not in anonymous.headers
    assert "Access-Control-Allow-Methods" not in anonymous.headers
    assert "Access-Control-Allow-Credentials" not in anonymous.headers
    assert anonymous.headers.getlist("Vary") == ["Origin"]

    logged_in = client.get("/site-json/cors/v1/thing", headers={"X-Test-Login": "1"})
    assert "Vary" not in logged_in.headers


# ---------------------------------------------------------------------- row 7
DISCOVERY_CASES = [
    pytest.param({}, API_ROOT, "https://api.w.org/", id="default"),
    pytest.param(
        {"api_root_rel": "https://rels.example.net/"},
        API_ROOT,
        "https://rels.example.net/",
        id="configured-relation",
    ),
    pytest.param(
        {"permalink_structure": ""},
        "http://example.org/index.php?rest_route=/",
        "https://api.w.org/",
        id="plain-permalinks",
    ),
]


@pytest.mark.parametrize(("config", "root", "rel"), DISCOVERY_CASES)
def test_behavior_7_discovery_link_header_and_tag_point_to_the_api_root(
    app_factory: AppFactory, config: dict[str, Any], root: str, rel: str
) -> None:
    app = app_factory(**config)

    def register(server: RestServer) -> None:
        server.register_rest_route("disc/v1", "/thing", public(lambda request: {"ok": True}))

    client = make_client(app, register)
    link = f'<{root}>; rel="{rel}"'

    assert client.get("/site-json/disc/v1/thing").headers["Link"] == link
    assert client.get("/site-json/").headers["Link"] == link
    assert client.get("/site-json/disc/v1/missing").headers["Link"] == link

    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["Link"] == link
    html = page.get_data(as_text=True)
    head = html[: html.index("</head>")]
    assert f'<link rel="{rel}" href="{root.replace("&", "&amp;")}">' in head

    # A page showing one resource also points at the resource's route (no such page exists
    # yet, so the discovery helpers are checked directly).
    resource = app.server.rest_url("/site/v2/posts/5")
    assert discovery_link_header(app.server, "/site/v2/posts/5") == (
        f'{link}, <{resource}>; rel="alternate"; title="JSON"; type="application/json"'
    )
    tags = discovery_link_tags(app.server, "/site/v2/posts/5")
    assert 'rel="alternate"' in tags
    assert 'type="application/json"' in tags
    assert f'href="{resource.replace("&", "&amp;")}"' in tags


# ---------------------------------------------------------------------- row 8
def test_behavior_8_index_lists_the_application_password_authorization_url(
    app_factory: Callable[..., App],
) -> None:
    authorize = "http://example.org/site-admin/authorize-application"
    expected = {"application-passwords": {"endpoints": {"authorization": authorize}}}

    # Available (the default "auto" allows loopback clients and TLS): advertised.
    loopback = Client(app_factory())
    index = body_of(loopback.get("/site-json/", environ_base={"REMOTE_ADDR": "127.0.0.1"}))
    assert index["authentication"] == expected
    tls = body_of(loopback.get("/site-json/", base_url="https://example.org"))
    assert tls["authentication"] == {
        "application-passwords": {
            "endpoints": {"authorization": "https://example.org/site-admin/authorize-application"}
        }
    }

    # Not available (plain http from another host, or switched off): not advertised.
    remote = body_of(loopback.get("/site-json/", environ_base={"REMOTE_ADDR": "203.0.113.9"}))
    assert remote["authentication"] == {}
    switched_off = Client(app_factory(application_passwords="off"))
    index = body_of(switched_off.get("/site-json/", environ_base={"REMOTE_ADDR": "127.0.0.1"}))
    assert index["authentication"] == {}


# ---------------------------------------------------------------------- row 9
def register_noisy_route(app: App) -> Register:
    def noisy(request: RestRequest) -> dict[str, Any]:
        app.deprecated_function("old_function", "new_function")
        app.deprecated_argument("some_function", "The flag argument is deprecated.")
        app.doing_it_wrong("misused_function", "Call it later.")
        return {"ok": True}

    def register(server: RestServer) -> None:
        server.register_rest_route("debug/v1", "/noisy", public(noisy))

    return register


DEBUG_HEADERS = {
    "X-Site-DeprecatedFunction": "old_function (use new_function instead)",
    "X-Site-DeprecatedParam": "some_function (The flag argument is deprecated.)",
    "X-Site-DoingItWrong": "misused_function (Call it later.)",
}


@pytest.mark.parametrize("debug", [True, False], ids=["debug", "no-debug"])
def test_behavior_9_debug_headers_only_in_debug_mode_and_only_for_rest_requests(
    app_factory: AppFactory, debug: bool
) -> None:
    app = app_factory(debug=debug)
    client = make_client(app, register_noisy_route(app))

    response = client.get("/site-json/debug/v1/noisy")

    def rest_url(url: str, path: str) -> str:
        """Raise a notice while a page (not a REST request) is served."""
        app.doing_it_wrong("page_function", "Not on pages.")
        return url

    app.hooks.add_filter("rest_url", rest_url)
    page = client.get("/")

    assert response.status_code == 200
    assert page.status_code == 200
    for name, text in DEBUG_HEADERS.items():
        if debug:
            assert response.headers[name] == text
        else:
            assert name not in response.headers
        assert name not in page.headers
