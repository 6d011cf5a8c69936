"""Every user route's GET answers validate against the route's own published schema.

The walk finds the routes in the registry (so a new user route is walked too), asks each in
every context as an administrator, and validates each item with
`sitecache.schema.validate_value_from_schema` against the schema OPTIONS publishes, narrowed to
the properties of that context. The same user schema validates the command line's input.
"""

from __future__ import annotations

from typing import Any

import pytest

from sitecache.auth.users_schema import USER_SCHEMA, check_user_input
from sitecache.domain_errors import InvalidValueError
from sitecache.errors import RestError
from sitecache.schema import validate_value_from_schema
from tests.auth.conftest import Site
from tests.conftest import rest_error_of

CONTEXTS = ("view", "embed", "edit")


def schema_for_context(schema: dict[str, Any], context: str) -> dict[str, Any]:
    """The schema with only the properties shown in ``context``."""
    properties = {
        name: definition
        for name, definition in schema["properties"].items()
        if context in definition.get("context", CONTEXTS)
    }
    return {**schema, "properties": properties}


def user_routes(site: Site) -> list[str]:
    site.app.server.ensure_initialized()
    routes = site.app.server.get_routes("site/v2")
    found = [
        route
        for route in routes
        if route.startswith("/site/v2/users") and "application-passwords" not in route
    ]
    assert len(found) == 3, found
    return found


def test_every_user_route_answers_get_with_data_its_schema_accepts(site: Site) -> None:
    client = site.client()
    headers = site.basic("administrator")
    site.app.auth.users.update(
        site.users["author"],
        {"url": "https://aurora.example", "description": "Writes.", "locale": "en_US"},
    )
    walked = 0
    for route in user_routes(site):
        path = "/site-json" + route.replace("(?P<id>[\\d]+)", str(site.users["author"].id))
        options = client.open(path, method="OPTIONS", headers=headers)
        assert options.status_code == 200, (route, options.get_json())
        schema = options.get_json()["schema"]
        for context in CONTEXTS:
            response = client.get(path, query_string={"context": context}, headers=headers)
            assert response.status_code == 200, (route, context, response.get_json())
            items = (
                response.get_json()
                if isinstance(response.get_json(), list)
                else [response.get_json()]
            )
            assert items, route
            narrowed = schema_for_context(schema, context)
            for item in items:
                data = {key: value for key, value in item.items() if key != "_links"}
                assert set(data) == set(narrowed["properties"]), (route, context)
                result = validate_value_from_schema(data, narrowed, "user")
                assert result is True, (route, context, result)
                walked += 1
    assert walked >= 3 * 3


def test_every_user_write_answers_with_data_its_schema_accepts(site: Site) -> None:
    client = site.client()
    headers = site.basic("administrator")
    site.app.server.ensure_initialized()
    schema = schema_for_context(site.app.auth.user_routes.schema(), "edit")

    def check(item: dict[str, Any]) -> None:
        data = {key: value for key, value in item.items() if key != "_links"}
        assert set(data) == set(schema["properties"])
        assert validate_value_from_schema(data, schema, "user") is True

    created = client.post(
        "/site-json/site/v2/users",
        json={"username": "new", "email": "new@example.org", "password": "new-password"},
        headers=headers,
    )
    assert created.status_code == 201
    check(created.get_json())
    path = f"/site-json/site/v2/users/{created.get_json()['id']}"
    for method in ("POST", "PUT", "PATCH"):
        updated = client.open(path, method=method, json={"nickname": method}, headers=headers)
        assert updated.status_code == 200
        check(updated.get_json())
    me = client.post("/site-json/site/v2/users/me", json={"first_name": "Ada"}, headers=headers)
    check(me.get_json())
    deleted = client.delete(
        path, query_string={"force": "true", "reassign": "false"}, headers=headers
    )
    assert deleted.status_code == 200
    check(deleted.get_json()["previous"])


def test_the_walk_would_catch_a_field_of_the_wrong_type(site: Site) -> None:
    site.app.server.ensure_initialized()
    schema = schema_for_context(site.app.auth.user_routes.schema(), "edit")
    user = site.app.auth.users.get(site.users["author"].id)
    assert user is not None
    data = site.app.auth.user_routes.prepare(user).get_data()
    data = {key: value for key, value in data.items() if key in schema["properties"]}
    assert validate_value_from_schema(data, schema, "user") is True
    broken = validate_value_from_schema({**data, "id": "seven"}, schema, "user")
    assert isinstance(broken, RestError)


@pytest.mark.parametrize(
    ("values", "param"),
    [
        ({"username": "bad/login"}, "username"),
        ({"email": "nope"}, "email"),
        ({"password": "short"}, "password"),
        ({"locale": "xx"}, "locale"),
    ],
)
def test_the_command_line_is_checked_by_the_same_arguments(
    values: dict[str, Any], param: str
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        check_user_input("PUT", values)
    result = rest_error_of(caught.value)
    assert result.code == "rest_invalid_param"
    assert param in result.data["params"]


def test_checked_input_comes_back_sanitized() -> None:
    result = check_user_input("PUT", {"username": " jo ", "name": "Jo <b>S</b>", "email": None})
    assert result == {"username": "jo", "name": "Jo S"}


def test_creating_requires_what_the_post_route_requires() -> None:
    with pytest.raises(InvalidValueError) as caught:
        check_user_input("POST", {"username": "jo"})
    result = rest_error_of(caught.value)
    assert result.code == "rest_missing_callback_param"
    assert set(result.data["params"]) == {"email", "password"}


def test_the_schema_marks_the_password_write_only() -> None:
    assert USER_SCHEMA["properties"]["password"]["context"] == []
