"""Route arguments derived from a resource schema, and the default argument callbacks.

Rows follow WordPress's schema functions "Schema tools" (``get_endpoint_args_for_schema``,
``default_additional_properties_to_false``), §1 (``validate_request_arg``,
``sanitize_request_arg``, ``parse_request_arg``) and WordPress's argument derivation.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from sitecache.errors import RestError
from sitecache.schema import (
    ALLOWED_SCHEMA_KEYWORDS,
    default_additional_properties_to_false,
    get_endpoint_args_for_schema,
    parse_request_arg,
    sanitize_request_arg,
    validate_request_arg,
)

CREATABLE = "POST"
EDITABLE = "POST, PUT, PATCH"
COPIED_KEYWORDS = (
    "title",
    "description",
    "type",
    "format",
    "enum",
    "items",
    "properties",
    "additionalProperties",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "anyOf",
    "oneOf",
)
"""WordPress's schema functions: the keywords copied onto an argument, in their fixed order."""


class FakeRequest:
    """The least a request must offer the argument callbacks: its handler attributes."""

    def __init__(self, attributes: Mapping[str, Any] | None = None) -> None:
        self._attributes = dict(attributes or {})

    def get_attributes(self) -> Mapping[str, Any]:
        return self._attributes


def return_true(*_: object) -> bool:
    """Stands in for WordPress's ``__return_true`` as an ``arg_options`` callback."""
    return True


def error_of(result: object) -> RestError:
    """``result`` as a `RestError`, failing the test when it is anything else."""
    assert isinstance(result, RestError), f"expected a RestError, got {result!r}"
    return result


# ---------------------------------------------------------------------- the test controller
def item_schema() -> dict[str, Any]:
    """A resource schema in the spirit of WordPress's REST test controller."""
    return {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "title": "type",
        "type": "object",
        "properties": {
            "somestring": {
                "type": "string",
                "description": "A pretty string.",
                "minLength": 3,
                "maxLength": 10,
                "pattern": "^a",
                "context": ["view"],
            },
            "someinteger": {
                "type": "integer",
                "minimum": 100,
                "maximum": 200,
                "exclusiveMinimum": True,
                "exclusiveMaximum": True,
                "multipleOf": 10,
                "context": ["view"],
            },
            "someboolean": {"type": "boolean", "context": ["view"]},
            "someurl": {"type": "string", "format": "uri", "context": ["view"]},
            "somedate": {"type": "string", "format": "date-time", "context": ["view"]},
            "someemail": {"type": "string", "format": "email", "context": ["view"]},
            "someenum": {"type": "string", "enum": ["a", "b", "c"], "context": ["view"]},
            "somearray": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": 10,
                "uniqueItems": True,
                "context": ["view"],
            },
            "someobject": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "properties": {"object_id": {"type": "integer"}},
                "patternProperties": {"[0-9]": {"type": "string"}},
                "minProperties": 1,
                "maxProperties": 10,
                "ignored_prop": "ignored_prop",
                "context": ["view"],
            },
            "someargoptions": {
                "type": "integer",
                "required": True,
                "arg_options": {"required": False, "sanitize_callback": return_true},
            },
            "somedefault": {
                "type": "string",
                "enum": ["a", "b", "c"],
                "context": ["view"],
                "default": "a",
            },
            "somerequired": {"type": "string", "required": True},
            "readonlyprop": {"type": "string", "readonly": True},
        },
    }


def test_readonly_properties_yield_no_argument() -> None:
    for method in (CREATABLE, EDITABLE):
        args = get_endpoint_args_for_schema(item_schema(), method)
        assert "readonlyprop" not in args
        assert "someinteger" in args


def test_a_falsy_readonly_does_not_skip_the_property() -> None:
    schema = {"properties": {"p": {"type": "string", "readonly": False}}}
    assert "p" in get_endpoint_args_for_schema(schema)


def test_method_defaults_to_creatable() -> None:
    args = get_endpoint_args_for_schema(item_schema())
    assert args["somedefault"]["default"] == "a"
    assert args["somerequired"]["required"] is True


def test_default_and_required_are_copied_for_post() -> None:
    args = get_endpoint_args_for_schema(item_schema(), CREATABLE)
    assert args["somedefault"]["default"] == "a"
    assert args["somerequired"]["required"] is True
    assert "required" not in args["somestring"]
    assert "default" not in args["somestring"]


