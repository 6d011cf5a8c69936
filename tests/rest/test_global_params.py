"""Global parameters every REST route honours, and how response data is serialized.

``_fields``, ``_embed``, ``context``, ``_envelope``, ``_pretty`` and ``_jsonp``, then ``_links``
(attributes, CURIEs) and encoding failures. Rules come from WordPress's global parameters and
WordPress's REST server, §5, §10, §11, §12 and §14, with the product decisions:
empty JSON objects are ``{}`` (also the envelope's empty ``headers`` and an embedding
placeholder) and ``_fields=meta,meta.key1,id`` keeps ``meta`` and ``id``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true
from tests.rest.support import HeaderLogin, body_of

AppFactory = Callable[..., App]
Register = Callable[[RestServer], None]

ROOT = "http://example.org/site-json"
CURIE = {"name": "wp", "href": "https://api.w.org/{rel}", "templated": True}
ARTICLE: dict[str, Any] = {"id": 1, "title": "Hello", "meta": {"key1": "a", "key2": "b"}}
ARTICLES: list[dict[str, Any]] = [
    {"id": 1, "title": "One", "meta": {"key1": "a", "key2": "b"}},
    {"id": 2, "title": "Two", "meta": {"key1": "c", "key2": "d"}},
]
PERSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "context": ["view", "edit", "embed"]},
        "name": {"type": "string", "context": ["view", "edit", "embed"]},
        "email": {"type": "string", "context": ["edit"]},
        "bio": {"type": "string", "context": ["view", "edit"]},
    },
}


# ---------------------------------------------------------------------- helpers
def public(
    callback: Callable[[RestRequest], Any], methods: str | list[str] = "GET", **extra: Any
) -> dict[str, Any]:
    """A public handler."""
    return {"methods": methods, "callback": callback, "permission_callback": return_true, **extra}


class Site:
    """An application with routes under ``gp/v1`` and a log of the requests they answered."""

    def __init__(self, app: App, extra: Register | None = None) -> None:
        self.app = app
        self.calls: list[tuple[str, dict[str, Any], int]] = []
        app.hooks.add_action("rest_api_init", self.register)
        if extra is not None:
            app.hooks.add_action("rest_api_init", extra)
        app.server.add_authenticator(HeaderLogin())
        self.client = Client(app)

    def person(self, request: RestRequest) -> dict[str, Any]:
        self.calls.append((request.get_route(), request.get_params(), request.user.id))
        number = int(request["id"])
        return {
            "id": number,
            "name": f"Person {number}",
            "email": f"p{number}@example.org",
            "bio": "Bio.",
        }

    def register(self, server: RestServer) -> None:
        def article(request: RestRequest) -> RestResponse:
            response = RestResponse(copy.deepcopy(ARTICLE))
            response.add_link("self", gp("/article"))
            response.add_link("author", gp("/people/2"), {"embeddable": True})
            return response

        def articles(request: RestRequest) -> list[dict[str, Any]]:
            return copy.deepcopy(ARTICLES)

        server.register_rest_route("gp/v1", "/article", public(article, ["GET", "POST"]))
        server.register_rest_route("gp/v1", "/articles", public(articles, ["GET", "POST"]))
        server.register_rest_route(
            "gp/v1",
            "/broken",
            public(lambda request: RestError("gp_broken", "Broken.", {"status": 409, "id": 3})),
        )
        context_arg = {"context": {"type": "string", "default": "view"}}
        server.register_rest_route(
            "gp/v1",
            "/people/(?P<id>\\d+)",
            public(self.person, args=context_arg),
            schema=lambda: PERSON_SCHEMA,
        )
        server.register_rest_route(
            "gp/v1",
            "/private/(?P<id>\\d+)",
            {
                "methods": "GET",
                "callback": self.person,
                "permission_callback": lambda request: request.user.id != 0,
                "args": context_arg,
            },
            schema=lambda: PERSON_SCHEMA,
        )

    def get(self, path: str, **kwargs: Any) -> TestResponse:
        """GET ``/site-json/gp/v1<path>``."""
        return self.client.get(f"/site-json/gp/v1{path}", **kwargs)


def gp(path: str) -> str:
    """The REST URL of ``path`` under ``gp/v1``."""
    return f"{ROOT}/gp/v1{path}"


def linked_site(app: App, links: list[tuple[str, str, dict[str, Any]]]) -> Site:
    """A `Site` with a ``/linked`` route answering ``{"id": 1}`` with ``links``."""

    def register(server: RestServer) -> None:
        def linked(request: RestRequest) -> RestResponse:
            response = RestResponse({"id": 1})
            for rel, href, attributes in links:
                response.add_link(rel, href, attributes)
            return response

        server.register_rest_route("gp/v1", "/linked", public(linked))

    return Site(app, register)


EMBEDDABLE = {"embeddable": True}


# ---------------------------------------------------------------------- _fields
FIELDS_CASES = [
    pytest.param("_fields=id", {"id": 1}, id="one-field"),
    pytest.param("_fields=id,title", {"id": 1, "title": "Hello"}, id="two-fields"),
    pytest.param("_fields=id,%20title", {"id": 1, "title": "Hello"}, id="spaces-around-names"),
    pytest.param("_fields[]=id&_fields[]=title", {"id": 1, "title": "Hello"}, id="array-syntax"),
    pytest.param("_fields=meta.key2", {"meta": {"key2": "b"}}, id="nested"),
    pytest.param("_fields=meta", {"meta": {"key1": "a", "key2": "b"}}, id="parent-whole"),
    pytest.param(
        "_fields=meta,meta.key1,id",
        {"id": 1, "meta": {"key1": "a", "key2": "b"}},
        id="redundant-child-skipped-alone",
    ),
    pytest.param("_fields=title.raw", {"title": "Hello"}, id="path-into-scalar-keeps-scalar"),
    pytest.param("_fields=tit", {}, id="no-prefix-match"),
    pytest.param("_fields=nothing", {}, id="unknown-field-gives-empty-object"),
]


@pytest.mark.parametrize(("query", "expected"), FIELDS_CASES)
def test_fields_keeps_only_the_listed_fields(app: App, query: str, expected: Any) -> None:
    site = Site(app)

    data = body_of(site.get(f"/articles?{query}"))

    assert data == [_fields_of(item, expected) for item in ARTICLES]


def _fields_of(item: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """``item`` reduced to the shape of ``template`` (an expectation written for ARTICLE)."""
    result: dict[str, Any] = {}
    for key, value in template.items():
        if isinstance(value, dict):
            result[key] = {child: item[key][child] for child in value}
        else:
            result[key] = item[key]
    return result


def test_fields_applies_to_a_single_object_too(app: App) -> None:
    site = Site(app)

    data = body_of(site.get("/article?_fields=id,meta.key1"))

    assert data["id"] == 1
    assert data["meta"] == {"key1": "a"}
    assert "title" not in data


def test_fields_leaves_errors_untouched(app: App) -> None:
    site = Site(app)

    response = site.get("/broken?_fields=id")

    assert response.status_code == 409
    assert body_of(response) == {
        "code": "gp_broken",
        "message": "Broken.",
        "data": {"status": 409, "id": 3},
    }


def test_fields_never_removes_links_or_embedded(app: App) -> None:
    site = Site(app)

    data = body_of(site.get("/article?_fields=id&_embed"))

    assert list(data) == ["id", "_links", "_embedded"]
    assert data["_links"]["self"][0]["href"] == gp("/article")
    assert data["_embedded"]["author"] == [{"id": 2, "name": "Person 2"}]


FIELDS_SOURCES = [
    pytest.param("GET", {"query_string": "_fields=id"}, id="query"),
    pytest.param("POST", {"data": {"_fields": "id"}}, id="form-body"),
    pytest.param("POST", {"json": {"_fields": "id"}}, id="json-body"),
    pytest.param("GET", {"json": {"_fields": "id"}}, id="json-body-of-a-get"),
    pytest.param("POST", {"json": {"_fields": ["id"]}}, id="json-list"),
]


@pytest.mark.parametrize(("method", "source"), FIELDS_SOURCES)
def test_fields_is_read_from_any_parameter_source(
    app: App, method: str, source: dict[str, Any]
) -> None:
    site = Site(app)

    response = site.client.open("/site-json/gp/v1/articles", method=method, **source)

    assert body_of(response) == [{"id": 1}, {"id": 2}]


# ---------------------------------------------------------------------- _embed
EMBED_VALUES = [
    pytest.param("", None, id="no-embed-parameter"),
    pytest.param("_embed", ["author", "wp:term", "false"], id="absent-value"),
    pytest.param("_embed=", ["author", "wp:term", "false"], id="empty"),
    pytest.param("_embed=true", ["author", "wp:term", "false"], id="true"),
    pytest.param("_embed=1", ["author", "wp:term", "false"], id="one"),
    pytest.param("_embed=author", ["author"], id="one-name"),
    pytest.param("_embed=author,false", ["author", "false"], id="list"),
    pytest.param("_embed=wp:term%20author", ["author", "wp:term"], id="space-separated"),
    pytest.param("_embed[]=wp:term", ["wp:term"], id="array-syntax"),
    pytest.param("_embed=false", ["false"], id="false-names-a-relation"),
    pytest.param("_embed=unknown", None, id="unknown-relation"),
]


@pytest.mark.parametrize(("query", "relations"), EMBED_VALUES)
def test_embed_selects_all_relations_or_the_listed_ones(
    app: App, query: str, relations: list[str] | None
) -> None:
    site = linked_site(
        app,
        [
            ("author", gp("/people/2"), EMBEDDABLE),
            ("https://api.w.org/term", gp("/people/3"), EMBEDDABLE),
            ("false", gp("/people/4"), EMBEDDABLE),
        ],
    )

    data = body_of(site.get(f"/linked?{query}"))

    if relations is None:
        assert "_embedded" not in data
    else:
        assert sorted(data["_embedded"]) == sorted(relations)


def test_embeddable_links_are_dispatched_internally_with_the_embed_context(app: App) -> None:
    site = linked_site(
        app,
        [
            ("author", gp("/people/2"), EMBEDDABLE),
            ("editor", gp("/people/3?context=edit"), EMBEDDABLE),
        ],
    )

    response = site.get("/linked?_embed")

    assert response.status_code == 200
    assert body_of(response)["_embedded"] == {
        "author": [{"id": 2, "name": "Person 2"}],
        "editor": [{"id": 3, "name": "Person 3", "email": "p3@example.org", "bio": "Bio."}],
    }
    contexts = {route: params["context"] for route, params, _ in site.calls}
    assert contexts == {"/gp/v1/people/2": "embed", "/gp/v1/people/3": "edit"}


def test_embedded_links_keep_their_position_and_order(app: App) -> None:
    site = linked_site(
        app,
        [
            ("item", gp("/people/2"), {}),
            ("item", gp("/people/3"), EMBEDDABLE),
            ("item", "https://elsewhere.example.com/site-json/gp/v1/people/4", EMBEDDABLE),
            ("item", gp("/people/5"), EMBEDDABLE),
        ],
    )

    data = body_of(site.get("/linked?_embed"))

    assert data["_embedded"] == {
        "item": [
            {},
            {"id": 3, "name": "Person 3"},
            {},
            {"id": 5, "name": "Person 5"},
        ]
    }
    assert [link["href"] for link in data["_links"]["item"]] == [
        gp("/people/2"),
        gp("/people/3"),
        "https://elsewhere.example.com/site-json/gp/v1/people/4",
        gp("/people/5"),
    ]


def test_error_results_are_embedded_without_changing_the_outer_status(app: App) -> None:
    site = linked_site(
        app,
        [
            ("missing", gp("/nowhere"), EMBEDDABLE),
            ("private", gp("/private/2"), EMBEDDABLE),
        ],
    )

    response = site.get("/linked?_embed")

    assert response.status_code == 200
    embedded = body_of(response)["_embedded"]
    assert embedded["missing"] == [
        {
            "code": "rest_no_route",
            "message": "No route was found matching the URL and request method.",
            "data": {"status": 404},
        }
    ]
    assert embedded["private"] == [
        {
            "code": "rest_forbidden",
            "message": "Sorry, you are not allowed to do that.",
            "data": {"status": 401},
        }
    ]


def test_a_relation_without_real_entries_is_not_embedded(app: App) -> None:
    site = linked_site(
        app,
        [
            ("plain", gp("/people/2"), {}),
            ("external", "https://elsewhere.example.com/thing", EMBEDDABLE),
            ("not-rest", "http://example.org/about/", EMBEDDABLE),
            ("author", gp("/people/3"), EMBEDDABLE),
        ],
    )

    data = body_of(site.get("/linked?_embed"))

    assert list(data["_embedded"]) == ["author"]
    assert sorted(data["_links"]) == ["author", "external", "not-rest", "plain"]


def test_no_embedded_member_when_nothing_is_embeddable(app: App) -> None:
    site = linked_site(app, [("plain", gp("/people/2"), {})])

    data = body_of(site.get("/linked?_embed"))

    assert "_embedded" not in data
    assert site.calls == []


def test_identical_hrefs_are_dispatched_once_but_embedded_per_link(app: App) -> None:
    site = linked_site(
        app,
        [
            ("author", gp("/people/2"), EMBEDDABLE),
            ("editor", gp("/people/2"), EMBEDDABLE),
            ("editor", gp("/people/2"), EMBEDDABLE),
        ],
    )

    data = body_of(site.get("/linked?_embed"))

    person = {"id": 2, "name": "Person 2"}
    assert data["_embedded"] == {"author": [person], "editor": [person, person]}
    assert len(site.calls) == 1


def test_embedded_requests_run_as_the_caller(app: App) -> None:
    site = linked_site(app, [("private", gp("/private/2"), EMBEDDABLE)])

    data = body_of(site.get("/linked?_embed", headers={"X-Test-Login": "1"}))

    assert data["_embedded"]["private"] == [{"id": 2, "name": "Person 2"}]
    assert [user for _, _, user in site.calls] == [7]


def test_embedded_responses_are_not_embedded_further(app: App) -> None:
    site = linked_site(app, [("article", gp("/article"), EMBEDDABLE)])

    data = body_of(site.get("/linked?_embed"))

    (article,) = data["_embedded"]["article"]
    assert article["id"] == 1
    assert "_links" in article
    assert "_embedded" not in article
    assert site.calls == []


def test_embed_uses_the_compacted_relation_names(app: App) -> None:
    site = linked_site(
        app,
        [
            ("https://api.w.org/author", gp("/people/2"), EMBEDDABLE),
            ("about", gp("/people/3"), EMBEDDABLE),
        ],
    )

    compact = body_of(site.get("/linked?_embed=wp:author"))
    full = body_of(site.get("/linked?_embed=https://api.w.org/author"))

    assert compact["_embedded"] == {"wp:author": [{"id": 2, "name": "Person 2"}]}
    assert "_embedded" not in full


def test_embedded_collections_get_the_largest_page_size(app: App) -> None:
    seen: list[Any] = []

    def register(server: RestServer) -> None:
        def collection(request: RestRequest) -> list[int]:
            seen.append(request["per_page"])
            return [1, 2]

        server.register_rest_route(
            "gp/v1",
            "/collection",
            public(collection, args={"per_page": {"type": "integer", "maximum": 50}}),
        )

        def linked(request: RestRequest) -> RestResponse:
            response = RestResponse({"id": 1})
            response.add_link("items", f"{ROOT}/gp/v1/collection", EMBEDDABLE)
            response.add_link("some", f"{ROOT}/gp/v1/collection?per_page=3", EMBEDDABLE)
            return response

        server.register_rest_route("gp/v1", "/linked", public(linked))

    site = Site(app, register)

    data = body_of(site.get("/linked?_embed"))

    assert data["_embedded"] == {"items": [[1, 2]], "some": [[1, 2]]}
    assert seen == [50, 3]


def test_each_item_of_a_list_gets_its_own_links_embedded(app: App) -> None:
    def register(server: RestServer) -> None:
        def listing(request: RestRequest) -> list[dict[str, Any]]:
            return [
                {"id": number, "_links": {"author": [{"embeddable": True, "href": href}]}}
                for number, href in ((1, f"{ROOT}/gp/v1/people/2"), (2, f"{ROOT}/gp/v1/people/3"))
            ]

        server.register_rest_route("gp/v1", "/listing", public(listing))

    site = Site(app, register)

    data = body_of(site.get("/listing?_embed"))

    assert [item["_embedded"] for item in data] == [
        {"author": [{"id": 2, "name": "Person 2"}]},
        {"author": [{"id": 3, "name": "Person 3"}]},
    ]


@pytest.mark.parametrize(
    ("method", "source"),
    [
        pytest.param("POST", {"data": {"_embed": "1"}}, id="form-body"),
        pytest.param("POST", {"json": {"_embed": "1"}}, id="json-body"),
    ],
)
def test_embed_is_read_from_the_query_string_only(
    app: App, method: str, source: dict[str, Any]
) -> None:
    site = Site(app)

    data = body_of(site.client.open("/site-json/gp/v1/article", method=method, **source))

    assert "_embedded" not in data
    assert site.calls == []


# ---------------------------------------------------------------------- context
CONTEXTS = [
    pytest.param("", {"id": 2, "name": "Person 2", "bio": "Bio."}, id="default-view"),
    pytest.param("context=view", {"id": 2, "name": "Person 2", "bio": "Bio."}, id="view"),
    pytest.param(
        "context=edit",
        {"id": 2, "name": "Person 2", "email": "p2@example.org", "bio": "Bio."},
        id="edit",
    ),
    pytest.param("context=embed", {"id": 2, "name": "Person 2"}, id="embed"),
]


@pytest.mark.parametrize(("query", "expected"), CONTEXTS)
def test_context_filters_the_response_by_the_route_schema(
    app: App, query: str, expected: dict[str, Any]
) -> None:
    site = Site(app)

    assert body_of(site.get(f"/people/2?{query}")) == expected


def test_context_from_a_json_body_filters_too(app: App) -> None:
    site = Site(app)

    data = body_of(site.get("/people/2", json={"context": "embed"}))

    assert data == {"id": 2, "name": "Person 2"}


def test_context_does_not_filter_errors(app: App) -> None:
    site = Site(app)

    response = site.get("/private/2?context=embed")

    assert response.status_code == 401
    assert set(body_of(response)) == {"code", "message", "data"}


# ---------------------------------------------------------------------- _envelope
@pytest.mark.parametrize("value", ["", "=1", "=0", "=false"], ids=["bare", "one", "zero", "false"])
def test_envelope_wraps_body_status_and_headers_in_a_200(app: App, value: str) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "gp/v1",
            "/created",
            public(
                lambda request: RestResponse({"id": 9}, 201, {"X-Site-Total": "1"}),
                ["GET", "POST"],
            ),
        )

    site = Site(app, register)

    response = site.get(f"/created?_envelope{value}")

    assert response.status_code == 200
    assert body_of(response) == {
        "body": {"id": 9},
        "status": 201,
        "headers": {"X-Site-Total": "1", "Allow": "GET, POST"},
    }
    assert "Allow" not in response.headers
    assert "X-Site-Total" not in response.headers


def test_envelope_of_an_error_keeps_its_status_and_empty_headers(app: App) -> None:
    site = Site(app)

    response = site.get("/nowhere?_envelope")

    assert response.status_code == 200
    assert body_of(response) == {
        "body": {
            "code": "rest_no_route",
            "message": "No route was found matching the URL and request method.",
            "data": {"status": 404},
        },
        "status": 404,
        "headers": {},
    }
    assert response.get_data(as_text=True).endswith('"headers":{}}')


def test_envelope_body_holds_links_and_embedded(app: App) -> None:
    site = Site(app)

    data = body_of(site.get("/article?_envelope&_embed"))

    assert data["status"] == 200
    assert data["headers"] == {"Allow": "GET, POST"}
    assert data["body"]["_links"]["self"][0]["href"] == gp("/article")
    assert data["body"]["_embedded"]["author"] == [{"id": 2, "name": "Person 2"}]


def test_envelope_of_a_response_with_its_own_link_keeps_the_api_root_link(app: App) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "gp/v1",
            "/paged",
            public(lambda request: RestResponse([], 200, {"Link": '<x>; rel="next"'})),
        )

    site = Site(app, register)

    response = site.get("/paged?_envelope")

    assert body_of(response)["headers"]["Link"] == '<x>; rel="next"'
    assert response.headers["Link"] == f'<{ROOT}/>; rel="https://api.w.org/"'


@pytest.mark.parametrize(
    "source",
    [{"data": {"_envelope": "1"}}, {"json": {"_envelope": "1"}}],
    ids=["form-body", "json-body"],
)
def test_envelope_is_read_from_the_query_string_only(app: App, source: dict[str, Any]) -> None:
    site = Site(app)

    response = site.client.post("/site-json/gp/v1/articles", **source)

    assert body_of(response) == ARTICLES


# ---------------------------------------------------------------------- _pretty
PRETTY_SOURCES = [
    pytest.param("GET", {"query_string": "_pretty"}, id="query"),
    pytest.param("GET", {"query_string": "_pretty=0"}, id="query-any-value"),
    pytest.param("POST", {"data": {"_pretty": "1"}}, id="form-body"),
    pytest.param("POST", {"json": {"_pretty": True}}, id="json-body"),
]


@pytest.mark.parametrize(("method", "source"), PRETTY_SOURCES)
def test_pretty_prints_with_four_spaces_from_any_source(
    app: App, method: str, source: dict[str, Any]
) -> None:
    site = Site(app)

    response = site.client.open("/site-json/gp/v1/articles", method=method, **source)

    assert response.get_data(as_text=True) == json.dumps(ARTICLES, indent=4)
    assert response.get_data(as_text=True).splitlines()[2] == '        "id": 1,'


def test_pretty_prints_errors_links_and_empty_containers(app: App) -> None:
    def register(server: RestServer) -> None:
        def empty(request: RestRequest) -> RestResponse:
            response = RestResponse({"list": [], "map": {}})
            response.add_link("about", f"{ROOT}/gp/v1/empty")
            return response

        server.register_rest_route("gp/v1", "/empty", public(empty))

    site = Site(app, register)

    error = site.get("/nowhere?_pretty")
    empty = site.get("/empty?_pretty")

    assert error.get_data(as_text=True) == json.dumps(body_of(error), indent=4)
    assert '\n    "code": "rest_no_route",\n' in error.get_data(as_text=True)
    assert empty.get_data(as_text=True) == json.dumps(
        {"list": [], "map": {}, "_links": {"about": [{"href": f"{ROOT}/gp/v1/empty"}]}}, indent=4
    )


def test_without_pretty_the_json_is_compact(app: App) -> None:
    site = Site(app)

    text = site.get("/articles").get_data(as_text=True)

    assert "\n" not in text
    assert json.loads(text) == ARTICLES


# ---------------------------------------------------------------------- _jsonp
VALID_CALLBACKS = ["Springfield", "shelby.ville", "cypress_creek", "KampKrusty1"]
INVALID_CALLBACKS = [
    "ogden-ville",
    "north haverbrook",
    "Terror['Lake']",
    "Cape[Feare]",
    '"NewHorrorfield"',
    "Scream\\ville",
    "alert(1);x",
]


@pytest.mark.parametrize("callback", VALID_CALLBACKS)
def test_jsonp_wraps_the_json_in_the_callback(app: App, callback: str) -> None:
    site = Site(app)

    response = site.get("/articles", query_string=urlencode({"_jsonp": callback}))

    assert response.status_code == 200
    assert response.get_data(as_text=True) == (
        f"/**/{callback}({json.dumps(ARTICLES, separators=(',', ':'))})"
    )


def test_jsonp_wraps_errors_the_same_way(app: App) -> None:
    site = Site(app)

    response = site.get("/nowhere?_jsonp=handle")

    text = response.get_data(as_text=True)
    assert response.status_code == 404
    assert text.startswith("/**/handle(")
    assert text.endswith(")")
    assert json.loads(text[len("/**/handle(") : -1])["code"] == "rest_no_route"


@pytest.mark.parametrize("callback", INVALID_CALLBACKS)
def test_an_invalid_jsonp_callback_is_a_400_without_data(app: App, callback: str) -> None:
    site = Site(app)

    response = site.get("/articles", query_string=urlencode({"_jsonp": callback}))

    assert response.status_code == 400
    assert body_of(response) == {
        "code": "rest_callback_invalid",
        "message": "Invalid JSONP callback function.",
    }


def test_disabled_jsonp_is_a_400_without_data(app: App) -> None:
    site = Site(app)
    app.hooks.add_filter("rest_jsonp_enabled", lambda enabled: False)

    response = site.get("/articles?_jsonp=Springfield")

    assert response.status_code == 400
    assert body_of(response) == {
        "code": "rest_callback_disabled",
        "message": "JSONP support is disabled on this site.",
    }


def test_jsonp_stops_before_dispatch_when_invalid(app: App) -> None:
    site = Site(app)

    site.get("/people/2?_jsonp=bad-name")

    assert site.calls == []


@pytest.mark.parametrize(
    "source", [{"data": {"_jsonp": "cb"}}, {"json": {"_jsonp": "cb"}}], ids=["form", "json"]
)
def test_jsonp_is_read_from_the_query_string_only(app: App, source: dict[str, Any]) -> None:
    site = Site(app)

    response = site.client.post("/site-json/gp/v1/articles", **source)

    assert body_of(response) == ARTICLES


def test_jsonp_and_envelope_combine(app: App) -> None:
    site = Site(app)

    response = site.get("/articles?_jsonp=cb&_envelope")

    text = response.get_data(as_text=True)
    assert text.startswith("/**/cb(")
    assert json.loads(text[len("/**/cb(") : -1]) == {
        "body": ARTICLES,
        "status": 200,
        "headers": {"Allow": "GET, POST"},
    }


# ---------------------------------------------------------------------- _links
def test_links_list_attributes_first_then_href(app: App) -> None:
    site = linked_site(
        app,
        [
            ("alternate", "http://example.org/one.xml", {"type": "application/xml", "title": "X"}),
            ("alternate", "http://example.org/two", {"href": "http://ignored.example"}),
            ("self", gp("/linked"), {}),
        ],
    )

    text = site.get("/linked").get_data(as_text=True)
    data = json.loads(text)

    assert data["_links"]["alternate"] == [
        {"type": "application/xml", "title": "X", "href": "http://example.org/one.xml"},
        {"href": "http://example.org/two"},
    ]
    assert '{"type":"application/xml","title":"X","href":"http://example.org/one.xml"}' in text
    assert list(data) == ["id", "_links"]


def test_relations_under_the_api_root_are_compacted_with_curies_last(app: App) -> None:
    site = linked_site(
        app,
        [
            ("https://api.w.org/author", gp("/people/2"), EMBEDDABLE),
            ("self", gp("/linked"), {}),
            ("https://api.w.org/term", gp("/people/3"), {"taxonomy": "tag"}),
            ("https://other.example/rel", gp("/people/4"), {}),
        ],
    )

    links = body_of(site.get("/linked"))["_links"]

    # As in WordPress, a compacted relation is re-added after the others, in its order.
    assert list(links) == [
        "self",
        "https://other.example/rel",
        "wp:author",
        "wp:term",
        "curies",
    ]
    assert links["wp:term"] == [{"taxonomy": "tag", "href": gp("/people/3")}]
    assert links["curies"] == [CURIE]


def test_no_curies_without_a_compacted_relation(app: App) -> None:
    site = linked_site(app, [("self", gp("/linked"), {})])

    links = body_of(site.get("/linked"))["_links"]

    assert "curies" not in links


def test_the_wp_curie_expands_to_the_configured_api_root_relation(
    app_factory: AppFactory,
) -> None:
    app = app_factory(api_root_rel="https://rels.example.net/")
    site = linked_site(
        app,
        [
            ("https://rels.example.net/author", gp("/people/2"), {}),
            ("https://api.w.org/term", gp("/people/3"), {}),
        ],
    )

    links = body_of(site.get("/linked"))["_links"]

    assert list(links) == ["https://api.w.org/term", "wp:author", "curies"]
    assert links["curies"] == [
        {"name": "wp", "href": "https://rels.example.net/{rel}", "templated": True}
    ]


def test_a_list_response_with_links_becomes_an_object(app: App) -> None:
    def register(server: RestServer) -> None:
        def listing(request: RestRequest) -> RestResponse:
            response = RestResponse(["a", "b"])
            response.add_link("about", f"{ROOT}/gp/v1/listing")
            return response

        server.register_rest_route("gp/v1", "/listing", public(listing))

    site = Site(app, register)

    assert body_of(site.get("/listing")) == {
        "0": "a",
        "1": "b",
        "_links": {"about": [{"href": f"{ROOT}/gp/v1/listing"}]},
    }


def test_null_data_with_links_becomes_an_object_of_links(app: App) -> None:
    def register(server: RestServer) -> None:
        def nothing(request: RestRequest) -> RestResponse:
            response = RestResponse(None)
            response.add_link("about", f"{ROOT}/gp/v1/nothing")
            return response

        server.register_rest_route("gp/v1", "/nothing", public(nothing))

    site = Site(app, register)

    assert body_of(site.get("/nothing")) == {
        "_links": {"about": [{"href": f"{ROOT}/gp/v1/nothing"}]}
    }


def test_self_links_carry_target_hints_for_the_current_user(app: App) -> None:
    def register(server: RestServer) -> None:
        def guarded(request: RestRequest) -> RestResponse:
            response = RestResponse({"id": 1})
            response.add_link("self", gp("/guarded"))
            response.add_link("self", gp("/nowhere"))
            response.add_link("self", gp("/guarded"), {"targetHints": {"allow": ["PATCH"]}})
            response.add_link("about", gp("/guarded"))
            return response

        server.register_rest_route(
            "gp/v1",
            "/guarded",
            [
                public(guarded),
                {
                    "methods": "POST",
                    "callback": guarded,
                    "permission_callback": lambda request: request.user.id != 0,
                },
            ],
        )

    site = Site(app, register)

    anonymous = body_of(site.get("/guarded"))["_links"]
    logged_in = body_of(site.get("/guarded", headers={"X-Test-Login": "1"}))["_links"]

    assert anonymous["self"] == [
        {"href": gp("/guarded"), "targetHints": {"allow": ["GET"]}},
        {"href": gp("/nowhere")},
        {"targetHints": {"allow": ["PATCH"]}, "href": gp("/guarded")},
    ]
    assert list(anonymous["self"][0]) == ["href", "targetHints"]
    assert logged_in["self"][0] == {
        "href": gp("/guarded"),
        "targetHints": {"allow": ["GET", "POST"]},
    }
    assert logged_in["self"][2] == {"targetHints": {"allow": ["PATCH"]}, "href": gp("/guarded")}
    assert anonymous["about"] == [{"href": gp("/guarded")}]


# ---------------------------------------------------------------------- encoding
@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"]
)
def test_data_that_cannot_be_encoded_is_a_500_encode_error(app: App, value: float) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "gp/v1", "/number", public(lambda request: {"value": [1, value]})
        )

    site = Site(app, register)

    response = site.get("/number")

    assert response.status_code == 500
    assert body_of(response) == {
        "code": "rest_encode_error",
        "message": "Inf and NaN cannot be JSON encoded",
        "data": {"status": 500},
    }
