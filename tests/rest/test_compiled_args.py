"""Route arguments are compiled once at registration and answer on the wire as before (#18).

The default argument callbacks (`validate_request_arg`, `sanitize_request_arg`,
`parse_request_arg`) apply the argument's own schema; the REST server runs them through the
`CompiledSchema` made when the route was registered. Each case here is served twice: by a route
using the default callbacks (compiled) and by a twin whose callbacks are wrappers around the
same defaults (so the reference functions answer), and both responses must be identical.
"""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.rest import (
    RestRequest,
    RestServer,
    parse_request_arg,
    sanitize_request_arg,
    validate_request_arg,
)
from sitecache.rest.request import COMPILED_ARGS
from sitecache.schema import CompiledSchema
from tests.rest.support import public
from tests.schema.compiled_agreement import typed

ARGS: dict[str, dict[str, Any]] = {
    "page": {"type": "integer", "minimum": 1, "default": 1},
    "per_page": {"type": "integer", "minimum": 1, "maximum": 100},
    "context": {"type": "string", "enum": ["view", "embed", "edit"], "default": "view"},
    "include": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
    "status": {"type": ["string", "array"], "items": {"type": "string", "enum": ["a", "b"]}},
    "sticky": {"type": "boolean"},
    "slug": {"type": "string", "pattern": "^[a-z0-9-]+$", "maxLength": 10},
    "meta": {
        "type": "object",
        "properties": {"color": {"type": "string", "format": "hex-color"}},
        "additionalProperties": False,
    },
    "when": {"type": "string", "format": "date-time"},
    "shape": {
        "anyOf": [{"type": "integer", "title": "count"}, {"type": "boolean", "title": "flag"}],
        "validate_callback": validate_request_arg,
    },
    "custom": {"type": "string", "sanitize_callback": sanitize_request_arg},
    "checked": {"type": "integer", "validate_callback": validate_request_arg},
}

QUERIES = [
    "",
    "page=2&per_page=10",
    "page=0",
    "page=abc&per_page=1000",
    "per_page=1.5",
    "context=edit",
    "context=bogus",
    "include=1,2,3",
    "include=1,01",
    "include[]=1&include[]=x",
    "status=a",
    "status[]=a&status[]=c",
    "sticky=true",
    "sticky=yes",
    "slug=hello-world",
    "slug=Hello&slug=x",
    "slug=much-too-long-a-slug",
    "meta[color]=%23fff",
    "meta[color]=red",
    "meta[other]=1",
    "when=2017-01-16T11:30:00Z",
    "when=yesterday",
    "shape=5",
    "shape=x",
    "custom=%3Cb%3Ehi%3C/b%3E",
    "checked=7",
    "checked=seven",
]


def _wrapped(definition: dict[str, Any]) -> dict[str, Any]:
    """The same definition with its callbacks wrapped: the reference functions answer."""
    wrapped = dict(definition)
    for key, default in (
        ("validate_callback", None),
        ("sanitize_callback", parse_request_arg if definition.get("type") else None),
    ):
        callback = definition.get(key, default)
        if callback is not None:
            wrapped[key] = lambda value, request, param, _cb=callback: _cb(value, request, param)
    return wrapped


@pytest.fixture
def twin_routes(app: App) -> App:
    def register(server: RestServer) -> None:
        server.register_rest_route("cmp/v1", "/compiled", public(args=ARGS))
        reference = {name: _wrapped(definition) for name, definition in ARGS.items()}
        server.register_rest_route("cmp/v1", "/reference", public(args=reference))

    app.hooks.add_action("rest_api_init", register)
    return app


def test_compiled_arguments_answer_as_the_reference_functions(twin_routes: App) -> None:
    client = Client(twin_routes)  # one application for every query: the suite's time matters
    for query in QUERIES:
        compiled = client.get(f"/site-json/cmp/v1/compiled?{query}")
        reference = client.get(f"/site-json/cmp/v1/reference?{query}")
        assert compiled.status_code == reference.status_code, query
        compiled_body, reference_body = compiled.get_json(), reference.get_json()
        if compiled.status_code == 200:
            compiled_body.pop("route")
            reference_body.pop("route")
        assert typed(compiled_body) == typed(reference_body), query  # 1 is not 1.0, nor True