@pytest.mark.parametrize(
    "method",
    [
        pytest.param(EDITABLE, id="editable"),
        pytest.param("PUT", id="put"),
        pytest.param("PATCH", id="patch"),
        pytest.param("GET", id="get"),
        pytest.param("post", id="lowercase-post"),
    ],
)
def test_default_and_required_are_dropped_unless_the_method_is_exactly_post(method: str) -> None:
    args = get_endpoint_args_for_schema(item_schema(), method)
    assert "default" not in args["somedefault"]
    assert "required" not in args["somerequired"]
    assert args["somedefault"]["enum"] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("definition", "expected"),
    [
        pytest.param({"type": "boolean", "default": False}, False, id="false-default"),
        pytest.param({"type": "integer", "default": 0}, 0, id="zero-default"),
        pytest.param({"type": "string", "default": ""}, "", id="empty-string-default"),
    ],
)
def test_a_falsy_but_non_null_default_is_copied(definition: dict[str, Any], expected: Any) -> None:
    args = get_endpoint_args_for_schema({"properties": {"p": definition}}, CREATABLE)
    assert args["p"]["default"] == expected
    assert type(args["p"]["default"]) is type(expected)


def test_a_null_default_is_not_copied() -> None:
    schema = {"properties": {"p": {"type": "string", "default": None}}}
    assert "default" not in get_endpoint_args_for_schema(schema, CREATABLE)["p"]


@pytest.mark.parametrize(
    ("required", "expected"),
    [
        pytest.param(True, True, id="true"),
        pytest.param("yes", True, id="truthy-string"),
        pytest.param(1, True, id="truthy-int"),
        pytest.param(False, None, id="false"),
        pytest.param(0, None, id="zero"),
    ],
)
def test_required_becomes_true_when_truthy_on_post(required: Any, expected: bool | None) -> None:
    schema = {"properties": {"p": {"type": "string", "required": required}}}
    argument = get_endpoint_args_for_schema(schema, CREATABLE)["p"]
    assert argument.get("required") is expected


def test_every_allowed_keyword_is_copied() -> None:
    args = get_endpoint_args_for_schema(item_schema(), EDITABLE)
    assert args["someinteger"] == {
        "validate_callback": args["someinteger"]["validate_callback"],
        "sanitize_callback": args["someinteger"]["sanitize_callback"],
        "type": "integer",
        "minimum": 100,
        "maximum": 200,
        "exclusiveMinimum": True,
        "exclusiveMaximum": True,
        "multipleOf": 10,
    }
    assert args["somestring"]["description"] == "A pretty string."
    assert args["somestring"]["pattern"] == "^a"
    assert args["someurl"]["format"] == "uri"
    assert args["somearray"]["items"] == {"type": "string"}
    assert args["somearray"]["uniqueItems"] is True
    someobject = args["someobject"]
    assert someobject["additionalProperties"] == {"type": "string"}
    assert someobject["properties"] == {"object_id": {"type": "integer"}}
    assert someobject["patternProperties"] == {"[0-9]": {"type": "string"}}
    assert (someobject["minProperties"], someobject["maxProperties"]) == (1, 10)


def test_context_readonly_arg_options_and_custom_keys_are_not_copied() -> None:
    args = get_endpoint_args_for_schema(item_schema(), CREATABLE)
    for argument in args.values():
        assert "context" not in argument
        assert "readonly" not in argument
        assert "arg_options" not in argument
    assert "ignored_prop" not in args["someobject"]
    schema = {"properties": {"p": {"type": "string", "readonly": False, "x-custom": 1}}}
    argument = get_endpoint_args_for_schema(schema)["p"]
    assert set(argument) == {"validate_callback", "sanitize_callback", "type"}


def test_keywords_are_copied_in_the_fixed_keyword_order() -> None:
    definition = {
        "oneOf": [{"type": "string"}],
        "enum": ["a"],
        "type": "string",
        "description": "d",
        "title": "t",
        "required": True,
        "default": "a",
        "context": ["view"],
    }
    argument = get_endpoint_args_for_schema({"properties": {"p": definition}}, CREATABLE)["p"]
    assert list(argument) == [
        "validate_callback",
        "sanitize_callback",
        "default",
        "required",
        "title",
        "description",
        "type",
        "enum",
        "oneOf",
    ]


def test_every_allowed_keyword_is_copied_in_the_fixed_keyword_order() -> None:
    definition = {keyword: f"value of {keyword}" for keyword in reversed(COPIED_KEYWORDS)}
    argument = get_endpoint_args_for_schema({"properties": {"p": definition}}, EDITABLE)["p"]
    assert list(argument) == ["validate_callback", "sanitize_callback", *COPIED_KEYWORDS]
    assert all(argument[keyword] == f"value of {keyword}" for keyword in COPIED_KEYWORDS)


def test_the_exported_keyword_list_is_the_copied_keywords_plus_default() -> None:
    assert set(ALLOWED_SCHEMA_KEYWORDS) == {*COPIED_KEYWORDS, "default"}


def test_arg_options_override_required_on_post() -> None:
    argument = get_endpoint_args_for_schema(item_schema(), CREATABLE)["someargoptions"]
    assert argument["required"] is False
    assert argument["sanitize_callback"] is return_true


