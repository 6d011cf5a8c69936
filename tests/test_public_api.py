"""The public surface the package promises: names, signatures and return conventions.

Renaming or dropping anything listed here breaks plugin authors and conformance suites written
by others; these tests make that a failing build instead of a surprise.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

import sitecache
import sitecache.rest
import sitecache.schema
from sitecache.errors import RestError
from sitecache.hooks import Hooks


def parameters(function: Callable[..., Any]) -> list[tuple[str, Any]]:
    """(name, default) of the positional-or-keyword parameters, in order."""
    return [
        (parameter.name, parameter.default)
        for parameter in inspect.signature(function).parameters.values()
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
    ]


EMPTY = inspect.Parameter.empty

SCHEMA_FUNCTIONS = {
    "validate_value_from_schema": [("value", EMPTY), ("args", EMPTY), ("param", "")],
    "sanitize_value_from_schema": [("value", EMPTY), ("args", EMPTY), ("param", "")],
    "is_boolean": [("value", EMPTY)],
    "is_integer": [("value", EMPTY)],
    "is_array": [("value", EMPTY)],
    "is_object": [("value", EMPTY)],
    "sanitize_boolean": [("value", EMPTY)],
    "sanitize_array": [("value", EMPTY)],
    "sanitize_object": [("value", EMPTY)],
    "get_best_type_for_value": [("value", EMPTY), ("types", EMPTY)],
    "parse_date": [("date", EMPTY), ("force_utc", False)],
    "get_date_with_gmt": [("date", EMPTY), ("is_utc", False)],
    "is_ip_address": [("ip", EMPTY)],
    "parse_hex_color": [("color", EMPTY)],
    "is_uuid": [("uuid", EMPTY), ("version", None)],
    "is_email": [("email", EMPTY)],
    "filter_response_by_context": [("data", EMPTY), ("schema", EMPTY), ("context", EMPTY)],
    "filter_response_fields": [("data", EMPTY), ("fields", EMPTY)],
    "is_field_included": [("field", EMPTY), ("fields", EMPTY)],
    "parse_embed_param": [("embed", EMPTY)],
    "default_additional_properties_to_false": [("schema", EMPTY)],
    "get_endpoint_args_for_schema": [("schema", EMPTY), ("method", "POST")],
}


@pytest.mark.parametrize(("name", "expected"), SCHEMA_FUNCTIONS.items(), ids=list(SCHEMA_FUNCTIONS))
def test_every_schema_function_of_api_md_exists_with_its_signature(
    name: str, expected: list[tuple[str, Any]]
) -> None:
    function = getattr(sitecache.schema, name)
    assert name in sitecache.schema.__all__
    # The single-value predicates may name their argument differently; the order and the
    # defaults are the promise.
    actual = parameters(function)
    if len(expected) == 1:
        assert len(actual) == 1
        assert actual[0][1] is EMPTY
    else:
        assert actual == expected


@pytest.mark.parametrize(
    ("call", "returns"),
    [
        (lambda s: s.validate_value_from_schema(1, {"type": "integer"}), True),
        (lambda s: s.parse_date("2017"), False),
        (lambda s: s.is_ip_address("nope"), False),
        (lambda s: s.parse_hex_color("red"), False),
        (lambda s: s.is_email("nope"), False),
        (lambda s: s.get_best_type_for_value(True, ["integer", "string"]), ""),
        (lambda s: s.get_date_with_gmt("nope"), None),
        (lambda s: s.parse_embed_param(""), True),
    ],
)
def test_schema_functions_return_what_api_md_says(call: Callable[[Any], Any], returns: Any) -> None:
    assert call(sitecache.schema) is returns or call(sitecache.schema) == returns


def test_validation_failures_are_rest_errors() -> None:
    error = sitecache.schema.validate_value_from_schema("x", {"type": "integer"}, "p")
    assert isinstance(error, RestError)
    assert isinstance(error, Exception)
    assert error.to_dict() == {
        "code": "rest_invalid_type",
        "message": "p is not of type integer.",
        "data": {"param": "p"},
    }


def test_rest_error_has_the_api_md_constructor_and_methods() -> None:
    assert parameters(RestError.__init__)[1:] == [
        ("code", EMPTY),
        ("message", EMPTY),
        ("data", None),
    ]
    error = RestError("a", "b", {"status": 400})
    assert callable(error.add)
    assert callable(error.to_dict)


def test_the_rest_package_exports_api_md_names() -> None:
    for name in (
        "RestRequest",
        "RestResponse",
        "validate_request_arg",
        "sanitize_request_arg",
    ):
        assert name in sitecache.rest.__all__
    assert parameters(sitecache.rest.RestRequest.__init__)[1:] == [
        ("method", "GET"),
        ("route", ""),
        ("attributes", None),
    ]
    assert parameters(sitecache.rest.RestResponse.__init__)[1:] == [
        ("data", None),
        ("status", 200),
        ("headers", None),
    ]
    for method in (
        "set_url_params",
        "set_query_params",
        "set_body_params",
        "set_body",
        "set_header",
        "get_header",
        "set_attributes",
        "get_attributes",
        "get_param",
        "get_params",
        "set_param",
        "has_valid_params",
        "sanitize_params",
    ):
        assert callable(getattr(sitecache.rest.RestRequest, method))
    assert parameters(sitecache.rest.RestResponse.add_link)[1:] == [
        ("rel", EMPTY),
        ("href", EMPTY),
        ("attributes", None),
    ]
    for name in ("validate_request_arg", "sanitize_request_arg"):
        assert [p for p, _ in parameters(getattr(sitecache.rest, name))] == [
            "value",
            "request",
            "param",
        ]


def test_the_hooks_have_the_api_md_methods() -> None:
    assert parameters(Hooks.add_action)[1:4] == [
        ("name", EMPTY),
        ("callback", EMPTY),
        ("priority", 10),
    ]
    assert parameters(Hooks.add_filter)[1:4] == [
        ("name", EMPTY),
        ("callback", EMPTY),
        ("priority", 10),
    ]
    for name in ("do_action", "apply_filters", "remove_action", "remove_filter"):
        assert callable(getattr(Hooks, name))


def test_create_app_and_the_server_registration_have_the_api_md_signatures(tmp_path: Any) -> None:
    signature = inspect.signature(sitecache.create_app)
    assert list(signature.parameters)[:2] == ["config", "overrides"]
    assert signature.parameters["config"].default is None
    app = sitecache.create_app({"data_dir": str(tmp_path), "password_hash_cost": 1024})
    assert callable(app)
    for name in ("hooks", "doing_it_wrong", "deprecated_function"):
        assert hasattr(app, name)
    register = inspect.signature(app.server.register_rest_route)
    assert list(register.parameters) == [
        "namespace",
        "route",
        "args",
        "override",
        "route_args",
        "schema",
        "allow_batch",
    ]
    assert register.parameters["override"].default is False
    for keyword in ("route_args", "schema", "allow_batch"):
        assert register.parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY


def test_the_testing_kit_has_the_api_md_names() -> None:
    """Names fixed for plugin authors: sitecache.testing.from_schema(schema) and
    sitecache.testing.check_routes(app) (#20)."""
    import sitecache.testing
    from sitecache.testing.strategies import from_schema

    assert sitecache.testing.from_schema is from_schema
    assert next(iter(inspect.signature(from_schema).parameters)) == "schema"
    assert next(iter(inspect.signature(sitecache.testing.check_routes).parameters)) == "app"