def test_the_compiled_path_is_the_one_taken(twin_routes: App) -> None:
    client = Client(twin_routes)
    assert client.get("/site-json/cmp/v1/compiled?page=2&include=1,2").status_code == 200
    route = twin_routes.server.get_routes()["/cmp/v1/compiled"]
    compiled = route.handlers[0][COMPILED_ARGS]
    assert set(compiled) == set(ARGS)
    assert all(compiled[name].schema is ARGS[name] for name in ARGS)
    assert compiled["include"].is_compiled
    assert compiled["page"].is_compiled


def test_route_level_arguments_shared_by_handlers_are_compiled_once(app: App) -> None:
    shared = {"type": "integer", "minimum": 0}

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "cmp/v1",
            "/shared",
            [public("GET"), public("POST")],
            route_args={"n": shared},
        )

    app.hooks.add_action("rest_api_init", register)
    assert Client(app).get("/site-json/cmp/v1/shared?n=-1").status_code == 400
    get, post = app.server.get_routes()["/cmp/v1/shared"].handlers
    assert get[COMPILED_ARGS]["n"] is post[COMPILED_ARGS]["n"]


def test_a_plugin_validate_callback_still_runs(app: App) -> None:
    seen: list[Any] = []

    def validate(value: Any, request: RestRequest, param: str) -> bool:
        seen.append((value, param))
        return False

    def register(server: RestServer) -> None:
        args = {"n": {"type": "integer", "validate_callback": validate}}
        server.register_rest_route("cmp/v1", "/own", public(args=args))

    app.hooks.add_action("rest_api_init", register)
    response = Client(app).get("/site-json/cmp/v1/own?n=5")
    assert response.status_code == 400
    assert response.get_json()["data"]["params"] == {"n": "Invalid parameter."}
    assert seen == [("5", "n")]


def test_a_definition_other_than_the_compiled_one_is_read_by_the_reference() -> None:
    registered = {"type": "integer", "maximum": 5}
    replaced = {"type": "integer", "maximum": 50}
    request = RestRequest(
        "GET",
        "/x",
        {"args": {"n": replaced}, COMPILED_ARGS: {"n": CompiledSchema(registered)}},
    )
    request.set_query_params({"n": "7"})
    assert request.has_valid_params() is True
    assert request.sanitize_params() is True
    assert request.get_param("n") == 7


def test_a_compiled_argument_refuses_with_the_reference_error() -> None:
    definition = {"type": "integer", "maximum": 5, "validate_callback": validate_request_arg}
    request = RestRequest(
        "GET", "/x", {"args": {"n": definition}, COMPILED_ARGS: {"n": CompiledSchema(definition)}}
    )
    request.set_query_params({"n": "7"})
    error = request.has_valid_params()
    assert isinstance(error, RestError)
    assert error.to_dict()["data"] == {
        "status": 400,
        "params": {"n": "n must be less than or equal to 5"},
        "details": {
            "n": {
                "code": "rest_invalid_param",
                "message": "n must be less than or equal to 5",
                "data": None,
            }
        },
    }


def test_misuse_in_an_argument_schema_still_reaches_the_debug_header(app_factory: Any) -> None:
    app = app_factory(debug=True)

    def register(server: RestServer) -> None:
        args = {"n": {"validate_callback": validate_request_arg, "description": "no type"}}
        server.register_rest_route("cmp/v1", "/untyped", public(args=args))

    app.hooks.add_action("rest_api_init", register)
    response = Client(app).get("/site-json/cmp/v1/untyped?n=5")
    assert response.status_code == 200
    assert response.headers.getlist("X-Site-DoingItWrong") == [
        'rest_validate_value_from_schema (The "type" schema keyword for n is required.)'
    ]
