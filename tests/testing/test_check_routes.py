"""`check_routes` over the project's own routes, and over plugins it must catch (#20 point 4).

Every route and method of `create_app()` passes. Then plugin routes with a bug each (a handler
that raises on some input, an answer outside its published schema, a refusal with the wrong
code, a route that answers HTML) must fail with an `AssertionError` naming the route, the method
and the request; and an application on a data directory that is not temporary is refused.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sitecache.app import App, create_app
from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true
from sitecache.testing import check_routes

EXAMPLES = 10


def test_every_route_of_the_project_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The acceptance line of #20: ``check_routes(create_app())`` over every route."""
    monkeypatch.setenv("SITECACHE_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    app = create_app(cache_timers=False, password_hash_cost=1024)
    report = check_routes(app, max_examples=EXAMPLES)
    routes = {key.split(" ", 1)[1] for key in report.requests}
    assert set(app.server.get_routes()) == routes
    assert "DELETE /site/v2/posts/(?P<id>[\\d]+)" in report.requests
    assert min(report.requests.values()) >= 1


def plugin_site(register: Callable[[RestServer], None]) -> Callable[[Path], App]:
    """A factory of throwaway sites with one plugin's routes under ``kit-test/v1``."""

    def factory(data_dir: Path) -> App:
        app = create_app(
            {"data_dir": str(data_dir), "cache_timers": False, "password_hash_cost": 1024}
        )
        app.hooks.add_action("rest_api_init", register)
        return app

    return factory


def one_route(
    callback: Callable[[RestRequest], Any], args: dict[str, Any], **extra: Any
) -> Callable[[RestServer], None]:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "kit-test/v1",
            "/thing",
            {"methods": "GET, POST", "callback": callback, "permission_callback": return_true,
             "args": args},
            **extra,
        )  # fmt: skip

    return register


def failure(register: Callable[[RestServer], None]) -> str:
    with pytest.raises(AssertionError) as raised:
        check_routes(plugin_site(register), namespaces=["kit-test/v1"], max_examples=40)
    return str(raised.value)


def test_a_handler_that_raises_on_some_input_is_named_with_its_request() -> None:
    def divide(request: RestRequest) -> dict[str, Any]:
        return {"ratio": 100 // int(request["count"])}

    message = failure(one_route(divide, {"count": {"type": "integer", "required": True}}))
    assert "/kit-test/v1/thing" in message
    assert "answered 500" in message
    assert "count" in message
    assert message.split(":", 1)[0] in ("GET /kit-test/v1/thing", "POST /kit-test/v1/thing")


def test_an_answer_outside_the_published_schema_is_caught() -> None:
    schema = {
        "type": "object",
        "properties": {"size": {"type": "integer", "minimum": 0, "context": ["view", "edit"]}},
    }
    message = failure(one_route(lambda request: {"size": -1}, {}, schema=lambda: schema))
    assert "answered size=-1" in message
    assert "must be greater than or equal to 0" in message


def test_a_refusal_with_another_code_than_the_rules_is_caught() -> None:
    def register(server: RestServer) -> None:
        one_route(
            lambda request: {"ok": True}, {"when": {"type": "string", "format": "date-time"}}
        )(server)

        def rename(result: Any, handler: Any, request: RestRequest) -> Any:
            if isinstance(result, RestError):  # a plugin that "simplifies" every refusal
                return RestError("bad_request", "Bad request.", {"status": 400})
            return result

        server.hooks.add_filter("rest_request_before_callbacks", rename)

    message = failure(register)
    assert "argument 'when' should be refused with rest_invalid_" in message
    assert '"code": "bad_request"' in message


def test_an_answer_that_is_not_json_is_caught() -> None:
    def html(request: RestRequest) -> RestResponse:
        response = RestResponse("<p>hello</p>")
        response.header("Content-Type", "text/html")
        return response

    message = failure(one_route(html, {}))
    assert "not JSON" in message


def test_an_application_on_a_lasting_data_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The application's data is in this test's directory, which the temporary directory is
    # made not to contain: to check_routes it is a lasting one (nothing is written elsewhere).
    app = create_app({"data_dir": str(tmp_path / "lasting"), "cache_timers": False})
    elsewhere = tmp_path / "temporary"
    elsewhere.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(elsewhere))
    with pytest.raises(ValueError, match="data_dir"):
        check_routes(app)


def test_the_factory_gets_a_temporary_directory_removed_afterwards() -> None:
    seen: list[Path] = []

    def factory(data_dir: Path) -> App:
        seen.append(data_dir)
        return plugin_site(one_route(lambda request: {"ok": True}, {}))(data_dir)

    report = check_routes(factory, namespaces=["kit-test/v1"], max_examples=3)
    assert report.total >= 3
    assert seen
    assert not seen[0].exists()


def test_a_namespace_without_routes_is_refused_rather_than_checked_vacuously() -> None:
    """A typo in ``namespaces`` used to check nothing and pass."""
    register = one_route(lambda request: {"ok": True}, {})

    with pytest.raises(ValueError, match="nosuch/v1") as raised:
        check_routes(plugin_site(register), namespaces=["nosuch/v1", "kit-test/v1"])

    assert "kit-test/v1" not in str(raised.value).split(";")[0]
    assert "registered namespaces: " in str(raised.value)
    assert "kit-test/v1" in str(raised.value).split(";")[1]


def test_a_failing_rest_api_init_fails_the_check() -> None:
    def register(server: RestServer) -> None:
        raise RuntimeError("plugin bug")

    with pytest.raises(AssertionError, match="rest_api_init"):
        check_routes(plugin_site(register), namespaces=["kit-test/v1"])