def test_arg_options_lose_required_and_default_on_editable() -> None:
    argument = get_endpoint_args_for_schema(item_schema(), EDITABLE)["someargoptions"]
    assert "required" not in argument
    assert argument["sanitize_callback"] is return_true


def test_arg_options_default_is_kept_only_on_post() -> None:
    definition = {"type": "string", "arg_options": {"default": "x", "description": "from options"}}
    schema = {"properties": {"p": definition}}
    created = get_endpoint_args_for_schema(schema, CREATABLE)["p"]
    edited = get_endpoint_args_for_schema(schema, EDITABLE)["p"]
    assert created["default"] == "x"
    assert "default" not in edited
    assert created["description"] == edited["description"] == "from options"


def test_arg_options_can_replace_the_validate_callback() -> None:
    schema = {"properties": {"p": {"type": "string", "arg_options": {"validate_callback": None}}}}
    assert get_endpoint_args_for_schema(schema)["p"]["validate_callback"] is None


def test_a_schema_without_properties_yields_no_arguments() -> None:
    assert get_endpoint_args_for_schema({"type": "object"}) == {}
    assert get_endpoint_args_for_schema({"type": "object", "properties": {}}) == {}


def test_the_default_callbacks_validate_through_the_request_arguments() -> None:
    args = get_endpoint_args_for_schema(item_schema(), CREATABLE)
    request = FakeRequest({"args": args})
    validate = args["someinteger"]["validate_callback"]
    assert callable(validate)
    assert validate(150, request, "someinteger") is True
    error = error_of(validate(100, request, "someinteger"))
    assert error.code == "rest_invalid_param"
    assert error.message == ("someinteger must be between 100 (exclusive) and 200 (exclusive)")
    error = error_of(validate(155, request, "someinteger"))
    assert error.message == "someinteger must be a multiple of 10."
    error = error_of(validate("abc", request, "someinteger"))
    assert error.code == "rest_invalid_type"
    assert error.message == "someinteger is not of type integer."
    assert error.data == {"param": "someinteger"}


def test_the_default_callbacks_sanitize_through_the_request_arguments() -> None:
    args = get_endpoint_args_for_schema(item_schema(), CREATABLE)
    request = FakeRequest({"args": args})
    sanitize = args["somearray"]["sanitize_callback"]
    assert callable(sanitize)
    assert sanitize("a, b", request, "somearray") == ["a", "b"]
    assert args["someinteger"]["sanitize_callback"]("150", request, "someinteger") == 150
    assert args["someboolean"]["sanitize_callback"]("false", request, "someboolean") is False


def test_the_default_callbacks_look_up_the_named_parameter() -> None:
    args = get_endpoint_args_for_schema(item_schema(), CREATABLE)
    request = FakeRequest({"args": args})
    validate = args["someinteger"]["validate_callback"]
    # The same callback object serves every argument: the param name selects the schema.
    error = error_of(validate("xyz", request, "someenum"))
    assert error.message == "someenum is not one of a, b, and c."
    assert validate("b", request, "someenum") is True


