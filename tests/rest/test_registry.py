"""Route registration: ``register_rest_route`` and the ``rest_api_init`` action.

Rules from WordPress's route registration and WordPress's REST server and §18
(registration): what is refused, what is flagged as misuse but registered, handler defaults,
method spellings, route-level arguments, route trimming, re-registration, regex routes, the
namespace pre-selection, and when ``rest_api_init`` fires.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.rest import RestServer, return_true
from tests.conftest import AppFactory
from tests.rest.conftest import Notice
from tests.rest.support import echo, public

NS = "test-ns"


def on_init(app: App, register: Callable[[RestServer], Any]) -> None:
    """Run ``register`` during the application's ``rest_api_init``."""
    app.hooks.add_action("rest_api_init", register)


def register_route(app: App, route: str, args: Any, *rest: Any, **options: Any) -> None:
    """Register one ``test-ns`` route during ``rest_api_init``."""
    on_init(app, lambda server: server.register_rest_route(NS, route, args, *rest, **options))


def index_routes(client: Client) -> dict[str, Any]:
    """The ``routes`` map of the API index."""
    response = client.get("/site-json/")
    assert response.status_code == 200
    routes: dict[str, Any] = response.get_json()["routes"]
    return routes


def messages(notices: list[Notice]) -> list[str]:
    return [message for _, message in notices]


# ---------------------------------------------------------------------- accepted and refused
def test_a_well_formed_registration_succeeds_without_any_notice(
    app: App, client: Client, notices: list[Notice]
) -> None:
    results: list[bool] = []
    on_init(app, lambda server: results.append(server.register_rest_route(NS, "/echo", public())))

    response = client.get("/site-json/test-ns/echo")

    assert results == [True]
    assert notices == []
    assert response.status_code == 200
    assert response.get_json()["route"] == "/test-ns/echo"


@pytest.mark.parametrize(
    ("namespace", "route", "message_start"),
    [
        pytest.param("", "/echo", "Routes must be namespaced", id="empty-namespace"),
        pytest.param(NS, "", "Route must be specified", id="empty-route"),
    ],
)
def test_an_empty_namespace_or_route_is_refused_with_a_notice(
    app: App,
    client: Client,
    notices: list[Notice],
    namespace: str,
    route: str,
    message_start: str,
) -> None:
    results: list[bool] = []
    on_init(
        app, lambda server: results.append(server.register_rest_route(namespace, route, public()))
    )

    routes = index_routes(client)

    assert results == [False]
    assert [function for function, _ in notices] == ["register_rest_route"]
    assert messages(notices)[0].startswith(message_start)
    assert [path for path in routes if "echo" in path or "test-ns" in path] == []
    namespaces = client.get("/site-json/").get_json()["namespaces"]
    assert NS not in namespaces
    assert "" not in namespaces


@pytest.mark.parametrize("namespace", ["/test-ns", "test-ns/", "/test-ns/", "//test-ns//"])
def test_slashes_around_a_namespace_are_flagged_and_trimmed_and_the_route_registered(
    app: App, client: Client, notices: list[Notice], namespace: str
) -> None:
    results: list[bool] = []
    on_init(
        app, lambda server: results.append(server.register_rest_route(namespace, "echo", public()))
    )

    response = client.get("/site-json/test-ns/echo")

    assert results == [True]
    assert response.status_code == 200
    assert response.get_json()["route"] == "/test-ns/echo"
    namespaces = client.get("/site-json/").get_json()["namespaces"]
    assert NS in namespaces
    assert [name for name in namespaces if name.startswith("/") or name.endswith("/")] == []
    assert [route for route in index_routes(client) if "echo" in route] == ["/test-ns/echo"]
    assert len(notices) == 1
    assert notices[0][0] == "register_rest_route"
    assert notices[0][1].startswith("Namespace must not start or end with a slash")


