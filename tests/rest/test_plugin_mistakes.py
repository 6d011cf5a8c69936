"""A plugin author's mistakes, found where they are made (a plugin author's trial).

A ``rest_api_init`` callback that raises answers every REST request of the process with the
same 500 naming it, logged once with its traceback (it used to fail the first request only,
then serve without the plugin's routes in silence). Registration mistakes that would only show
at request time (no callable ``callback``, a ``permission_callback`` that is a string, methods
that are not HTTP methods, an edit-only schema property that nothing filters) are
``doing_it_wrong`` notices at registration. An answer that cannot be encoded is logged with
its route and the Python type.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.rest import RestRequest, RestServer, return_true
from tests.rest.conftest import Notice
from tests.rest.support import echo, public

NS = "mistake/v1"


def register(app: App, route: str, args: Any, **options: Any) -> None:
    app.hooks.add_action(
        "rest_api_init", lambda server: server.register_rest_route(NS, route, args, **options)
    )


# ---------------------------------------------------------------------- rest_api_init failing
def broken_init(server: RestServer) -> None:
    server.register_rest_route(NS, "/half", public())
    raise RuntimeError("the plugin's table is missing")


def test_a_failing_rest_api_init_callback_answers_500_on_every_request_and_logs_once(
    app: App, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    register(app, "/fine", public())
    app.hooks.add_action("rest_api_init", broken_init)
    caplog.set_level(logging.ERROR, logger="sitecache.rest")

    answers = [client.get(path) for path in ("/site-json/mistake/v1/fine", "/site-json/")] * 2

    for response in answers:
        assert response.status_code == 500
        body = response.get_json()
        assert body["code"] == "rest_api_init_failed"
        assert "broken_init" in body["message"]
        assert "table is missing" not in body["message"]  # details stay in the log
    logged = [record for record in caplog.records if "rest_api_init" in record.getMessage()]
    assert len(logged) == 1
    assert "broken_init" in logged[0].getMessage()
    assert logged[0].exc_info is not None


def test_rest_api_init_callbacks_that_succeed_leave_requests_alone(
    app: App, client: Client
) -> None:
    register(app, "/fine", public())

    assert client.get("/site-json/mistake/v1/fine").status_code == 200
    assert client.get("/site-json/mistake/v1/fine").status_code == 200
    assert app.server.init_error is None


# ---------------------------------------------------------------------- registration notices
@pytest.mark.parametrize(
    ("handler", "words"),
    [
        pytest.param({"methods": "GET", "permission_callback": return_true},
                     ["no callable callback"], id="no-callback"),
        pytest.param({"methods": "GET", "callback": "echo", "permission_callback": return_true},
                     ["no callable callback", "str"], id="string-callback"),
        pytest.param({"methods": "GET", "callback": echo, "permission_callback": "__return_true"},
                     ["permission_callback", "not callable", "__return_true"],
                     id="string-permission"),
        pytest.param({"methods": "GTE", "callback": echo, "permission_callback": return_true},
                     ["not HTTP methods", "GTE"], id="typo-method"),
        pytest.param({"methods": 7, "callback": echo, "permission_callback": return_true},
                     ["not HTTP methods"], id="no-method"),
    ],
)  # fmt: skip
def test_a_handler_that_can_only_fail_at_request_time_is_a_notice_at_registration(
    app: App, client: Client, notices: list[Notice], handler: dict[str, Any], words: list[str]
) -> None:
    register(app, "/wrong", handler)

    app.server.ensure_initialized()

    [(function, message)] = notices
    assert function == "register_rest_route"
    assert f"{NS}/wrong" in message
    for word in words:
        assert word in message


def test_registration_notices_keep_wordpress_request_time_answers(app: App, client: Client) -> None:
    register(app, "/nothing", {"methods": "GET", "permission_callback": return_true})
    register(app, "/typo", {"methods": "GTE", "callback": echo, "permission_callback": return_true})

    assert client.get("/site-json/mistake/v1/nothing").get_json()["code"] == "rest_invalid_handler"
    assert client.get("/site-json/mistake/v1/typo").status_code == 404


def test_well_formed_handlers_give_no_notice(
    app: App, client: Client, notices: list[Notice]
) -> None:
    register(app, "/right", [public("GET, HEAD"), public(["post", "Put"]), public("OPTIONS")])

    app.server.ensure_initialized()

    assert notices == []


# ---------------------------------------------------------------------- unfiltered edit fields
def secret_schema() -> dict[str, Any]:
    return {
        "title": "secret",
        "type": "object",
        "properties": {
            "name": {"type": "string", "context": ["view", "edit"]},
            "token": {"type": "string", "context": ["edit"]},
        },
    }


def test_edit_only_properties_without_a_context_argument_are_a_notice(
    app: App, client: Client, notices: list[Notice]
) -> None:
    register(app, "/secret", public(), schema=secret_schema)

    app.server.ensure_initialized()

    [(_, message)] = notices
    assert "token" in message
    assert "context argument" in message


def test_a_context_argument_silences_the_edit_only_notice(
    app: App, client: Client, notices: list[Notice]
) -> None:
    context = {"type": "string", "enum": ["view", "edit"], "default": "view"}
    register(app, "/secret", public(args={"context": context}), schema=secret_schema)

    assert client.get("/site-json/mistake/v1/secret").status_code == 200
    assert notices == []


# ---------------------------------------------------------------------- unencodable answers
def test_an_answer_that_cannot_be_encoded_is_logged_with_its_route_and_type(
    app: App, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    def when(request: RestRequest) -> dict[str, Any]:
        return {"at": datetime.date(2026, 1, 2)}

    register(app, "/when", public(callback=when))
    caplog.set_level(logging.ERROR, logger="sitecache.rest")

    response = client.get("/site-json/mistake/v1/when")

    assert response.status_code == 500
    assert response.get_json()["message"] == "Type is not supported"
    [record] = [r for r in caplog.records if "cannot be encoded" in r.getMessage()]
    assert "/mistake/v1/when" in record.getMessage()
    assert "datetime.date" in record.getMessage()