# ------------------------------------------------------------ default additionalProperties
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param(
            {"type": "object"},
            {"type": "object", "additionalProperties": False},
            id="object",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "object"}, "b": {"type": "string"}}},
            {
                "type": "object",
                "properties": {
                    "a": {"type": "object", "additionalProperties": False},
                    "b": {"type": "string"},
                },
                "additionalProperties": False,
            },
            id="recurses-into-properties",
        ),
        pytest.param(
            {"type": "object", "patternProperties": {"^x": {"type": "object"}}},
            {
                "type": "object",
                "patternProperties": {"^x": {"type": "object", "additionalProperties": False}},
                "additionalProperties": False,
            },
            id="recurses-into-pattern-properties",
        ),
        pytest.param(
            {"type": "array", "items": {"type": "object"}},
            {"type": "array", "items": {"type": "object", "additionalProperties": False}},
            id="recurses-into-items",
        ),
        pytest.param(
            {
                "type": "array",
                "items": {"type": "array", "items": {"type": "object", "properties": {}}},
            },
            {
                "type": "array",
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {}, "additionalProperties": False},
                },
            },
            id="nested-items",
        ),
        pytest.param(
            {"type": ["object", "null"]},
            {"type": ["object", "null"], "additionalProperties": False},
            id="type-list-with-object",
        ),
        pytest.param(
            {"type": ["array", "object"], "items": {"type": "object"}},
            {
                "type": ["array", "object"],
                "items": {"type": "object", "additionalProperties": False},
                "additionalProperties": False,
            },
            id="type-list-with-array-and-object",
        ),
        pytest.param(
            {"type": "object", "additionalProperties": True},
            {"type": "object", "additionalProperties": True},
            id="explicit-true-kept",
        ),
        pytest.param(
            {"type": "object", "additionalProperties": {"type": "object"}},
            {"type": "object", "additionalProperties": {"type": "object"}},
            id="explicit-schema-kept-as-is",
        ),
        pytest.param(
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {"a": {"type": "object"}},
            },
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {"a": {"type": "object", "additionalProperties": False}},
            },
            id="explicit-false-kept-children-still-visited",
        ),
        pytest.param(
            {"properties": {"a": {"type": "object"}}},
            {"properties": {"a": {"type": "object"}}},
            id="missing-type-unchanged",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"properties": {"b": {"type": "object"}}}}},
            {
                "type": "object",
                "properties": {"a": {"properties": {"b": {"type": "object"}}}},
                "additionalProperties": False,
            },
            id="child-without-type-unchanged",
        ),
        pytest.param(
            {"type": "string"},
            {"type": "string"},
            id="string-unchanged",
        ),
        pytest.param(
            {"type": "string", "items": {"type": "object"}},
            {"type": "string", "items": {"type": "object"}},
            id="items-of-non-array-not-visited",
        ),
        pytest.param(
            {"type": "array", "properties": {"a": {"type": "object"}}},
            {"type": "array", "properties": {"a": {"type": "object"}}},
            id="properties-of-non-object-not-visited",
        ),
    ],
)
def test_default_additional_properties_to_false(
    schema: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert default_additional_properties_to_false(schema) == expected


def test_default_additional_properties_to_false_does_not_modify_its_input() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "object", "properties": {"b": {"type": "object"}}}},
        "patternProperties": {"^x": {"type": "object"}},
    }
    original = copy.deepcopy(schema)
    result = default_additional_properties_to_false(schema)
    assert schema == original
    assert result["properties"]["a"]["properties"]["b"]["additionalProperties"] is False


# ---------------------------------------------------------------------- request-arg callbacks
COUNT_ARGS = {"args": {"count": {"type": "integer", "minimum": 1}}}


@pytest.mark.parametrize(
    "attributes",
    [
        pytest.param({}, id="no-args-attribute"),
        pytest.param({"args": "not a map"}, id="args-not-a-map"),
        pytest.param({"args": {}}, id="param-not-declared"),
        pytest.param({"args": {"count": "not a map"}}, id="definition-not-a-map"),
    ],
)
def test_request_arg_callbacks_pass_values_through_without_a_definition(
    attributes: dict[str, Any],
) -> None:
    request = FakeRequest(attributes)
    assert validate_request_arg("abc", request, "count") is True
    assert sanitize_request_arg("abc", request, "count") == "abc"
    assert parse_request_arg("abc", request, "count") == "abc"


@pytest.mark.parametrize(
    ("value", "code", "message"),
    [
        pytest.param("abc", "rest_invalid_type", "count is not of type integer.", id="type"),
        pytest.param(0, "rest_invalid_param", "count must be greater than or equal to 1", id="min"),
        pytest.param("1.5", "rest_invalid_type", "count is not of type integer.", id="fraction"),
    ],
)
def test_validate_request_arg_applies_the_argument_schema_with_its_name(
    value: object, code: str, message: str
) -> None:
    error = error_of(validate_request_arg(value, FakeRequest(COUNT_ARGS), "count"))
    assert (error.code, error.message) == (code, message)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("5", 5, id="numeric-string"),
        pytest.param(5, 5, id="int"),
        pytest.param("7.9", 7, id="truncated"),
    ],
)
def test_sanitize_request_arg_applies_the_argument_schema(value: object, expected: int) -> None:
    result = sanitize_request_arg(value, FakeRequest(COUNT_ARGS), "count")
    assert result == expected
    assert type(result) is int


def test_sanitize_request_arg_uses_the_param_in_nested_errors() -> None:
    attributes = {
        "args": {"ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": 1}}
    }
    error = error_of(sanitize_request_arg("1,01", FakeRequest(attributes), "ids"))
    assert (error.code, error.message) == ("rest_invalid_param", "ids has duplicate items.")


def test_parse_request_arg_returns_the_validation_error() -> None:
    error = error_of(parse_request_arg("abc", FakeRequest(COUNT_ARGS), "count"))
    assert error.code == "rest_invalid_type"
    assert error.data == {"param": "count"}


def test_parse_request_arg_sanitizes_a_valid_value() -> None:
    assert parse_request_arg("5", FakeRequest(COUNT_ARGS), "count") == 5
    attributes = {"args": {"ids": {"type": "array", "items": {"type": "integer"}}}}
    assert parse_request_arg("1, 2,3", FakeRequest(attributes), "ids") == [1, 2, 3]