def test_registration_outside_rest_api_init_is_flagged_but_the_route_works(
    app: App, client: Client, notices: list[Notice]
) -> None:
    assert app.server.register_rest_route(NS, "/early", public()) is True

    assert len(notices) == 1
    assert notices[0][0] == "register_rest_route"
    assert "rest_api_init" in notices[0][1]
    response = client.get("/site-json/test-ns/early")
    assert response.status_code == 200
    assert response.get_json()["route"] == "/test-ns/early"


def test_registration_after_rest_api_init_has_fired_is_not_flagged(
    app: App, client: Client, notices: list[Notice]
) -> None:
    client.get("/site-json/")  # fires rest_api_init

    assert app.server.register_rest_route(NS, "/late", public()) is True

    assert notices == []
    assert client.get("/site-json/test-ns/late").status_code == 200


def test_a_handler_without_permission_callback_is_flagged_and_the_route_stays_public(
    app: App, client: Client, notices: list[Notice]
) -> None:
    register_route(app, "/open", {"methods": "GET", "callback": echo})

    response = client.get("/site-json/test-ns/open")

    assert response.status_code == 200
    assert len(notices) == 1
    function, message = notices[0]
    assert function == "register_rest_route"
    assert "test-ns/open" in message
    assert "permission_callback" in message
    assert "sitecache.rest.return_true" in message


def test_each_handler_without_permission_callback_is_flagged(
    app: App, client: Client, notices: list[Notice]
) -> None:
    register_route(
        app,
        "/open",
        [
            {"methods": "GET", "callback": echo},
            public("POST"),
            {"methods": "PUT", "callback": echo},
        ],
    )

    client.get("/site-json/")

    flagged = [message for message in messages(notices) if "permission_callback" in message]
    assert len(flagged) == 2
    assert len(notices) == 2


# ---------------------------------------------------------------------- handler defaults
def test_a_handler_answers_get_only_by_default(app: App, client: Client) -> None:
    register_route(app, "/default", {"callback": echo, "permission_callback": return_true})

    assert client.get("/site-json/test-ns/default").status_code == 200
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        response = client.open("/site-json/test-ns/default", method=method)
        assert response.status_code == 404, method
        assert response.get_json()["code"] == "rest_no_route"


@pytest.mark.parametrize(
    "handler",
    [
        pytest.param({"methods": "GET", "permission_callback": return_true}, id="no-callback"),
        pytest.param(
            {"methods": "GET", "callback": None, "permission_callback": return_true},
            id="none-callback",
        ),
        pytest.param(
            {"methods": "GET", "callback": "echo", "permission_callback": return_true},
            id="not-callable",
        ),
        pytest.param(
            {"methods": "GET", "permission_callback": lambda request: False},
            id="before-permission",
        ),
    ],
)
def test_a_handler_without_callback_answers_500_invalid_handler(
    app: App, client: Client, handler: dict[str, Any]
) -> None:
    register_route(app, "/nothing", handler)

    response = client.get("/site-json/test-ns/nothing")

    assert response.status_code == 500
    assert response.get_json() == {
        "code": "rest_invalid_handler",
        "message": "The handler for the route is invalid.",
        "data": {"status": 500},
    }


def test_a_handler_has_no_arguments_by_default(app: App, client: Client) -> None:
    register_route(app, "/default", {"callback": echo, "permission_callback": return_true})

    route = index_routes(client)["/test-ns/default"]

    assert route["methods"] == ["GET"]
    assert route["endpoints"] == [{"methods": ["GET"], "args": {}}]


