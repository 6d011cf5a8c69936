"""Domain exceptions become REST errors once, at the REST boundary (falcon's add_error_handler)."""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.domain_errors import (
    ConflictError,
    DomainError,
    ForbiddenError,
    GoneError,
    InvalidValueError,
    NotFoundError,
    NumberOutOfRange,
    UnauthorizedError,
)
from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestServer, return_true
from sitecache.rest.error_handlers import ErrorHandlers
from sitecache.rest.refusals import check_value, raise_refusal
from tests.rest.support import body_of


class WidgetMissingError(NotFoundError):
    """A plugin's own kind of not-found, without a handler of its own."""


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        (DomainError, 400),
        (InvalidValueError, 400),
        (UnauthorizedError, 401),
        (ForbiddenError, 403),
        (NotFoundError, 404),
        (ConflictError, 409),
        (GoneError, 410),
        (WidgetMissingError, 404),
    ],
)
def test_each_kind_of_refusal_answers_with_its_status_code_message_and_details(
    kind: type[DomainError], status: int
) -> None:
    error = ErrorHandlers().to_rest_error(kind("some_code", "Some message.", {"params": {"a": 1}}))
    assert error.to_dict() == {
        "code": "some_code",
        "message": "Some message.",
        "data": {"status": status, "params": {"a": 1}},
    }


def test_a_refusal_without_details_answers_with_the_status_alone() -> None:
    error = ErrorHandlers().to_rest_error(GoneError("rest_already_trashed", "Gone."))
    assert (error.code, error.message, error.data) == (
        "rest_already_trashed",
        "Gone.",
        {"status": 410},
    )


def test_the_most_specific_handler_wins_and_leaves_the_other_kinds_alone() -> None:
    handlers = ErrorHandlers()
    handlers.add(
        WidgetMissingError, lambda error: RestError("widget_gone", error.message, {"status": 410})
    )
    assert handlers.to_rest_error(WidgetMissingError("x", "No widget.")).to_dict() == {
        "code": "widget_gone",
        "message": "No widget.",
        "data": {"status": 410},
    }
    assert handlers.to_rest_error(NotFoundError("x", "No post.")).status == 404


def register(app: App, callback: Any, permission: Any = return_true) -> None:
    def add_routes(server: RestServer) -> None:
        server.register_rest_route(
            "refusals/v1",
            "/thing",
            {"methods": "GET", "callback": callback, "permission_callback": permission},
        )

    app.hooks.add_action("rest_api_init", add_routes)


def missing(request: RestRequest) -> Any:
    raise WidgetMissingError("widget_missing", "No such widget.", {"widget": 7})


def test_a_handler_raising_a_domain_exception_is_answered_by_the_table(app: App) -> None:
    register(app, missing)
    response = Client(app).get("/site-json/refusals/v1/thing")
    assert response.status_code == 404
    assert body_of(response) == {
        "code": "widget_missing",
        "message": "No such widget.",
        "data": {"status": 404, "widget": 7},
    }


def test_a_permission_callback_raising_a_domain_exception_is_answered_the_same_way(
    app: App,
) -> None:
    def refuse(request: RestRequest) -> bool:
        raise ForbiddenError("thing_locked", "The thing is locked.")

    register(app, lambda request: {"never": "called"}, refuse)
    response = Client(app).get("/site-json/refusals/v1/thing")
    assert (response.status_code, body_of(response)["code"]) == (403, "thing_locked")


def test_add_error_handler_changes_the_answer_of_a_kind(app: App) -> None:
    register(app, missing)
    app.server.add_error_handler(
        WidgetMissingError,
        lambda error: RestError("rest_no_route", "No route was found.", {"status": 404}),
    )
    response = Client(app).get("/site-json/refusals/v1/thing")
    assert body_of(response) == {
        "code": "rest_no_route",
        "message": "No route was found.",
        "data": {"status": 404},
    }


def test_an_authenticator_raising_a_domain_exception_refuses_the_request(app: App) -> None:
    class Refusing:
        def authenticate(self, request: RestRequest) -> None:
            if request.get_header("x_refuse"):
                raise UnauthorizedError("bad_token", "The token is not valid.")

    register(app, lambda request: {"ok": True})
    app.server.add_authenticator(Refusing(), priority=1)
    client = Client(app)
    refused = client.get("/site-json/refusals/v1/thing", headers={"X-Refuse": "1"})
    assert (refused.status_code, body_of(refused)["code"]) == (401, "bad_token")
    assert client.get("/site-json/refusals/v1/thing").status_code == 200


def test_schema_refusals_become_invalid_value_errors_with_their_data() -> None:
    schema = {"type": "integer", "minimum": 1}
    check_value(3, schema, "count")
    with pytest.raises(InvalidValueError) as caught:
        check_value("many", schema, "count")
    assert (caught.value.code, caught.value.message) == (
        "rest_invalid_type",
        "count is not of type integer.",
    )
    assert caught.value.details == {"param": "count"}
    with pytest.raises(InvalidValueError) as bare:
        check_value("many", schema, "count", with_details=False)
    assert bare.value.details == {}


def test_a_refusal_keeps_its_data_but_never_its_status() -> None:
    raise_refusal(True)
    with pytest.raises(InvalidValueError) as caught:
        raise_refusal(
            RestError("rest_invalid_param", "Bad.", {"status": 400, "params": {"a": "x"}})
        )
    assert caught.value.details == {"params": {"a": "x"}}


def too_large(request: RestRequest) -> Any:
    raise NumberOutOfRange.past_64_bits()


def test_the_stores_refusal_of_a_huge_integer_names_the_arguments_holding_one(app: App) -> None:
    register(app, too_large)
    response = Client(app).get(
        "/site-json/refusals/v1/thing", json={"fine": 5, "ids": [1, {"n": 2**64}], "big": -(2**70)}
    )
    assert response.status_code == 400
    body = body_of(response)
    assert body["message"] == "Invalid parameter(s): ids, big"
    between = f"between {-(2**63)} (inclusive) and {2**63 - 1} (inclusive)"
    assert body["data"]["params"] == {
        "ids": f"ids[1][n] must be {between}",
        "big": f"big must be {between}",
    }
    assert set(body["data"]["details"]) == {"ids", "big"}


def test_the_stores_refusal_stays_unnamed_when_no_argument_holds_a_huge_integer(
    app: App,
) -> None:
    register(app, too_large)
    response = Client(app).get("/site-json/refusals/v1/thing?n=5")
    assert response.status_code == 400
    assert body_of(response) == {
        "code": "rest_invalid_param",
        "message": "A number given is too large (at most 9223372036854775807).",
        "data": {"status": 400},
    }
