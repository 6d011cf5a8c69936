"""Hostile and unusual input never turns into a 500, and concurrency never into a 404."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.rest import RestRequest, RestServer, return_true
from tests.rest.support import body_of


def register_echo(app: App) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "robust/v1",
            "/echo",
            {
                "methods": ["GET", "POST"],
                "callback": lambda request: {"n": request["n"], "data": request["data"]},
                "permission_callback": return_true,
                "args": {
                    "n": {"type": "integer", "maximum": 100},
                    "data": {"type": ["object", "array", "number", "null"]},
                },
            },
        )

    app.hooks.add_action("rest_api_init", register)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_bodies_with_nan_or_infinity_are_invalid_json(app: App, constant: str) -> None:
    register_echo(app)
    response = Client(app).post(
        "/site-json/robust/v1/echo",
        data=f'{{"data": {constant}}}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert body_of(response)["code"] == "rest_invalid_json"


def test_json_nested_too_deep_is_refused_with_the_depth_error(app: App) -> None:
    register_echo(app)
    deep = "[" * 200 + "]" * 200
    response = Client(app).post(
        "/site-json/robust/v1/echo", data=f'{{"data": {deep}}}', content_type="application/json"
    )
    assert response.status_code == 400
    assert body_of(response)["data"] == {
        "status": 400,
        "json_error_code": 1,
        "json_error_message": "Maximum stack depth exceeded",
    }


def test_json_nested_within_the_limit_is_accepted(app: App) -> None:
    register_echo(app)
    nested: Any = []
    for _ in range(100):
        nested = [nested]
    response = Client(app).post(
        "/site-json/robust/v1/echo",
        data=json.dumps({"data": nested}),
        content_type="application/json",
    )
    assert response.status_code == 200


def test_an_integer_with_thousands_of_digits_is_a_validation_error(app: App) -> None:
    register_echo(app)
    response = Client(app).get(f"/site-json/robust/v1/echo?n={'9' * 5000}")
    assert response.status_code == 400
    assert body_of(response)["data"]["params"] == {"n": "n must be less than or equal to 100"}


def test_routes_registered_by_a_slow_rest_api_init_are_there_for_concurrent_requests(
    app: App,
) -> None:
    started, proceed = threading.Event(), threading.Event()

    def slow_register(server: RestServer) -> None:
        started.set()
        proceed.wait(timeout=10)
        server.register_rest_route(
            "slow/v1",
            "/ready",
            {"callback": lambda request: "ready", "permission_callback": return_true},
        )

    app.hooks.add_action("rest_api_init", slow_register)
    statuses: list[int] = []

    def fetch() -> None:
        statuses.append(Client(app).get("/site-json/slow/v1/ready").status_code)

    first = threading.Thread(target=fetch)
    first.start()
    assert started.wait(timeout=10)
    second = threading.Thread(target=fetch)
    second.start()
    time.sleep(0.2)  # let the second request reach the server while routes are registering
    proceed.set()
    first.join(timeout=10)
    second.join(timeout=10)
    assert statuses == [200, 200]


def test_rest_api_init_fires_once_even_when_a_callback_dispatches_internally(app: App) -> None:
    fired: list[int] = []

    def register(server: RestServer) -> None:
        fired.append(1)
        inner = RestRequest("GET", "/")
        server.dispatch(inner)  # would re-enter ensure_initialized if it fired again

    app.hooks.add_action("rest_api_init", register)
    Client(app).get("/site-json/")
    Client(app).get("/site-json/")
    assert fired == [1]