# ---------------------------------------------------------------------- methods
@pytest.mark.parametrize(
    ("methods", "allowed"),
    [
        pytest.param("GET", ["GET"], id="one-name"),
        pytest.param("post", ["POST"], id="lowercase-name"),
        pytest.param("GET,POST", ["GET", "POST"], id="comma-string"),
        pytest.param("get, post", ["GET", "POST"], id="comma-string-spaces-lowercase"),
        pytest.param(" put ,  DELETE ", ["PUT", "DELETE"], id="comma-string-padded"),
        pytest.param(["GET", "POST"], ["GET", "POST"], id="list"),
        pytest.param(["get", "patch"], ["GET", "PATCH"], id="lowercase-list"),
    ],
)
def test_methods_may_be_a_comma_separated_string_or_a_list_in_any_case(
    app: App, client: Client, methods: Any, allowed: list[str]
) -> None:
    register_route(app, "/echo", public(methods))

    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        response = client.open("/site-json/test-ns/echo", method=method)
        if method in allowed:
            assert response.status_code == 200, method
            assert response.get_json()["method"] == method
        else:
            assert response.status_code == 404, method
    assert index_routes(client)["/test-ns/echo"]["methods"] == allowed


# ---------------------------------------------------------------------- route-level arguments
def test_route_level_args_are_merged_under_every_handlers_args(app: App, client: Client) -> None:
    register_route(
        app,
        "/merged",
        [
            public("GET", args={"both": {"default": "get-handler"}}),
            public("POST", args={"own": {"default": "post-handler"}}),
        ],
        route_args={"shared": {"default": "route"}, "both": {"default": "route"}},
    )

    got = client.get("/site-json/test-ns/merged").get_json()["params"]
    posted = client.post("/site-json/test-ns/merged").get_json()["params"]

    assert got == {"shared": "route", "both": "get-handler"}
    assert posted == {"shared": "route", "both": "route", "own": "post-handler"}


def test_handler_args_win_over_route_level_args_of_the_same_name(app: App, client: Client) -> None:
    register_route(
        app,
        "/typed",
        public(args={"count": {"type": "integer", "minimum": 5}}),
        route_args={"count": {"type": "string"}},
    )

    too_small = client.get("/site-json/test-ns/typed?count=3")
    fine = client.get("/site-json/test-ns/typed?count=7")

    assert too_small.status_code == 400
    assert too_small.get_json()["code"] == "rest_invalid_param"
    assert fine.get_json()["params"] == {"count": 7}
    endpoint = index_routes(client)["/test-ns/typed"]["endpoints"][0]
    assert endpoint["args"] == {"count": {"type": "integer", "minimum": 5, "required": False}}


# ---------------------------------------------------------------------- route shape
@pytest.mark.parametrize("route", ["echo", "/echo", "echo/", "/echo/", "//echo//"])
def test_the_full_route_is_namespace_and_route_with_slashes_trimmed(
    app: App, client: Client, route: str
) -> None:
    register_route(app, route, public())

    response = client.get("/site-json/test-ns/echo")

    assert response.status_code == 200
    assert [route for route in index_routes(client) if "echo" in route] == ["/test-ns/echo"]


def test_a_namespace_may_have_several_segments(app: App, client: Client) -> None:
    on_init(app, lambda server: server.register_rest_route("test-ns/v1", "/echo", public()))

    assert client.get("/site-json/test-ns/v1/echo").get_json()["route"] == "/test-ns/v1/echo"
    assert "test-ns/v1" in client.get("/site-json/").get_json()["namespaces"]


# ---------------------------------------------------------------------- re-registration
def test_registering_a_route_again_appends_its_handlers(app: App, client: Client) -> None:
    register_route(app, "/twice", public("GET", callback=lambda request: "first"))
    register_route(app, "/twice", public("POST", callback=lambda request: "second"))

    assert client.get("/site-json/test-ns/twice").get_json() == "first"
    assert client.post("/site-json/test-ns/twice").get_json() == "second"
    route = index_routes(client)["/test-ns/twice"]
    assert route["methods"] == ["GET", "POST"]
    assert [endpoint["methods"] for endpoint in route["endpoints"]] == [["GET"], ["POST"]]


def test_an_appended_handler_for_the_same_method_does_not_shadow_the_first(
    app: App, client: Client
) -> None:
    register_route(app, "/twice", public("GET", callback=lambda request: "first"))
    register_route(app, "/twice", public("GET", callback=lambda request: "second"))

    assert client.get("/site-json/test-ns/twice").get_json() == "first"


