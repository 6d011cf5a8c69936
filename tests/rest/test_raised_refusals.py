"""Permission callbacks and handlers may raise their `RestError` instead of returning it."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestServer, return_true
from tests.rest.support import body_of

NS = "raise/v1"


@pytest.fixture
def asked(app: App) -> list[str]:
    """``/raise/v1/thing``: GET open to all, DELETE refused by a raise; the callbacks asked."""
    calls: list[str] = []

    def refuse(request: RestRequest) -> bool:
        calls.append(request.get_method())
        raise RestError("no_deleting", "Nobody deletes things.", {"status": 403})

    def gone(request: RestRequest) -> Any:
        raise RestError("thing_gone", "The thing is gone.", {"status": 410, "extra": 1})

    def register(server: RestServer) -> None:
        server.register_rest_route(
            NS,
            "/thing",
            [
                {"methods": "GET", "callback": gone, "permission_callback": return_true},
                {"methods": "DELETE", "callback": gone, "permission_callback": refuse},
            ],
        )

    app.hooks.add_action("rest_api_init", register)
    return calls


def test_a_raised_refusal_answers_as_a_returned_one_and_is_asked_once(
    client: Client, asked: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        response = client.delete(f"/site-json/{NS}/thing")
    assert response.status_code == 403
    assert body_of(response) == {
        "code": "no_deleting",
        "message": "Nobody deletes things.",
        "data": {"status": 403},
    }
    # The Allow header asked the same callback: its raised answer was kept, not logged.
    assert response.headers["Allow"] == "GET"
    assert asked == ["DELETE"]
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


def test_a_handler_that_raises_answers_its_error(client: Client, asked: list[str]) -> None:
    response = client.get(f"/site-json/{NS}/thing")
    assert response.status_code == 410
    assert body_of(response) == {
        "code": "thing_gone",
        "message": "The thing is gone.",
        "data": {"status": 410, "extra": 1},
    }
    assert response.headers["Allow"] == "GET"
    assert asked == ["GET"]  # the Allow header asked the DELETE handler's callback once
