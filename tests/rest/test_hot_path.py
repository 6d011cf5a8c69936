"""Work done once per request on the REST hot path, with the answers unchanged.

Permission callbacks answer once per (callback, request) for dispatch, ``Allow`` and target
hints; the JSON encoder runs without a Python walk of the data first yet refuses the same data
with the same messages; the index and namespace indexes reuse their route descriptions until a
route changes, while ``context``, ``_fields`` and filters still apply per request.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from sitecache.app import App
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true
from sitecache.rest.http import encode_json
from tests.rest.support import body_of, public


# ---------------------------------------------------------------------- permission verdicts
def counting(verdict: Any = True) -> tuple[list[str], Any]:
    calls: list[str] = []

    def permission(request: RestRequest) -> Any:
        calls.append(request.get_method())
        return verdict

    return calls, permission


def test_a_shared_permission_callback_answers_once_for_dispatch_and_allow(
    app: App, client: Client
) -> None:
    calls, permission = counting()

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "memo/v1",
            "/thing",
            [
                {
                    "methods": "GET",
                    "callback": lambda r: {"ok": 1},
                    "permission_callback": permission,
                },
                {
                    "methods": "POST, PUT",
                    "callback": lambda r: {},
                    "permission_callback": permission,
                },
            ],
        )

    app.hooks.add_action("rest_api_init", register)
    response = client.get("/site-json/memo/v1/thing")
    assert response.status_code == 200
    assert response.headers["Allow"] == "GET, POST, PUT"
    assert calls == ["GET"]


def test_each_distinct_permission_callback_answers_once(app: App, client: Client) -> None:
    reads, may_read = counting()
    writes, may_write = counting(False)

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "memo/v1",
            "/thing",
            [
                {"methods": "GET", "callback": lambda r: {}, "permission_callback": may_read},
                {"methods": "POST", "callback": lambda r: {}, "permission_callback": may_write},
            ],
        )

    app.hooks.add_action("rest_api_init", register)
    response = client.get("/site-json/memo/v1/thing")
    assert response.headers["Allow"] == "GET"
    assert (len(reads), len(writes)) == (1, 1)


def test_allow_follows_a_route_registered_again_after_requests(app: App, client: Client) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route("memo/v1", "/thing", public("GET"))

    app.hooks.add_action("rest_api_init", register)
    assert client.get("/site-json/memo/v1/thing").headers["Allow"] == "GET"
    app.server.register_rest_route(
        "memo/v1", "/thing", [public("GET"), public("DELETE", permission_callback=lambda r: 0)]
    )
    assert client.get("/site-json/memo/v1/thing").headers["Allow"] == "GET"
    app.server.register_rest_route("memo/v1", "/thing", public("GET, PATCH"), override=True)
    assert client.get("/site-json/memo/v1/thing").headers["Allow"] == "GET, PATCH"


def test_a_method_two_handlers_list_takes_the_later_verdict_in_first_seen_order(
    app: App, client: Client
) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "memo/v1",
            "/thing",
            [
                public("PUT, GET"),
                public("POST, PUT", permission_callback=lambda r: False),
                public("DELETE"),
            ],
        )

    app.hooks.add_action("rest_api_init", register)
    assert client.get("/site-json/memo/v1/thing").headers["Allow"] == "GET, DELETE"


def test_a_permission_callback_that_raised_is_asked_again(app: App, client: Client) -> None:
    calls: list[int] = []

    def flaky(request: RestRequest) -> bool:
        calls.append(1)
        raise RuntimeError("boom")

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "memo/v1",
            "/thing",
            {"methods": "GET", "callback": lambda r: {}, "permission_callback": flaky},
        )

    app.hooks.add_action("rest_api_init", register)
    response = client.get("/site-json/memo/v1/thing")
    assert response.status_code == 500
    assert "Allow" not in response.headers
    assert len(calls) == 2  # dispatch, then Allow (which logs and denies)


def test_every_request_asks_the_permission_callback_anew(app: App, client: Client) -> None:
    calls, permission = counting()

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "memo/v1",
            "/thing",
            {"methods": "GET", "callback": lambda r: {}, "permission_callback": permission},
        )

    app.hooks.add_action("rest_api_init", register)
    for _ in range(3):
        assert client.get("/site-json/memo/v1/thing").status_code == 200
    assert len(calls) == 3


def test_a_self_link_target_hint_asks_for_its_own_request(app: App, client: Client) -> None:
    seen: list[str] = []

    def permission(request: RestRequest) -> bool:
        seen.append(request.get_route())
        return True

    def item(request: RestRequest) -> RestResponse:
        response = RestResponse({"id": 1})
        response.add_link("self", app.server.rest_url("/memo/v1/items/1"))
        return response

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "memo/v1",
            "/items/(?P<id>\\d+)",
            {"methods": "GET", "callback": item, "permission_callback": permission},
        )

    app.hooks.add_action("rest_api_init", register)
    response = client.get("/site-json/memo/v1/items/2")
    assert body_of(response)["_links"]["self"][0]["targetHints"] == {"allow": ["GET"]}
    assert seen == ["/memo/v1/items/2", "/memo/v1/items/1"]


# ---------------------------------------------------------------------- JSON
class _Reference(Exception):
    pass


def _reference_encode(data: Any, pretty: bool = False) -> str:
    """encode_json as it was: a Python walk of the data, then json.dumps."""

    def reject(value: Any) -> Any:
        raise _Reference("Type is not supported")

    def check(value: Any, depth: int = 0) -> None:
        if depth > 512:
            raise _Reference("Maximum stack depth exceeded")
        if isinstance(value, float) and not math.isfinite(value):
            raise _Reference("Inf and NaN cannot be JSON encoded")
        if isinstance(value, dict):
            for item in value.values():
                check(item, depth + 1)
        elif isinstance(value, list | tuple):
            for item in value:
                check(item, depth + 1)

    try:
        check(data)
        if pretty:
            return json.dumps(data, indent=4, ensure_ascii=False, allow_nan=False, default=reject)
        return json.dumps(
            data, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=reject
        )
    except _Reference as exc:
        raise ValueError(str(exc)) from exc
    except (TypeError, ValueError) as exc:
        raise ValueError("Type is not supported") from exc
    except RecursionError as exc:
        raise ValueError("Maximum stack depth exceeded") from exc


def _outcome(encode: Any, data: Any, pretty: bool) -> tuple[str, str]:
    try:
        return "ok", encode(data, pretty)
    except ValueError as exc:
        return "error", str(exc)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and infinities included
    st.text(max_size=5),
    st.sampled_from([object(), {1, 2}, b"bytes"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.dictionaries(
            st.one_of(st.text(max_size=3), st.integers(), st.floats()), children, max_size=4
        ),
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(data=VALUES, pretty=st.booleans())
def test_json_encoding_gives_the_same_text_and_errors_as_before(data: Any, pretty: bool) -> None:
    assert _outcome(encode_json, data, pretty) == _outcome(_reference_encode, data, pretty)


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [512, 513, 600, 2000])
def test_json_nesting_beyond_512_is_refused_as_before(depth: int) -> None:
    assert _outcome(encode_json, nested(depth), False) == _outcome(
        _reference_encode, nested(depth), False
    )
    refused = depth > 512
    assert (_outcome(encode_json, nested(depth), False)[0] == "error") is refused


def nested_mixed(depth: int, innermost: Any) -> Any:
    value: Any = innermost
    for level in range(depth):
        value = {"k": value} if level % 2 else (value,) if level % 3 == 0 else [value]
    return value


@pytest.mark.parametrize("depth", [510, 511, 512, 513, 514])
@pytest.mark.parametrize("innermost", [[], {}, [1], {"a": None}, "s"])
def test_json_depth_limit_matches_the_python_walk_at_the_edge(depth: int, innermost: Any) -> None:
    data = {"padding": [[] for _ in range(600)], "deep": nested_mixed(depth, innermost)}
    assert _outcome(encode_json, data, False) == _outcome(_reference_encode, data, False)


def test_many_shallow_brackets_are_not_mistaken_for_deep_nesting() -> None:
    data = {"items": [[] for _ in range(2000)], "text": "[[[{{{" * 200}
    assert json.loads(encode_json(data)) == data


def test_a_nan_deep_inside_is_refused_with_the_php_message() -> None:
    with pytest.raises(ValueError, match="Inf and NaN cannot be JSON encoded"):
        encode_json({"a": [1, {"b": math.nan}]})


# ---------------------------------------------------------------------- index caching
def register_widgets(server: RestServer) -> None:
    server.register_rest_route(
        "widgets/v1",
        "/widgets",
        {"methods": "GET", "callback": lambda r: [], "permission_callback": return_true},
    )


def test_a_route_registered_after_an_index_request_appears_in_the_next_index(
    app: App, client: Client
) -> None:
    app.hooks.add_action("rest_api_init", register_widgets)
    assert "/widgets/v1/widgets" in body_of(client.get("/site-json/"))["routes"]
    assert "/widgets/v1/gadgets" not in body_of(client.get("/site-json/widgets/v1"))["routes"]
    app.server.register_rest_route(
        "widgets/v1",
        "/gadgets",
        {"methods": "GET", "callback": lambda r: [], "permission_callback": return_true},
    )
    assert "/widgets/v1/gadgets" in body_of(client.get("/site-json/"))["routes"]
    assert "/widgets/v1/gadgets" in body_of(client.get("/site-json/widgets/v1"))["routes"]


def test_the_index_self_links_follow_the_host_of_each_request(app_factory: Any) -> None:
    app = app_factory(site_url=None)
    app.hooks.add_action("rest_api_init", register_widgets)
    client = Client(app)
    for host in ("one.example", "two.example", "one.example"):
        routes = body_of(client.get("/site-json/", base_url=f"http://{host}"))["routes"]
        href = routes["/widgets/v1/widgets"]["_links"]["self"][0]["href"]
        assert href == f"http://{host}/site-json/widgets/v1/widgets"


def test_fields_and_context_still_apply_to_a_cached_index(app: App, client: Client) -> None:
    app.hooks.add_action("rest_api_init", register_widgets)
    client.get("/site-json/")
    assert body_of(client.get("/site-json/?_fields=namespaces")) == {
        "namespaces": app.server.get_namespaces()
    }
    helped = body_of(client.get("/site-json/?context=help"))
    viewed = body_of(client.get("/site-json/"))
    assert set(helped["routes"]) == set(viewed["routes"])


def test_a_route_data_filter_runs_on_every_index_request(app: App, client: Client) -> None:
    app.hooks.add_action("rest_api_init", register_widgets)
    counter = itertools.count()  # once per route and request: as many as there are

    def stamp(data: dict[str, Any], route: Any, context: str) -> dict[str, Any]:
        return {**data, "stamp": next(counter)}

    client.get("/site-json/")
    app.hooks.add_filter("rest_route_data", stamp, 10)
    first = body_of(client.get("/site-json/"))["routes"]["/widgets/v1/widgets"]["stamp"]
    second = body_of(client.get("/site-json/"))["routes"]["/widgets/v1/widgets"]["stamp"]
    assert second > first


def test_changing_one_index_answer_does_not_change_the_next(app: App, client: Client) -> None:
    app.hooks.add_action("rest_api_init", register_widgets)

    def drop_routes(response: RestResponse, request: RestRequest) -> RestResponse:
        response.get_data()["routes"].pop("/widgets/v1/widgets", None)
        return response

    app.hooks.add_filter("rest_index", drop_routes, 10)
    assert "/widgets/v1/widgets" not in body_of(client.get("/site-json/"))["routes"]
    app.hooks.remove_filter("rest_index", drop_routes, 10)
    assert "/widgets/v1/widgets" in body_of(client.get("/site-json/"))["routes"]


def test_an_unknown_namespace_is_still_404(client: Client) -> None:
    response = client.get("/site-json/nowhere/v1")
    assert response.status_code == 404
    assert body_of(response)["code"] == "rest_no_route"


# ---------------------------------------------------------------------- sending headers
def test_a_location_header_still_goes_through_werkzeugs_rules(app: App, client: Client) -> None:
    def moved(request: RestRequest) -> RestResponse:
        return RestResponse({"moved": True}, 201, {"Location": "/site-json/memo/v1/ünï"})

    app.hooks.add_action(
        "rest_api_init",
        lambda server: server.register_rest_route(
            "memo/v1",
            "/moved",
            {"methods": "GET", "callback": moved, "permission_callback": return_true},
        ),
    )
    response = client.get("/site-json/memo/v1/moved")
    assert response.status_code == 201
    assert response.headers["Location"].isascii()
    assert response.headers["Content-Length"] == str(len(response.get_data()))


def test_a_204_answer_is_sent_without_a_body_or_length(app: App, client: Client) -> None:
    app.hooks.add_action(
        "rest_api_init",
        lambda server: server.register_rest_route(
            "memo/v1",
            "/empty",
            {
                "methods": "GET",
                "callback": lambda r: RestResponse(None, 204),
                "permission_callback": return_true,
            },
        ),
    )
    response = client.get("/site-json/memo/v1/empty")
    assert response.status_code == 204
    assert response.get_data() == b""
    assert "Content-Length" not in response.headers


# ---------------------------------------------------------------------- internal requests from URLs
@pytest.mark.parametrize(
    ("tail", "route", "query"),
    [
        ("/memo/v1/thing/7", "/memo/v1/thing/7", {}),
        ("/", "/", {}),
        ("/memo/v1/thing?context=edit&x=1", "/memo/v1/thing", {"context": "edit", "x": "1"}),
        ("/memo/v1/thing#part", "/memo/v1/thing", {}),
        ("/memo/v1/th\ting\n", "/memo/v1/thing", {}),
        ("//elsewhere/memo/v1/thing", "/memo/v1/thing", {}),
    ],
)
def test_a_request_from_a_url_has_the_route_and_query_url_splitting_gives(
    app: App, tail: str, route: str, query: dict[str, str]
) -> None:
    server = app.server
    request = server.request_from_url(server.rest_url("/").rstrip("/") + tail)
    assert request is not None
    assert (request.get_route(), request.get_query_params()) == (route, query)