def test_override_replaces_the_route_so_its_old_methods_are_gone(app: App, client: Client) -> None:
    register_route(app, "/replaced", public("GET", callback=lambda request: "old"))
    register_route(app, "/replaced", public("POST", callback=lambda request: "new"), True)

    old = client.get("/site-json/test-ns/replaced")

    assert old.status_code == 404
    assert old.get_json()["code"] == "rest_no_route"
    assert client.post("/site-json/test-ns/replaced").get_json() == "new"
    assert index_routes(client)["/test-ns/replaced"]["methods"] == ["POST"]


def test_re_registration_replaces_a_route_option_of_the_same_name(app: App, client: Client) -> None:
    register_route(app, "/described", public(), schema=lambda: {"title": "first"})
    register_route(app, "/described", public("POST"), schema=lambda: {"title": "second"})

    response = client.options("/site-json/test-ns/described")

    assert response.get_json()["schema"] == {"title": "second"}


# ---------------------------------------------------------------------- regex routes
@pytest.fixture
def items(app: App) -> None:
    """A route with a named group, ``/test-ns/items/(?P<id>\\d+)``."""
    register_route(app, r"/items/(?P<id>\d+)", public())


@pytest.mark.usefixtures("items")
def test_named_groups_of_a_route_become_string_url_params(client: Client) -> None:
    response = client.get("/site-json/test-ns/items/42")

    assert response.status_code == 200
    assert response.get_json()["params"] == {"id": "42"}


@pytest.mark.usefixtures("items")
@pytest.mark.parametrize(
    "path",
    [
        "/site-json/test-ns/items/42/extra",
        "/site-json/test-ns/items/abc",
        "/site-json/test-ns/items/",
        "/site-json/prefix/test-ns/items/42",
        "/site-json/test-ns/items/42x",
    ],
)
def test_a_route_pattern_must_match_the_whole_route(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 404
    assert response.get_json()["code"] == "rest_no_route"


@pytest.mark.usefixtures("items")
@pytest.mark.parametrize("path", ["/site-json/TEST-NS/ITEMS/7", "/site-json/Test-Ns/Items/7"])
def test_a_route_pattern_matches_case_insensitively(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 200
    assert response.get_json()["params"] == {"id": "7"}


def test_unnamed_groups_do_not_become_url_params(app: App, client: Client) -> None:
    register_route(app, r"/pairs/(\d+)/(?P<name>\w+)", public())

    response = client.get("/site-json/test-ns/pairs/12/abc")

    assert response.status_code == 200
    assert response.get_json()["params"] == {"name": "abc"}


@pytest.mark.usefixtures("items")
def test_a_query_parameter_beats_the_url_parameter_of_the_same_name(client: Client) -> None:
    assert client.get("/site-json/test-ns/items/12?id=99").get_json()["params"] == {"id": "99"}


@pytest.mark.usefixtures("items")
def test_the_index_keeps_the_raw_pattern_and_gives_no_self_link_to_regex_routes(
    client: Client,
) -> None:
    routes = index_routes(client)

    assert r"/test-ns/items/(?P<id>\d+)" in routes
    assert "_links" not in routes[r"/test-ns/items/(?P<id>\d+)"]
    assert routes["/test-ns"]["_links"] == {
        "self": [{"href": "http://example.org/site-json/test-ns"}]
    }


def test_a_route_without_a_handler_for_the_method_lets_later_routes_answer(
    app: App, client: Client
) -> None:
    register_route(app, r"/things/(?P<id>\d+)", public("GET"))
    register_route(app, r"/things/(?P<slug>\w+)", public("POST"))

    got = client.get("/site-json/test-ns/things/5").get_json()
    posted = client.post("/site-json/test-ns/things/5").get_json()

    assert got["params"] == {"id": "5"}
    assert posted["params"] == {"slug": "5"}


# ---------------------------------------------------------------------- namespace pre-selection
def test_a_route_is_found_in_every_namespace_the_path_starts_with(app: App, client: Client) -> None:
    on_init(app, lambda server: server.register_rest_route("test-ns/v1", "/other", public()))
    on_init(app, lambda server: server.register_rest_route("test-ns", "/v1/test", public()))

    response = client.get("/site-json/test-ns/v1/test")

    assert response.status_code == 200
    assert response.get_json()["route"] == "/test-ns/v1/test"


def test_a_namespace_prefixing_the_path_hides_routes_outside_every_namespace(
    app: App, client: Client
) -> None:
    # WordPress's REST server: once a namespace matches the path, only namespaced routes are tried,
    # and the core batch route belongs to no namespace.
    on_init(app, lambda server: server.register_rest_route("batch", "/other", public()))

    response = client.post("/site-json/batch/v1", json={"requests": []})

    assert response.status_code == 404
    assert response.get_json()["code"] == "rest_no_route"


def test_without_a_plugin_namespace_the_core_batch_route_is_reachable(client: Client) -> None:
    response = client.post("/site-json/batch/v1", json={"requests": []})

    assert response.status_code == 207


def test_an_uppercase_path_still_finds_a_namespaced_route(app: App, client: Client) -> None:
    register_route(app, "/echo", public())

    # "TEST-NS/ECHO/" starts with no namespace, so every route is tried, case-insensitively.
    assert client.get("/site-json/TEST-NS/ECHO").status_code == 200


# ---------------------------------------------------------------------- rest_api_init
def test_rest_api_init_fires_lazily_on_the_first_rest_request_and_only_once(
    app_factory: AppFactory,
) -> None:
    app = app_factory()
    servers: list[RestServer] = []
    app.hooks.add_action("rest_api_init", servers.append)

    assert servers == []
    assert app.hooks.did_action("rest_api_init") == 0

    client = Client(app)
    client.get("/site-json/")
    client.get("/site-json/nothing")
    client.post("/?rest_route=/")

    assert servers == [app.server]
    assert app.hooks.did_action("rest_api_init") == 1


def test_rest_api_init_fires_before_the_first_request_is_routed(app: App, client: Client) -> None:
    register_route(app, "/first", public())

    # The very first REST request already sees the route registered during rest_api_init.
    assert client.get("/site-json/test-ns/first").status_code == 200


def test_each_application_fires_its_own_rest_api_init_once(app_factory: AppFactory) -> None:
    first, second = app_factory(), app_factory()
    fired: list[str] = []
    first.hooks.add_action("rest_api_init", lambda server: fired.append("first"))
    second.hooks.add_action("rest_api_init", lambda server: fired.append("second"))

    Client(first).get("/site-json/")
    Client(first).get("/site-json/")

    assert fired == ["first"]
    Client(second).get("/site-json/")
    assert fired == ["first", "second"]


def test_the_rest_api_init_callback_receives_the_applications_server(
    app: App, client: Client
) -> None:
    received: list[object] = []
    app.hooks.add_action("rest_api_init", received.append)

    client.get("/site-json/")

    assert len(received) == 1
    assert received[0] is app.server
    assert isinstance(received[0], RestServer)


def test_routes_are_listed_in_registration_order_after_the_core_routes(
    app: App, client: Client
) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route("b-ns", "/one", public())
        server.register_rest_route("a-ns", "/two", public())
        server.register_rest_route("b-ns", "/three", public())

    on_init(app, register)

    index = client.get("/site-json/").get_json()

    ours = ("/a-ns", "/b-ns")
    assert [name for name in index["namespaces"] if name in ("a-ns", "b-ns")] == ["b-ns", "a-ns"]
    assert list(index["routes"])[:2] == ["/", "/batch/v1"]
    # A namespace's index route is registered just before its first route.
    assert [route for route in index["routes"] if route.startswith(ours)] == [
        "/b-ns",
        "/b-ns/one",
        "/a-ns",
        "/a-ns/two",
        "/b-ns/three",
    ]


# ---------------------------------------------------------------------- notice wording (#11)
@pytest.mark.parametrize(
    ("namespace", "route", "message"),
    [
        pytest.param(
            "",
            "/echo",
            "Routes must be namespaced with plugin or theme name and version. Instead there "
            "seems to be an empty namespace '' for route '/echo'.",
            id="empty-namespace",
        ),
        pytest.param(
            NS,
            "",
            "Route must be specified. Instead within the namespace 'test-ns', there seems to be "
            "an empty route ''.",
            id="empty-route",
        ),
        pytest.param(
            "/test-ns/",
            "/echo",
            "Namespace must not start or end with a slash. Instead namespace '/test-ns/' for "
            "route '/echo' seems to contain a slash.",
            id="slashed-namespace",
        ),
    ],
)
def test_registration_notices_say_what_wordpress_says(
    app: App, notices: list[Notice], namespace: str, route: str, message: str
) -> None:
    on_init(app, lambda server: server.register_rest_route(namespace, route, public()))

    app.server.ensure_initialized()

    assert notices == [("register_rest_route", message)]


def test_the_outside_rest_api_init_notice_names_the_route_and_namespace(
    app: App, notices: list[Notice]
) -> None:
    app.server.register_rest_route("/test-ns", "early", public())

    assert notices[-1] == (
        "register_rest_route",
        "REST API routes must be registered on the rest_api_init action. Instead route 'early' "
        "with namespace '/test-ns' was not registered on this action.",
    )


def test_the_missing_permission_callback_notice_reaches_every_response_of_the_route(
    app_factory: AppFactory,
) -> None:
    app = app_factory(debug=True)
    register_route(app, "/open", {"methods": "GET", "callback": echo})
    register_route(app, "/closed", public())
    client = Client(app)
    expected = (
        "register_rest_route (The REST API route definition for test-ns/open is missing the "
        "required permission_callback argument. For REST API routes that are intended to be "
        "public, use sitecache.rest.return_true as the permission callback.)"
    )

    headers = [client.get("/site-json/test-ns/open").headers for _ in range(3)]

    assert [h.get("X-Site-DoingItWrong") for h in headers] == [expected] * 3
    assert "X-Site-DoingItWrong" not in client.get("/site-json/test-ns/closed").headers


def test_a_repeated_registration_notice_is_not_sent_outside_debug_mode(
    app: App, client: Client
) -> None:
    register_route(app, "/open", {"methods": "GET", "callback": echo})

    for _ in range(2):
        assert "X-Site-DoingItWrong" not in client.get("/site-json/test-ns/open").headers


# ---------------------------------------------------------------------- args given as a list (#11)
def test_handler_args_given_as_a_list_register_the_route_with_a_notice(
    app: App, client: Client, notices: list[Notice]
) -> None:
    results: list[bool] = []
    on_init(
        app,
        lambda server: results.append(
            server.register_rest_route(NS, "/listed", public(args=[{"type": "integer"}]))
        ),
    )

    response = client.get("/site-json/test-ns/listed?a=1")

    assert results == [True]
    assert response.status_code == 200
    assert response.get_json()["params"] == {"a": "1"}
    assert notices == [
        (
            "register_rest_route",
            "REST API $args should be an array of arrays keyed by parameter name. A list was "
            "given for test-ns/listed.",
        )
    ]
    # PHP's array_merge keys a list by position: the definition becomes argument "0".
    endpoint = index_routes(client)["/test-ns/listed"]["endpoints"][0]
    assert list(endpoint["args"]) == ["0"]


def test_route_level_args_given_as_a_list_register_the_route_too(
    app: App, client: Client, notices: list[Notice]
) -> None:
    register_route(app, "/listed", {"args": ["id"], **public()})

    assert client.get("/site-json/test-ns/listed").status_code == 200
    assert [message.split(".")[0] for _, message in notices] == [
        "REST API $args should be an array of arrays keyed by parameter name",
        "REST API $args should be an array of arrays",
    ]


def test_a_definition_that_is_not_a_mapping_gets_wordpress_notice(
    app: App, client: Client, notices: list[Notice]
) -> None:
    register_route(app, "/odd", public(args={"id": "integer"}))

    assert client.get("/site-json/test-ns/odd").status_code == 200
    assert messages(notices) == [
        "REST API $args should be an array of arrays. Non-array value detected for test-ns/odd."
    ]


# ---------------------------------------------------------------------- namespace-root routes
@pytest.mark.parametrize("route", ["/", "//"])
def test_a_route_of_slash_is_the_namespace_root_and_joins_its_index(
    app: App, client: Client, notices: list[Notice], route: str
) -> None:
    # The full route's slashes are trimmed, so "/" publishes at "/<namespace>" (a
    # namespace-root route): GET stays the namespace index (its first handler), other methods
    # reach the plugin's handler, as for any route sharing the namespace's path (as in
    # WordPress's REST server). WordPress itself would register "/test-ns/", which no HTTP
    # request can reach.
    results: list[bool] = []
    on_init(
        app,
        lambda server: results.append(server.register_rest_route(NS, route, public("POST"))),
    )

    custom = client.post("/site-json/test-ns")
    index = client.get("/site-json/test-ns")

    assert results == [True]
    assert notices == []
    assert list(app.server.get_routes(NS)) == ["/test-ns"]
    assert custom.status_code == 200
    assert custom.get_json()["route"] == "/test-ns"
    assert index.get_json()["namespace"] == NS
    methods = [endpoint["methods"] for endpoint in index_routes(client)["/test-ns"]["endpoints"]]
    assert methods == [["GET"], ["POST"]]


def test_a_namespace_root_route_is_reachable_in_a_batch(app: App, client: Client) -> None:
    register_route(app, "/", public("POST", allow_batch={"v1": True}))

    batch = client.post("/site-json/batch/v1", json={"requests": [{"path": "/test-ns"}]})

    assert batch.get_json()["responses"][0]["body"]["route"] == "/test-ns"


# ---------------------------------------------------------------------- kept matches (#18)
def test_a_route_registered_after_a_match_was_kept_answers_the_next_request(
    app: App, client: Client
) -> None:
    client.get("/site-json/")  # fires rest_api_init
    app.server.register_rest_route(NS, "/kept", public("GET", callback=lambda request: "old"))
    assert client.get("/site-json/test-ns/kept").get_json() == "old"
    assert client.get("/site-json/test-ns/kept").get_json() == "old"  # answered from the memo

    app.server.register_rest_route(
        NS, "/kept", public("GET", callback=lambda request: "new"), override=True
    )

    assert client.get("/site-json/test-ns/kept").get_json() == "new"


def test_a_removed_route_is_not_matched_from_the_memo(app: App, client: Client) -> None:
    client.get("/site-json/")
    app.server.register_rest_route(NS, "/gone", public())
    assert client.get("/site-json/test-ns/gone").status_code == 200

    app.server.registry.remove_routes([f"/{NS}/gone"])

    assert client.get("/site-json/test-ns/gone").get_json()["code"] == "rest_no_route"


def test_a_kept_match_gives_fresh_url_params_each_time(app: App) -> None:
    app.server.register_rest_route(NS, r"/things/(?P<id>\d+)", public())
    registry = app.server.registry
    first = registry.match("GET", f"/{NS}/things/7")
    assert not isinstance(first, RestError)
    first[2]["id"] = "changed by a caller"

    again = registry.match("GET", f"/{NS}/things/7")

    assert not isinstance(again, RestError)
    assert again[2] == {"id": "7"}
    assert again[:2] == first[:2]
