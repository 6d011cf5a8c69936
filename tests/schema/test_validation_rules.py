"""Rule-by-rule data tables for `validate_value_from_schema`.

One table per rule family of WordPress's ``rest_validate_value_from_schema`` as written down in
WordPress's schema functions (order of operations, type rules, best type, anyOf/oneOf), with the
error codes collapsed to the engine's eight: every finer WordPress code (out of bounds, not in enum,
too short, duplicate items, additional properties, multiple, no matching schema, invalid IP, ...)
is ``rest_invalid_param`` with WordPress's message word for word.

Each row is ``(value, schema, expected)``: ``expected`` is ``True`` or ``(code, message, data)``.
The param is always ``"p"`` unless a row says otherwise, so nested paths read ``p[1][id]``.
"""

from __future__ import annotations

from typing import Any

import pytest

from sitecache.errors import RestError
from sitecache.schema import SchemaMisuseWarning, validate_value_from_schema
from tests.schema.format_cases import FORMAT_ERRORS

PARAM = "p"

INVALID_TYPE = "rest_invalid_type"
INVALID_PARAM = "rest_invalid_param"
PROPERTY_REQUIRED = "rest_property_required"
INVALID_PATTERN = "rest_invalid_pattern"

Failure = tuple[str, str, Any]

case = pytest.param


def type_error(type_text: str, param: str = PARAM) -> Failure:
    """``<param> is not of type <type_text>.`` with data ``{"param": param}``."""
    return (INVALID_TYPE, f"{param} is not of type {type_text}.", {"param": param})


def param_error(message: str, data: dict[str, Any] | None = None) -> Failure:
    """A ``rest_invalid_param`` failure (the collapsed code of every finer WordPress code)."""
    return (INVALID_PARAM, message, data)


def required_error(message: str) -> Failure:
    return (PROPERTY_REQUIRED, message, None)


def pattern_error(message: str) -> Failure:
    return (INVALID_PATTERN, message, None)


HEX_COLOR_ERROR: Failure = FORMAT_ERRORS["hex-color"]
EMAIL_ERROR: Failure = FORMAT_ERRORS["email"]
UUID_ERROR: Failure = FORMAT_ERRORS["uuid"]


def outcome(result: object) -> object:
    """``True`` for a pass, ``(code, message, data)`` for a `RestError`, anything else as is."""
    if isinstance(result, RestError):
        return (result.code, result.message, result.data)
    if result is True:
        return True
    return ("not True and not a RestError", result)


def validate(value: Any, schema: dict[str, Any], param: str = PARAM) -> object:
    return outcome(validate_value_from_schema(value, schema, param))


# ====================================================================== null (§3.1)
NULL_ROWS = [
    case(None, {"type": "null"}, True, id="None is null"),
    case("", {"type": "null"}, type_error("null"), id="empty string is not null"),
    case("null", {"type": "null"}, type_error("null"), id="the string null is not null"),
    case(0, {"type": "null"}, type_error("null"), id="0 is not null"),
    case(False, {"type": "null"}, type_error("null"), id="false is not null"),
    case([], {"type": "null"}, type_error("null"), id="empty list is not null"),
    case({}, {"type": "null"}, type_error("null"), id="empty object is not null"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), NULL_ROWS)
def test_null_type_accepts_only_null(value: Any, schema: dict[str, Any], expected: object) -> None:
    assert validate(value, schema) == expected


# ====================================================================== boolean (§3.2)
BOOLEAN = {"type": "boolean"}
BOOLEAN_ROWS = [
    case(True, BOOLEAN, True, id="true"),
    case(False, BOOLEAN, True, id="false"),
    case(0, BOOLEAN, True, id="int 0"),
    case(1, BOOLEAN, True, id="int 1"),
    case("true", BOOLEAN, True, id="'true'"),
    case("false", BOOLEAN, True, id="'false'"),
    case("1", BOOLEAN, True, id="'1'"),
    case("0", BOOLEAN, True, id="'0'"),
    case("TRUE", BOOLEAN, True, id="'TRUE' case-insensitive"),
    case("False", BOOLEAN, True, id="'False' case-insensitive"),
    case("tRuE", BOOLEAN, True, id="'tRuE' mixed case"),
    case(2, BOOLEAN, type_error("boolean"), id="int 2 fails"),
    case(-1, BOOLEAN, type_error("boolean"), id="int -1 fails"),
    case(1123, BOOLEAN, type_error("boolean"), id="int 1123 fails"),
    case(1.0, BOOLEAN, type_error("boolean"), id="float 1.0 fails"),
    case(0.0, BOOLEAN, type_error("boolean"), id="float 0.0 fails"),
    case("yes", BOOLEAN, type_error("boolean"), id="'yes' fails"),
    case("no", BOOLEAN, type_error("boolean"), id="'no' fails"),
    case("", BOOLEAN, type_error("boolean"), id="empty string fails"),
    case(" true", BOOLEAN, type_error("boolean"), id="' true' with a space fails"),
    case("2", BOOLEAN, type_error("boolean"), id="'2' fails"),
    case(None, BOOLEAN, type_error("boolean"), id="None fails"),
    case([], BOOLEAN, type_error("boolean"), id="empty list fails"),
    case([True], BOOLEAN, type_error("boolean"), id="list of true fails"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), BOOLEAN_ROWS)
def test_boolean_type_accepts_true_false_their_strings_and_the_ints_0_and_1(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== object type (§3.3)
OBJECT = {"type": "object"}
OBJECT_TYPE_ROWS = [
    case({}, OBJECT, True, id="empty object"),
    case({"a": 1}, OBJECT, True, id="an object"),
    case("", OBJECT, True, id="empty string is an object"),
    case([1, 2], OBJECT, True, id="a list passes as an object"),
    case([], OBJECT, True, id="an empty list passes as an object"),
    case("str", OBJECT, type_error("object"), id="a string fails"),
    case(" ", OBJECT, type_error("object"), id="a blank string fails"),
    case(5, OBJECT, type_error("object"), id="an int fails"),
    case(1.5, OBJECT, type_error("object"), id="a float fails"),
    case(True, OBJECT, type_error("object"), id="true fails"),
    case(False, OBJECT, type_error("object"), id="false fails"),
    case(None, OBJECT, type_error("object"), id="None fails"),
    # The empty string is coerced to an empty map before the checks.
    case(
        "",
        {"type": "object", "minProperties": 1},
        param_error("p must contain at least 1 property."),
        id="empty string coerces to an empty map for minProperties",
    ),
    case(
        "",
        {"type": "object", "required": ["a"]},
        required_error("a is a required property of p."),
        id="empty string coerces to an empty map for required",
    ),
    case(
        [1, 2],
        {"type": "object", "maxProperties": 1},
        param_error("p must contain at most 1 property."),
        id="a list counts its entries as properties",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), OBJECT_TYPE_ROWS)
def test_object_type_accepts_maps_lists_and_the_empty_string(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== array type (§3.4)
ARRAY = {"type": "array"}
INTEGER_ITEMS = {"type": "array", "items": {"type": "integer"}}
ARRAY_TYPE_ROWS = [
    case([], ARRAY, True, id="empty list"),
    case([1, "a", None], ARRAY, True, id="a list of anything"),
    case("1,2,3", ARRAY, True, id="comma separated string"),
    case("1,,", ARRAY, True, id="'1,,' is a list"),
    case("", ARRAY, True, id="empty string is a list"),
    case(5, ARRAY, True, id="an int is a list"),
    case(1.5, ARRAY, True, id="a float is a list"),
    case(True, ARRAY, True, id="true is a list"),
    case(False, ARRAY, True, id="false is a list"),
    case("1, 2 3", ARRAY, True, id="comma and space separated string"),
    case({"0": "a", "1": "b"}, ARRAY, True, id="a map with numeric keys is a list"),
    case(None, ARRAY, type_error("array"), id="None is not a list"),
    case({"first": "1", "second": "2"}, ARRAY, type_error("array"), id="a map is not a list"),
    case({"0": "a", "x": "b"}, ARRAY, type_error("array"), id="one string key makes a map"),
    # What each scalar coerces to, seen through items / minItems / maxItems.
    case(
        "1,,",
        {"type": "array", "minItems": 2},
        param_error("p must contain at least 2 items."),
        id="'1,,' coerces to one item",
    ),
    case("1,,", {"type": "array", "maxItems": 1}, True, id="'1,,' has exactly one item"),
    case(
        "",
        {"type": "array", "minItems": 1},
        param_error("p must contain at least 1 item."),
        id="empty string coerces to no items",
    ),
    case(
        False,
        {"type": "array", "minItems": 1},
        param_error("p must contain at least 1 item."),
        id="false coerces to no items",
    ),
    case(
        True,
        {"type": "array", "items": {"type": "string", "enum": ["1"]}},
        True,
        id="true coerces to the item '1'",
    ),
    case(
        5,
        {"type": "array", "items": {"type": "string", "enum": ["5"]}, "maxItems": 1},
        True,
        id="5 coerces to the item '5'",
    ),
    case(
        "1, 2 3",
        {"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 3},
        True,
        id="'1, 2 3' coerces to three items",
    ),
    case(
        "1, 2 3",
        {"type": "array", "maxItems": 2},
        param_error("p must contain at most 2 items."),
        id="'1, 2 3' is split on whitespace too",
    ),
    case("1,2", INTEGER_ITEMS, True, id="csv items are validated as integers"),
    case(
        "a,1",
        INTEGER_ITEMS,
        type_error("integer", "p[0]"),
        id="csv item that is not an integer",
    ),
    case(
        {"first": "x", "second": "y"},
        {"type": "array", "items": {"type": "string"}},
        type_error("array"),
        id="a map is rejected before its items are looked at",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), ARRAY_TYPE_ROWS)
def test_array_type_accepts_lists_and_splits_scalars_on_commas_and_whitespace(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== number type (§3.5)
NUMBER = {"type": "number"}
NUMBER_TYPE_ROWS = [
    case(1, NUMBER, True, id="int"),
    case(0, NUMBER, True, id="zero"),
    case(-3, NUMBER, True, id="negative int"),
    case(1.5, NUMBER, True, id="float"),
    case("1", NUMBER, True, id="'1'"),
    case("1.5", NUMBER, True, id="'1.5'"),
    case("1e3", NUMBER, True, id="'1e3'"),
    case(".5", NUMBER, True, id="'.5'"),
    case("-1.5e-3", NUMBER, True, id="'-1.5e-3'"),
    case("+5", NUMBER, True, id="'+5'"),
    case(" 1", NUMBER, True, id="leading space"),
    case("\t\n1", NUMBER, True, id="leading tab and newline"),
    case("1 ", NUMBER, True, id="trailing space (PHP 8)"),
    case(" 1 ", NUMBER, True, id="surrounding spaces"),
    case("0x1A", NUMBER, type_error("number"), id="hex string is not numeric"),
    case(True, NUMBER, type_error("number"), id="true is not numeric"),
    case(False, NUMBER, type_error("number"), id="false is not numeric"),
    case(None, NUMBER, type_error("number"), id="None is not numeric"),
    case("", NUMBER, type_error("number"), id="empty string is not numeric"),
    case(" ", NUMBER, type_error("number"), id="blank string is not numeric"),
    case([], NUMBER, type_error("number"), id="a list is not numeric"),
    case([1], NUMBER, type_error("number"), id="a list of a number is not numeric"),
    case({}, NUMBER, type_error("number"), id="an object is not numeric"),
    case("abc", NUMBER, type_error("number"), id="letters are not numeric"),
    case("1abc", NUMBER, type_error("number"), id="leading number then letters"),
    case("1 2", NUMBER, type_error("number"), id="two numbers"),
    case(".", NUMBER, type_error("number"), id="a lone dot"),
    case("e3", NUMBER, type_error("number"), id="exponent without mantissa"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), NUMBER_TYPE_ROWS)
def test_number_type_accepts_what_php_is_numeric_accepts(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== integer type (§3.5)
INTEGER = {"type": "integer"}
INTEGER_TYPE_ROWS = [
    case(1, INTEGER, True, id="int"),
    case(-1, INTEGER, True, id="negative int"),
    case(0, INTEGER, True, id="zero"),
    case(1.0, INTEGER, True, id="float 1.0"),
    case("1", INTEGER, True, id="'1'"),
    case("1.0", INTEGER, True, id="'1.0'"),
    case("1e3", INTEGER, True, id="'1e3'"),
    case("05", INTEGER, True, id="'05'"),
    case("-0", INTEGER, True, id="'-0'"),
    case("+5", INTEGER, True, id="'+5'"),
    case("5.", INTEGER, True, id="'5.'"),
    case(1e20, INTEGER, True, id="1e20"),
    case("9999999999999999999", INTEGER, True, id="'9999999999999999999'"),
    case(" 5", INTEGER, True, id="leading space"),
    case(1.5, INTEGER, type_error("integer"), id="1.5 has a fraction"),
    case("5.5", INTEGER, type_error("integer"), id="'5.5' has a fraction"),
    case(".5", INTEGER, type_error("integer"), id="'.5' has a fraction"),
    case(True, INTEGER, type_error("integer"), id="true is not numeric"),
    case(False, INTEGER, type_error("integer"), id="false is not numeric"),
    case(None, INTEGER, type_error("integer"), id="None is not numeric"),
    case("abc", INTEGER, type_error("integer"), id="letters"),
    case("0x1A", INTEGER, type_error("integer"), id="hex string"),
    case("", INTEGER, type_error("integer"), id="empty string"),
    case([1], INTEGER, type_error("integer"), id="a list"),
    # The number checks run first, the "no fraction" check last.
    case(
        10.5,
        {"type": "integer", "maximum": 5},
        param_error("p must be less than or equal to 5"),
        id="range error beats the integer type error",
    ),
    case(
        1.5,
        {"type": "integer", "minimum": 1},
        type_error("integer"),
        id="in range but fractional is a type error",
    ),
    case(
        3.5,
        {"type": "integer", "multipleOf": 2},
        param_error("p must be a multiple of 2."),
        id="multipleOf error beats the integer type error",
    ),
    case(
        "1e3",
        {"type": "integer", "maximum": 999},
        param_error("p must be less than or equal to 999"),
        id="'1e3' is compared as 1000",
    ),
    case(
        "4",
        {"type": "integer", "minimum": 5},
        param_error("p must be greater than or equal to 5"),
        id="numeric string is compared as a number",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), INTEGER_TYPE_ROWS)
def test_integer_type_accepts_numeric_values_without_a_fraction(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== multipleOf (§3.5)
def multiple_of(divisor: Any, kind: str = "number") -> dict[str, Any]:
    return {"type": kind, "multipleOf": divisor}


MULTIPLE_OF_ROWS = [
    case(4, multiple_of(2), True, id="4 of 2"),
    case(0, multiple_of(3), True, id="0 of 3"),
    case(-4, multiple_of(2), True, id="-4 of 2"),
    case("10", multiple_of(5), True, id="numeric string '10' of 5"),
    case(5, multiple_of(2), param_error("p must be a multiple of 2."), id="5 of 2"),
    case(2.4, multiple_of(1.2), True, id="2.4 of 1.2"),
    case(3, multiple_of(1.5), True, id="3 of 1.5"),
    case(4.5, multiple_of(1.5), True, id="4.5 of 1.5"),
    case(4, multiple_of(1.5), param_error("p must be a multiple of 1.5."), id="4 of 1.5"),
    case(0.3, multiple_of(0.1), param_error("p must be a multiple of 0.1."), id="0.3 of 0.1"),
    case(0.5, multiple_of(0.1), param_error("p must be a multiple of 0.1."), id="0.5 of 0.1"),
    case(
        1.5,
        multiple_of(1.0),
        param_error("p must be a multiple of 1."),
        id="divisor 1.0 prints as 1",
    ),
    case(6, multiple_of(3, "integer"), True, id="integer 6 of 3"),
    case(
        7,
        multiple_of(3, "integer"),
        param_error("p must be a multiple of 3."),
        id="integer 7 of 3",
    ),
    case(
        7,
        {"type": "number", "multipleOf": 2, "maximum": 5},
        param_error("p must be a multiple of 2."),
        id="multipleOf is checked before the range",
    ),
    case(
        8,
        {"type": "number", "multipleOf": 2, "maximum": 5},
        param_error("p must be less than or equal to 5"),
        id="a multiple out of range gets the range error",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), MULTIPLE_OF_ROWS)
def test_multiple_of_requires_an_exact_zero_remainder(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== bounds (§3.5)
def bounds(**keywords: Any) -> dict[str, Any]:
    return {"type": "number", **keywords}


GT_1 = "p must be greater than 1"
GE_1 = "p must be greater than or equal to 1"
LT_5 = "p must be less than 5"
LE_5 = "p must be less than or equal to 5"
EX_EX = "p must be between 1 (exclusive) and 5 (exclusive)"
EX_IN = "p must be between 1 (exclusive) and 5 (inclusive)"
IN_EX = "p must be between 1 (inclusive) and 5 (exclusive)"
IN_IN = "p must be between 1 (inclusive) and 5 (inclusive)"

BOUNDS_ROWS = [
    # minimum only
    case(0, bounds(minimum=1, exclusiveMinimum=True), param_error(GT_1), id="xmin: below"),
    case(1, bounds(minimum=1, exclusiveMinimum=True), param_error(GT_1), id="xmin: at"),
    case(2, bounds(minimum=1, exclusiveMinimum=True), True, id="xmin: above"),
    case(0, bounds(minimum=1), param_error(GE_1), id="min: below"),
    case(1, bounds(minimum=1), True, id="min: at"),
    case(0.99, bounds(minimum=1), param_error(GE_1), id="min: just below"),
    # maximum only
    case(6, bounds(maximum=5, exclusiveMaximum=True), param_error(LT_5), id="xmax: above"),
    case(5, bounds(maximum=5, exclusiveMaximum=True), param_error(LT_5), id="xmax: at"),
    case(4, bounds(maximum=5, exclusiveMaximum=True), True, id="xmax: below"),
    case(6, bounds(maximum=5), param_error(LE_5), id="max: above"),
    case(5, bounds(maximum=5), True, id="max: at"),
    case(5.01, bounds(maximum=5), param_error(LE_5), id="max: just above"),
    # both, exclusive / exclusive
    case(
        0,
        bounds(minimum=1, maximum=5, exclusiveMinimum=True, exclusiveMaximum=True),
        param_error(EX_EX),
        id="xmin xmax: below",
    ),
    case(
        1,
        bounds(minimum=1, maximum=5, exclusiveMinimum=True, exclusiveMaximum=True),
        param_error(EX_EX),
        id="xmin xmax: at min",
    ),
    case(
        3,
        bounds(minimum=1, maximum=5, exclusiveMinimum=True, exclusiveMaximum=True),
        True,
        id="xmin xmax: inside",
    ),
    case(
        5,
        bounds(minimum=1, maximum=5, exclusiveMinimum=True, exclusiveMaximum=True),
        param_error(EX_EX),
        id="xmin xmax: at max",
    ),
    case(
        6,
        bounds(minimum=1, maximum=5, exclusiveMinimum=True, exclusiveMaximum=True),
        param_error(EX_EX),
        id="xmin xmax: above",
    ),
    # both, exclusive / inclusive
    case(
        1,
        bounds(minimum=1, maximum=5, exclusiveMinimum=True),
        param_error(EX_IN),
        id="xmin max: at min",
    ),
    case(5, bounds(minimum=1, maximum=5, exclusiveMinimum=True), True, id="xmin max: at max"),
    case(
        6,
        bounds(minimum=1, maximum=5, exclusiveMinimum=True),
        param_error(EX_IN),
        id="xmin max: above",
    ),
    # both, inclusive / exclusive
    case(1, bounds(minimum=1, maximum=5, exclusiveMaximum=True), True, id="min xmax: at min"),
    case(
        5,
        bounds(minimum=1, maximum=5, exclusiveMaximum=True),
        param_error(IN_EX),
        id="min xmax: at max",
    ),
    case(
        0,
        bounds(minimum=1, maximum=5, exclusiveMaximum=True),
        param_error(IN_EX),
        id="min xmax: below",
    ),
    # both, inclusive / inclusive
    case(1, bounds(minimum=1, maximum=5), True, id="min max: at min"),
    case(5, bounds(minimum=1, maximum=5), True, id="min max: at max"),
    case(0, bounds(minimum=1, maximum=5), param_error(IN_IN), id="min max: below"),
    case(6, bounds(minimum=1, maximum=5), param_error(IN_IN), id="min max: above"),
    case("6", bounds(minimum=1, maximum=5), param_error(IN_IN), id="min max: numeric string"),
    # float bounds print with %d (truncated) but compare exactly
    case(
        0.2,
        bounds(minimum=0.5),
        param_error("p must be greater than or equal to 0"),
        id="minimum 0.5 prints as 0",
    ),
    case(0.5, bounds(minimum=0.5), True, id="minimum 0.5 compares as 0.5"),
    case(
        3,
        bounds(maximum=2.5),
        param_error("p must be less than or equal to 2"),
        id="maximum 2.5 prints as 2",
    ),
    case(
        2.6,
        bounds(maximum=2.5),
        param_error("p must be less than or equal to 2"),
        id="2.6 is above maximum 2.5",
    ),
    case(2.5, bounds(maximum=2.5), True, id="maximum 2.5 compares as 2.5"),
    case(
        3,
        bounds(minimum=0.5, maximum=2.5),
        param_error("p must be between 0 (inclusive) and 2 (inclusive)"),
        id="both float bounds truncated",
    ),
    case(
        -2,
        bounds(minimum=-1.5),
        param_error("p must be greater than or equal to -1"),
        id="minimum -1.5 prints as -1",
    ),
    case(
        0,
        bounds(minimum=0, exclusiveMinimum=True),
        param_error("p must be greater than 0"),
        id="exclusive minimum 0",
    ),
    case(
        5,
        bounds(minimum=1000),
        param_error("p must be greater than or equal to 1000"),
        id="%d bounds have no thousands separator",
    ),
    # the exclusive flags are read as booleans and do nothing without their bound
    case(-100, bounds(exclusiveMinimum=True), True, id="exclusiveMinimum alone does nothing"),
    case(100, bounds(exclusiveMaximum=True), True, id="exclusiveMaximum alone does nothing"),
    case(1, bounds(minimum=1, exclusiveMinimum=False), True, id="exclusiveMinimum false"),
    case(1, bounds(minimum=1, exclusiveMinimum=0), True, id="exclusiveMinimum 0 is empty"),
    case(1, bounds(minimum=1, exclusiveMinimum=""), True, id="exclusiveMinimum '' is empty"),
    case(1, bounds(minimum=1, exclusiveMinimum="0"), True, id="exclusiveMinimum '0' is empty"),
    case(
        1,
        bounds(minimum=1, exclusiveMinimum=1),
        param_error(GT_1),
        id="exclusiveMinimum 1 is non-empty",
    ),
    case(
        5,
        bounds(maximum=5, exclusiveMaximum="yes"),
        param_error(LT_5),
        id="exclusiveMaximum 'yes' is non-empty",
    ),
    case(
        0,
        {"type": "integer", "minimum": 1, "maximum": 5},
        param_error(IN_IN),
        id="integer uses the same bounds",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), BOUNDS_ROWS)
def test_bounds_report_the_message_for_their_combination_without_a_final_period(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== type lists (§2.4, §5)
TYPE_LIST_ROWS = [
    case(
        "abc",
        {"type": ["integer", "boolean"]},
        type_error("integer,boolean"),
        id="no fit lists the types joined by commas",
    ),
    case([], {"type": ["integer", "boolean"]}, type_error("integer,boolean"), id="list fits none"),
    case("", {"type": ["integer", "boolean"]}, type_error("integer,boolean"), id="'' fits none"),
    case(True, {"type": ["integer", "string"]}, type_error("integer,string"), id="true fits none"),
    case(1.5, {"type": ["integer", "string"]}, type_error("integer,string"), id="1.5 fits none"),
    case(
        1, {"type": ["null", "string"]}, type_error("null,string"), id="1 is neither null nor str"
    ),
    case(1.5, {"type": ["integer", "number"]}, True, id="1.5 falls through to number"),
    case(None, {"type": ["null", "string"]}, True, id="None picks null"),
    case("", {"type": ["integer", "string"]}, True, id="empty string picks string"),
    case(
        "",
        {"type": ["integer", "string"], "minLength": 1},
        param_error("p must be at least 1 character long."),
        id="empty string picks string even when string is listed last",
    ),
    case(
        1,
        {"type": ["array", "integer"], "minItems": 2},
        param_error("p must contain at least 2 items."),
        id="1 against array,integer is an array",
    ),
    case(
        "1",
        {"type": ["boolean", "integer"], "maximum": 0},
        True,
        id="'1' against boolean,integer is a boolean",
    ),
    case(
        "1",
        {"type": ["integer", "boolean"], "maximum": 0},
        param_error("p must be less than or equal to 0"),
        id="'1' against integer,boolean is an integer",
    ),
    case(
        "5.0",
        {"type": ["number", "string"], "maxLength": 1},
        True,
        id="'5.0' against number,string is a number",
    ),
    case(
        "5.0",
        {"type": ["string", "number"], "maxLength": 1},
        param_error("p must be at most 1 character long."),
        id="'5.0' against string,number is a string",
    ),
    case(
        "false",
        {"type": ["boolean", "string"], "pattern": "^x$"},
        True,
        id="'false' against boolean,string is a boolean",
    ),
    case(
        "y",
        {"type": ["boolean", "string"], "pattern": "^x$"},
        pattern_error("p does not match pattern ^x$."),
        id="'y' against boolean,string is a string",
    ),
    case(
        "a,b",
        {"type": ["array", "string"], "maxItems": 1},
        param_error("p must contain at most 1 item."),
        id="'a,b' against array,string is an array",
    ),
    case(
        [],
        {"type": ["object", "array"], "minItems": 1},
        True,
        id="[] against object,array is an object",
    ),
    case(
        [],
        {"type": ["object", "array"], "minProperties": 1},
        param_error("p must contain at least 1 property."),
        id="[] against object,array gets object keywords",
    ),
    case(
        "",
        {"type": ["object", "array"], "minItems": 1},
        True,
        id="'' against object,array is an object",
    ),
    case(
        30,
        {"type": ["null", "integer"], "minimum": 10, "maximum": 20},
        param_error("p must be between 10 (inclusive) and 20 (inclusive)"),
        id="the chosen type's keywords apply",
    ),
    case(
        None,
        {"type": ["null", "integer"], "minimum": 10, "maximum": 20},
        True,
        id="null skips the integer keywords",
    ),
    case(
        "3",
        {"type": ["string", "integer"], "minimum": 5},
        True,
        id="'3' against string,integer is a string",
    ),
    case(
        3,
        {"type": ["string", "integer"], "minimum": 5},
        param_error("p must be greater than or equal to 5"),
        id="3 against string,integer is an integer",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), TYPE_LIST_ROWS)
def test_a_type_list_resolves_to_the_first_listed_type_the_value_fits(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== strings (§3.6)
STRING = {"type": "string"}
MYANMAR_KA = "\u1000"  # U+1000, three bytes in UTF-8, one code point

STRING_ROWS = [
    case("", STRING, True, id="empty string"),
    case("abc", STRING, True, id="a string"),
    case(1, STRING, type_error("string"), id="an int is not coerced"),
    case(1.5, STRING, type_error("string"), id="a float is not coerced"),
    case(True, STRING, type_error("string"), id="true is not a string"),
    case(None, STRING, type_error("string"), id="None is not a string"),
    case([], STRING, type_error("string"), id="a list is not a string"),
    case({}, STRING, type_error("string"), id="an object is not a string"),
    # minLength / maxLength, singular and plural
    case(
        "",
        {"type": "string", "minLength": 1},
        param_error("p must be at least 1 character long."),
        id="minLength 1 is singular",
    ),
    case(
        "a",
        {"type": "string", "minLength": 2},
        param_error("p must be at least 2 characters long."),
        id="minLength 2 is plural",
    ),
    case("ab", {"type": "string", "minLength": 2}, True, id="minLength met"),
    case(
        "ab",
        {"type": "string", "maxLength": 1},
        param_error("p must be at most 1 character long."),
        id="maxLength 1 is singular",
    ),
    case(
        "abc",
        {"type": "string", "maxLength": 2},
        param_error("p must be at most 2 characters long."),
        id="maxLength 2 is plural",
    ),
    case("ab", {"type": "string", "maxLength": 2}, True, id="maxLength met"),
    case(
        "a",
        {"type": "string", "minLength": 1000},
        param_error("p must be at least 1,000 characters long."),
        id="minLength 1000 prints with a thousands separator",
    ),
    case(
        "a" * 1001,
        {"type": "string", "maxLength": 1000},
        param_error("p must be at most 1,000 characters long."),
        id="maxLength 1000 prints with a thousands separator",
    ),
    case(
        "abc",
        {"type": "string", "minLength": 5, "maxLength": 2},
        param_error("p must be at least 5 characters long."),
        id="minLength is checked before maxLength",
    ),
    # lengths are code points, not bytes
    case(MYANMAR_KA, {"type": "string", "maxLength": 1}, True, id="U+1000 has length 1"),
    case(
        MYANMAR_KA * 2,
        {"type": "string", "maxLength": 1},
        param_error("p must be at most 1 character long."),
        id="two U+1000 have length 2",
    ),
    case("\u00e9\u00e9\u00e9", {"type": "string", "minLength": 3}, True, id="three e-acute"),
    case(
        "\u00e9\u00e9\u00e9",
        {"type": "string", "maxLength": 3},
        True,
        id="three e-acute are 3 not 6",
    ),
    case("\U0001f600", {"type": "string", "maxLength": 1}, True, id="an emoji has length 1"),
    case(
        "e\u0301",
        {"type": "string", "maxLength": 1},
        param_error("p must be at most 1 character long."),
        id="a combining accent is its own code point",
    ),
    # pattern
    case("abc1def", {"type": "string", "pattern": "[0-9]"}, True, id="pattern is unanchored"),
    case(
        "abc",
        {"type": "string", "pattern": "[0-9]"},
        pattern_error("p does not match pattern [0-9]."),
        id="pattern mismatch",
    ),
    case("abc", {"type": "string", "pattern": "^abc$"}, True, id="anchored match"),
    case("abc\n", {"type": "string", "pattern": "^abc$"}, True, id="$ matches before final \\n"),
    case(
        "abc\n\n",
        {"type": "string", "pattern": "^abc$"},
        pattern_error("p does not match pattern ^abc$."),
        id="$ does not skip two newlines",
    ),
    case(
        "xabc",
        {"type": "string", "pattern": "^abc$"},
        pattern_error("p does not match pattern ^abc$."),
        id="^ anchors at the start",
    ),
    case(
        "ABC",
        {"type": "string", "pattern": "^abc$"},
        pattern_error("p does not match pattern ^abc$."),
        id="pattern is case-sensitive",
    ),
    case("#123", {"type": "string", "pattern": "^#[0-9]+$"}, True, id="a # in the pattern"),
    case(
        "123",
        {"type": "string", "pattern": "^#[0-9]+$"},
        pattern_error("p does not match pattern ^#[0-9]+$."),
        id="the message shows the raw pattern with its #",
    ),
    case(MYANMAR_KA, {"type": "string", "pattern": "^.$"}, True, id="pattern is UTF-8 aware"),
    case("", {"type": "string", "pattern": "^$"}, True, id="empty string matches ^$"),
    case(
        "bbb",
        {"type": "string", "maxLength": 2, "pattern": "^a+$"},
        param_error("p must be at most 2 characters long."),
        id="maxLength is checked before pattern",
    ),
    case(
        1,
        {"type": "string", "pattern": "^1$"},
        type_error("string"),
        id="type is checked before pattern",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), STRING_ROWS)
def test_string_lengths_count_code_points_and_patterns_are_unanchored(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== enum (§3.8)
ENUM_ROWS = [
    case("a", {"type": "string", "enum": ["a"]}, True, id="the one member"),
    case("b", {"type": "string", "enum": ["a"]}, param_error("p is not a."), id="one member"),
    case(
        "c",
        {"type": "string", "enum": ["a", "b"]},
        param_error("p is not one of a and b."),
        id="two members joined with and",
    ),
    case(
        "d",
        {"type": "string", "enum": ["a", "b", "c"]},
        param_error("p is not one of a, b, and c."),
        id="three members with an Oxford comma",
    ),
    case(
        "e",
        {"type": "string", "enum": ["a", "b", "c", "d"]},
        param_error("p is not one of a, b, c, and d."),
        id="four members",
    ),
    case("x", {"type": "string", "enum": []}, True, id="an empty enum is ignored"),
    case(
        "01",
        {"type": "string", "enum": ["1"]},
        param_error("p is not 1."),
        id="strings compare strictly",
    ),
    # the value is sanitized with the same schema before comparing
    case("1", {"type": "integer", "enum": [0, 1]}, True, id="'1' is sanitized to 1"),
    case("2.0", {"type": "integer", "enum": [1, 2]}, True, id="'2.0' is sanitized to 2"),
    case(2, {"type": "integer", "enum": [0, 1]}, param_error("p is not one of 0 and 1."), id="2"),
    case(1.0, {"type": "integer", "enum": [0, 1]}, True, id="1.0 is sanitized to 1"),
    case(1, {"type": "number", "enum": [1.0]}, True, id="int 1 equals float 1.0"),
    case(1, {"type": "integer", "enum": [1.0]}, True, id="integer 1 equals float 1.0"),
    case("1", {"type": "number", "enum": [1]}, True, id="'1' sanitizes to 1.0, equals int 1"),
    case(1.5, {"type": "number", "enum": [1]}, param_error("p is not 1."), id="1.5 is not 1"),
    case(
        1,
        {"type": "integer", "enum": [1]},
        True,
        id="integer 1 is 1",
    ),
    case(
        1.5,
        {"type": "integer", "enum": [1]},
        type_error("integer"),
        id="integer type error before enum",
    ),
    case("true", {"type": "boolean", "enum": [True]}, True, id="'true' is sanitized to true"),
    case("0", {"type": "boolean", "enum": [False]}, True, id="'0' is sanitized to false"),
    case(
        "false",
        {"type": "boolean", "enum": [True]},
        param_error("p is not 1."),
        id="true prints as 1",
    ),
    case(
        True,
        {"type": "boolean", "enum": [False]},
        param_error("p is not ."),
        id="false prints as the empty string",
    ),
    case(
        "y",
        {"type": ["boolean", "string"], "enum": [True, False, "x"]},
        param_error("p is not one of 1, , and x."),
        id="booleans print as PHP strings in a list",
    ),
    case(
        3,
        {"type": "number", "enum": [1.0, 2.5]},
        param_error("p is not one of 1 and 2.5."),
        id="float 1.0 prints as 1",
    ),
    case(
        [3],
        {"type": "array", "enum": [[1, 2], {"a": 1}]},
        param_error('p is not one of [1,2] and {"a":1}.'),
        id="arrays and objects print as compact JSON",
    ),
    case(
        {"b": 2, "a": 1},
        {"type": "object", "enum": [{"a": 1, "b": 2}]},
        True,
        id="object key order is irrelevant",
    ),
    case(
        {"a": 1, "b": 3},
        {"type": "object", "enum": [{"a": 1, "b": 2}]},
        param_error('p is not {"a":1,"b":2}.'),
        id="object values must match",
    ),
    case(
        [1, 0],
        {"type": "array", "enum": [[0, 1]]},
        param_error("p is not [0,1]."),
        id="list order is relevant",
    ),
    case([0, 1], {"type": "array", "enum": [[0, 1]]}, True, id="same list"),
    case(
        "1,2",
        {"type": "array", "items": {"type": "integer"}, "enum": [[1, 2]]},
        True,
        id="a csv list is sanitized to integers before comparing",
    ),
    case(
        1,
        {"type": "string", "enum": ["1"]},
        type_error("string"),
        id="string type error before enum",
    ),
    case(
        "x",
        {"type": "boolean", "enum": [True]},
        type_error("boolean"),
        id="boolean type error before enum",
    ),
    case(
        "1",
        {"type": ["integer", "string"], "enum": [1]},
        True,
        id="a type list sanitizes with the chosen type",
    ),
    case(
        None,
        {"type": ["string", "null"], "enum": ["a", None]},
        True,
        id="null matches a null member",
    ),
    case(
        " a b ",
        {"type": "string", "format": "text-field", "enum": ["a b"]},
        True,
        id="a string is sanitized by its format before comparing",
    ),
    case(
        "#FFF",
        {"type": "string", "format": "hex-color", "enum": ["#fff"]},
        param_error("p is not #fff."),
        id="comparison after sanitizing is case-sensitive",
    ),
    # An enum that is not a list: PHP's foreach finds no member, so nothing matches (#11).
    case(
        "abc", {"type": "string", "enum": "abc"}, param_error("p is not one of ."), id="enum 'abc'"
    ),
    case(5, {"type": "integer", "enum": 5}, param_error("p is not one of ."), id="enum 5"),
    case(True, {"type": "boolean", "enum": True}, param_error("p is not one of ."), id="enum true"),
    case("abc", {"type": "string", "enum": ""}, True, id="an empty-string enum is ignored"),
    case("abc", {"type": "string", "enum": "0"}, True, id="a '0' enum is PHP-empty, ignored"),
    case("abc", {"type": "string", "enum": 0}, True, id="a 0 enum is PHP-empty, ignored"),
    case("abc", {"type": "string", "enum": False}, True, id="a false enum is ignored"),
    case(1, {"type": "string", "enum": "abc"}, type_error("string"), id="type error before enum"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), ENUM_ROWS)
def test_enum_compares_the_sanitized_value_and_lists_the_members_when_it_fails(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== objects (§3.3)
A_STRING = {"type": "object", "properties": {"a": {"type": "string"}}}
OBJECT_ROWS = [
    # required, v4
    case(
        {},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        required_error("a is a required property of p."),
        id="v4 required missing",
    ),
    case({"a": None}, {"type": "object", "required": ["a"]}, True, id="v4 null value satisfies"),
    case(
        {},
        {"type": "object", "required": ["x"]},
        required_error("x is a required property of p."),
        id="v4 name without a properties entry",
    ),
    case(
        {},
        {"type": "object", "required": ["a", "b"]},
        required_error("a is a required property of p."),
        id="v4 first missing name is reported",
    ),
    case(
        {"a": 1},
        {"type": "object", "required": ["a", "b"]},
        required_error("b is a required property of p."),
        id="v4 second missing name",
    ),
    case([1, 2], {"type": "object", "required": ["0"]}, True, id="v4 index key of a list"),
    # required, v3
    case(
        {},
        {"type": "object", "properties": {"a": {"type": "string", "required": True}}},
        required_error("a is a required property of p."),
        id="v3 required true missing",
    ),
    case(
        {"a": "x"},
        {"type": "object", "properties": {"a": {"type": "string", "required": True}}},
        True,
        id="v3 required true present",
    ),
    case(
        {},
        {"type": "object", "properties": {"a": {"type": "string", "required": "yes"}}},
        True,
        id="v3 'yes' does not count",
    ),
    case(
        {},
        {"type": "object", "properties": {"a": {"type": "string", "required": 1}}},
        True,
        id="v3 1 does not count",
    ),
    case(
        {},
        {"type": "object", "properties": {"a": {"type": "string", "required": False}}},
        True,
        id="v3 false",
    ),
    case(
        {},
        {
            "type": "object",
            "properties": {"a": {"type": "string", "required": True}},
            "required": [],
        },
        True,
        id="required [] disables the v3 flags",
    ),
    case(
        {"b": 1},
        {
            "type": "object",
            "properties": {"a": {"type": "string", "required": True}},
            "required": ["b"],
        },
        True,
        id="a v4 list replaces the v3 flags",
    ),
    case(
        {"a": 1},
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["b"],
        },
        required_error("b is a required property of p."),
        id="required is checked before property errors",
    ),
    case(
        {"inner": {}},
        {"type": "object", "properties": {"inner": {"type": "object", "required": ["x"]}}},
        required_error("x is a required property of p[inner]."),
        id="nested required names the nested param",
    ),
    case(
        {},
        {"type": "object", "properties": {"inner": {"type": "object", "required": ["x"]}}},
        True,
        id="nested required is not checked when the parent is absent",
    ),
    # property paths and order
    case({"a": 1}, A_STRING, type_error("string", "p[a]"), id="property path p[a]"),
    case({"a": "x", "z": 1}, A_STRING, True, id="extra properties allowed by default"),
    case(
        {"b": 1, "a": 1},
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
        type_error("string", "p[b]"),
        id="properties are checked in input order",
    ),
    case(
        {"outer": {"inner": 1}},
        {
            "type": "object",
            "properties": {
                "outer": {"type": "object", "properties": {"inner": {"type": "string"}}}
            },
        },
        type_error("string", "p[outer][inner]"),
        id="nested path p[outer][inner]",
    ),
    case(
        [{"id": 1}, {"id": "x"}],
        {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}},
        type_error("integer", "p[1][id]"),
        id="nested path p[1][id]",
    ),
    case(
        [1, 2],
        {"type": "object", "properties": {"0": {"type": "string"}}},
        type_error("string", "p[0]"),
        id="a list's index keys meet numeric property names",
    ),
    # patternProperties
    case(
        {"ab": "x"},
        {
            "type": "object",
            "patternProperties": {"^a": {"type": "integer"}, "b": {"type": "string"}},
        },
        type_error("integer", "p[ab]"),
        id="the first matching pattern decides",
    ),
    case(
        {"ab": 1},
        {
            "type": "object",
            "patternProperties": {"^a": {"type": "integer"}, "b": {"type": "string"}},
        },
        True,
        id="first matching pattern accepts",
    ),
    case(
        {"cb": 1},
        {
            "type": "object",
            "patternProperties": {"^a": {"type": "integer"}, "b": {"type": "string"}},
        },
        type_error("string", "p[cb]"),
        id="second pattern when the first does not match",
    ),
    case(
        {"x1y": "z"},
        {"type": "object", "patternProperties": {"[0-9]": {"type": "integer"}}},
        type_error("integer", "p[x1y]"),
        id="patternProperties are unanchored",
    ),
    case(
        {"ab": "x"},
        {
            "type": "object",
            "properties": {"ab": {"type": "string"}},
            "patternProperties": {"^a": {"type": "integer"}},
        },
        True,
        id="properties beat patternProperties",
    ),
    # additionalProperties
    case(
        {"a": "x", "b": 1},
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
        param_error("b is not a valid property of Object."),
        id="additionalProperties false",
    ),
    case(
        [{"z": 1}],
        {"type": "array", "items": {"type": "object", "additionalProperties": False}},
        param_error("z is not a valid property of Object."),
        id="the message names the property, not the path",
    ),
    case(
        {"x1": 1, "y": 1},
        {
            "type": "object",
            "patternProperties": {"^x": {"type": "integer"}},
            "additionalProperties": False,
        },
        param_error("y is not a valid property of Object."),
        id="a pattern-matched key is not additional",
    ),
    case(
        {"x": "a"},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        type_error("integer", "p[x]"),
        id="additionalProperties schema validates extras",
    ),
    case(
        {"x": 1},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        True,
        id="additionalProperties schema accepts",
    ),
    case(
        {"x": [1]},
        {"type": "object", "additionalProperties": True},
        True,
        id="additionalProperties true allows anything",
    ),
    # minProperties / maxProperties
    case(
        {},
        {"type": "object", "minProperties": 1},
        param_error("p must contain at least 1 property."),
        id="minProperties 1 is singular",
    ),
    case(
        {"a": 1},
        {"type": "object", "minProperties": 2},
        param_error("p must contain at least 2 properties."),
        id="minProperties 2 is plural",
    ),
    case({"a": 1}, {"type": "object", "minProperties": 1}, True, id="minProperties met"),
    case(
        {"a": 1, "b": 2},
        {"type": "object", "maxProperties": 1},
        param_error("p must contain at most 1 property."),
        id="maxProperties 1 is singular",
    ),
    case(
        {"a": 1, "b": 2, "c": 3},
        {"type": "object", "maxProperties": 2},
        param_error("p must contain at most 2 properties."),
        id="maxProperties 2 is plural",
    ),
    case({"a": 1, "b": 2}, {"type": "object", "maxProperties": 2}, True, id="maxProperties met"),
    case(
        {},
        {"type": "object", "minProperties": 1000},
        param_error("p must contain at least 1,000 properties."),
        id="minProperties 1000 with a thousands separator",
    ),
    case(
        {"a": 1, "b": 2},
        {"type": "object", "minProperties": 3, "maxProperties": 1},
        param_error("p must contain at least 3 properties."),
        id="minProperties is checked before maxProperties",
    ),
    case(
        {"a": 1},
        {"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 2},
        type_error("string", "p[a]"),
        id="property errors come before minProperties",
    ),
    case(
        {"a": "x", "b": 1},
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": False,
            "maxProperties": 1,
        },
        param_error("b is not a valid property of Object."),
        id="additionalProperties comes before maxProperties",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), OBJECT_ROWS)
def test_object_checks_required_then_each_property_then_the_property_count(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== arrays (§3.4, §3.9)
UNIQUE = {"type": "array", "uniqueItems": True}
DUPLICATES = param_error("p has duplicate items.")

ARRAY_ROWS = [
    case(
        ["a"],
        {"type": "array", "items": {"type": "integer"}, "minItems": 3},
        type_error("integer", "p[0]"),
        id="item errors beat minItems",
    ),
    case(
        [[1, "x"]],
        {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        type_error("integer", "p[0][1]"),
        id="nested item path p[0][1]",
    ),
    case(
        [],
        {"type": "array", "minItems": 1},
        param_error("p must contain at least 1 item."),
        id="minItems 1 is singular",
    ),
    case(
        [1],
        {"type": "array", "minItems": 2},
        param_error("p must contain at least 2 items."),
        id="minItems 2 is plural",
    ),
    case([1, 2], {"type": "array", "minItems": 2}, True, id="minItems met"),
    case(
        [1, 2],
        {"type": "array", "maxItems": 1},
        param_error("p must contain at most 1 item."),
        id="maxItems 1 is singular",
    ),
    case(
        [1, 2, 3],
        {"type": "array", "maxItems": 2},
        param_error("p must contain at most 2 items."),
        id="maxItems 2 is plural",
    ),
    case([1, 2], {"type": "array", "maxItems": 2}, True, id="maxItems met"),
    case(
        [],
        {"type": "array", "minItems": 1000},
        param_error("p must contain at least 1,000 items."),
        id="minItems 1000 with a thousands separator",
    ),
    case(
        [1, 2],
        {"type": "array", "minItems": 3, "maxItems": 1},
        param_error("p must contain at least 3 items."),
        id="minItems before maxItems",
    ),
    case(
        [1, 1],
        {"type": "array", "maxItems": 1, "uniqueItems": True},
        param_error("p must contain at most 1 item."),
        id="maxItems before uniqueItems",
    ),
    case(
        ["a", "a"],
        {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        type_error("integer", "p[0]"),
        id="item errors before uniqueItems",
    ),
    # uniqueItems comparison
    case([1, 2], UNIQUE, True, id="distinct ints"),
    case([1, 1], UNIQUE, DUPLICATES, id="1 and 1 are duplicates"),
    case(["a", "a"], UNIQUE, DUPLICATES, id="'a' and 'a' are duplicates"),
    case([1, "1"], UNIQUE, True, id="1 and '1' are distinct"),
    case([1, True], UNIQUE, True, id="1 and true are distinct"),
    case([0, False], UNIQUE, True, id="0 and false are distinct"),
    case([1, 1.0], UNIQUE, True, id="int 1 and float 1.0 are distinct"),
    case([1.0, 1.00], UNIQUE, DUPLICATES, id="1.0 and 1.00 are duplicates"),
    case([None, None], UNIQUE, DUPLICATES, id="null and null are duplicates"),
    case([None, ""], UNIQUE, True, id="null and '' are distinct"),
    case(
        [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
        UNIQUE,
        DUPLICATES,
        id="objects with reordered keys are duplicates",
    ),
    case([{"a": 1}, {"a": 2}], UNIQUE, True, id="objects with different values"),
    case(
        [{"a": {"x": 1, "y": 2}}, {"a": {"y": 2, "x": 1}}],
        UNIQUE,
        DUPLICATES,
        id="keys are sorted recursively",
    ),
    case([{}, []], UNIQUE, DUPLICATES, id="{} and [] are duplicates"),
    case([[1], [1]], UNIQUE, DUPLICATES, id="equal lists are duplicates"),
    case([["Kirk", "Jaco"], ["Jaco", "Kirk"]], UNIQUE, True, id="lists keep their order"),
    case([1, 1], {"type": "array", "uniqueItems": False}, True, id="uniqueItems false"),
    case([1, 1], {"type": "array", "uniqueItems": 0}, True, id="uniqueItems 0"),
    case("1,1", UNIQUE, DUPLICATES, id="csv '1,1' has duplicates"),
    case(
        "1,01",
        {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        True,
        id="csv '1,01' with integer items is unique while validating",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), ARRAY_ROWS)
def test_array_checks_items_then_counts_then_uniqueness(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== anyOf / oneOf (§6)
CIRCLE = {
    "title": "circle",
    "type": "object",
    "properties": {"r": {"type": "number"}},
    "required": ["r"],
}
SQUARE = {
    "title": "square",
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
}
SQUARE_REQUIRED = {**SQUARE, "required": ["a"]}


def no_match(message: str, position: int) -> Failure:
    return param_error(message, {"position": position})


def several_matches(message: str, positions: list[int]) -> Failure:
    return param_error(message, {"positions": positions})


COMBINING_ROWS = [
    # anyOf: first match
    case(1, {"anyOf": [{"type": "string"}, {"type": "integer"}]}, True, id="anyOf second"),
    case("a", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, True, id="anyOf first"),
    case(
        1,
        {"anyOf": [{"type": "string"}]},
        no_match("p does not match the expected format. Reason: p is not of type string.", 0),
        id="single branch: untitled reason",
    ),
    case(
        1,
        {"anyOf": [{"title": "circle", "type": "string"}]},
        no_match("p is not a valid circle. Reason: p is not of type string.", 0),
        id="single branch: titled reason",
    ),
    case(
        [],
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        param_error("p does not match any of the expected formats."),
        id="only own type errors: generic fallback",
    ),
    case(
        3,
        {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]},
        no_match(
            "p does not match the expected format. Reason: p must be greater than or equal to 5",
            1,
        ),
        id="own type errors dropped, one left",
    ),
    case(
        {"a": 1},
        {
            "anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "string"},
            ]
        },
        no_match("p does not match the expected format. Reason: p[a] is not of type string.", 0),
        id="nested type errors are kept",
    ),
    case(
        [1],
        {"type": "array", "items": {"anyOf": [{"type": "string"}]}},
        no_match("p[0] does not match the expected format. Reason: p[0] is not of type string.", 0),
        id="combining error of an item names the item",
    ),
    case(
        3,
        {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]},
        param_error("p does not match any of the expected formats."),
        id="two non-type errors, not objects: generic",
    ),
    case(
        3,
        {
            "type": "integer",
            "anyOf": [{"title": "big", "minimum": 5}, {"title": "small", "maximum": 1}],
        },
        param_error("p is not a valid big and small."),
        id="two non-type errors, all titled",
    ),
    # titles
    case(
        [],
        {"anyOf": [{"title": "circle", "type": "string"}, {"title": "square", "type": "integer"}]},
        param_error("p is not a valid circle and square."),
        id="all titled: two",
    ),
    case(
        [],
        {
            "anyOf": [
                {"title": "circle", "type": "string"},
                {"title": "square", "type": "integer"},
                {"title": "triangle", "type": "boolean"},
            ]
        },
        param_error("p is not a valid circle, square, and triangle."),
        id="all titled: three with an Oxford comma",
    ),
    case(
        [],
        {"anyOf": [{"title": "circle", "type": "string"}, {"type": "integer"}]},
        param_error("p does not match any of the expected formats."),
        id="one untitled branch: generic",
    ),
    # object heuristic
    case(
        {"a": "x", "b": 1},
        {"anyOf": [CIRCLE, SQUARE]},
        no_match("p is not a valid square. Reason: p[b] is not of type string.", 1),
        id="object heuristic picks the branch sharing most properties",
    ),
    case(
        {"a": 1, "b": 1},
        {
            "anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {"b": {"type": "string"}}},
            ]
        },
        no_match("p does not match the expected format. Reason: p[a] is not of type string.", 0),
        id="object heuristic tie keeps the first",
    ),
    case(
        {"z": 1},
        {"anyOf": [CIRCLE, SQUARE_REQUIRED]},
        param_error("p is not a valid circle and square."),
        id="object heuristic with nothing shared falls back to titles",
    ),
    # oneOf
    case(1, {"oneOf": [{"type": "string"}, {"type": "integer"}]}, True, id="oneOf exactly one"),
    case(
        1,
        {"oneOf": [{"type": "string"}]},
        no_match("p does not match the expected format. Reason: p is not of type string.", 0),
        id="oneOf none: combining error",
    ),
    case(
        1,
        {"oneOf": [{"type": "integer"}, {"type": "number"}, {"type": "string"}]},
        several_matches("p matches more than one of the expected formats.", [0, 1]),
        id="oneOf two matches untitled",
    ),
    case(
        1,
        {"oneOf": [{"type": "integer"}, {"type": "string"}, {"type": "number"}]},
        several_matches("p matches more than one of the expected formats.", [0, 2]),
        id="oneOf positions 0 and 2",
    ),
    case(
        1,
        {
            "oneOf": [
                {"title": "circle", "type": "integer"},
                {"title": "triangle", "type": "number"},
            ]
        },
        several_matches("p matches circle and triangle, but should match only one.", [0, 1]),
        id="oneOf two matches titled",
    ),
    case(
        1,
        {
            "oneOf": [
                {"title": "circle", "type": "integer"},
                {"type": "string"},
                {"title": "triangle", "type": "number"},
            ]
        },
        several_matches("p matches circle and triangle, but should match only one.", [0, 2]),
        id="oneOf: only the matching branches need titles",
    ),
    case(
        1,
        {"oneOf": [{"title": "circle", "type": "integer"}, {"type": "number"}]},
        several_matches("p matches more than one of the expected formats.", [0, 1]),
        id="oneOf: an untitled match gives the generic message",
    ),
    # inheritance and outer keywords
    case(
        "ab",
        {"type": "string", "anyOf": [{"minLength": 3}]},
        no_match(
            "p does not match the expected format. Reason: p must be at least 3 characters long.",
            0,
        ),
        id="a branch without type inherits the parent's",
    ),
    case(7, {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]}, True, id="inherit"),
    case(
        "c",
        {"type": "string", "anyOf": [{"maxLength": 5}], "enum": ["a", "b"]},
        param_error("p is not one of a and b."),
        id="outer enum still applies after a match",
    ),
    case(
        {"a": 1},
        {"type": "object", "anyOf": [{"required": ["a"]}], "properties": {"a": {"type": "string"}}},
        type_error("string", "p[a]"),
        id="outer properties still apply after a match",
    ),
    case(
        "x",
        {"type": "string", "oneOf": [{"maxLength": 5}], "format": "hex-color"},
        HEX_COLOR_ERROR,
        id="outer format still applies after a match",
    ),
    case(
        3,
        {"anyOf": [{"type": "integer"}], "minimum": 5},
        param_error("p must be greater than or equal to 5"),
        id="an untyped outer schema takes the matched type",
    ),
    case(7, {"anyOf": [{"type": "integer"}], "minimum": 5}, True, id="matched type, in range"),
    case(
        1,
        {"anyOf": [{"type": "string"}], "oneOf": [{"type": "integer"}]},
        no_match("p does not match the expected format. Reason: p is not of type string.", 0),
        id="anyOf runs before oneOf",
    ),
    case(
        "a",
        {"anyOf": [{"type": "string"}], "oneOf": [{"type": "integer"}]},
        no_match("p does not match the expected format. Reason: p is not of type integer.", 0),
        id="oneOf runs after anyOf passes",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), COMBINING_ROWS)
def test_any_of_and_one_of_pick_a_branch_or_explain_why_none_fits(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== formats (§2.8, §7)
def fmt(name: str) -> dict[str, Any]:
    return {"type": "string", "format": name}


# Which values each format accepts, and the error it answers otherwise, is one table checked
# through the checkers and through schemas (tests/schema/format_cases.py); these rows are
# what a format does inside the rest of the rules.
FORMAT_ROWS = [
    # formats that never validate
    case("not a url", fmt("uri"), True, id="uri is not validated"),
    case("<b>x</b>", fmt("text-field"), True, id="text-field is not validated"),
    case("a\n<b>", fmt("textarea-field"), True, id="textarea-field is not validated"),
    case("anything", fmt("made-up"), True, id="an unknown format is not validated"),
    # format applies only to strings
    case(5, {"type": "integer", "format": "hex-color"}, True, id="format ignored for integer"),
    case(1.5, {"type": "number", "format": "ip"}, True, id="format ignored for number"),
    case(True, {"type": "boolean", "format": "uuid"}, True, id="format ignored for boolean"),
    case("x", {"type": "array", "format": "email"}, True, id="format ignored for array"),
    case({}, {"type": "object", "format": "date-time"}, True, id="format ignored for object"),
    case(None, {"type": "null", "format": "hex-color"}, True, id="format ignored for null"),
    case(
        None,
        {"type": ["string", "null"], "format": "hex-color"},
        True,
        id="format ignored when a type list picks null",
    ),
    case(
        "x",
        {"type": ["string", "null"], "format": "hex-color"},
        HEX_COLOR_ERROR,
        id="format applies when a type list picks string",
    ),
    # order: type, string rules, enum, then format
    case(1, {"type": "string", "format": "email"}, type_error("string"), id="type before format"),
    case(
        "b@x.co",
        {"type": "string", "pattern": "^a", "format": "email"},
        pattern_error("p does not match pattern ^a."),
        id="pattern before format",
    ),
    case(
        "x",
        {"type": "string", "format": "hex-color", "enum": ["#fff"]},
        param_error("p is not #fff."),
        id="enum before format",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), FORMAT_ROWS)
def test_string_formats_report_their_own_codes_and_messages(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    assert validate(value, schema) == expected


# ====================================================================== the param string (§1)
PARAM_ROWS = [
    case(
        1,
        {"type": "string"},
        "",
        (INVALID_TYPE, " is not of type string.", {"param": ""}),
        id="no param: message starts with a space",
    ),
    case(
        {},
        {"type": "object", "required": ["my_required_prop"]},
        "",
        required_error("my_required_prop is a required property of ."),
        id="no param: required names an empty param",
    ),
    case(
        "x",
        {"type": "integer"},
        "count",
        type_error("integer", "count"),
        id="param appears in message and data",
    ),
    case(
        {"list": [1, {"id": "x"}]},
        {
            "type": "object",
            "properties": {
                "list": {
                    "type": "array",
                    "items": {
                        "type": ["integer", "object"],
                        "properties": {"id": {"type": "integer"}},
                    },
                }
            },
        },
        "body",
        type_error("integer", "body[list][1][id]"),
        id="paths nest through objects and arrays",
    ),
]


@pytest.mark.parametrize(("value", "schema", "param", "expected"), PARAM_ROWS)
def test_messages_name_the_param_and_its_nested_path(
    value: Any, schema: dict[str, Any], param: str, expected: object
) -> None:
    assert validate(value, schema, param) == expected


# ====================================================================== misuse (§2.3, §2.5, §3.7)
MISUSE_ROWS = [
    case("x", {}, True, id="missing type: anything passes"),
    case([1, {"a": None}], {}, True, id="missing type: structures pass"),
    case(5, {"type": "invalid"}, True, id="unknown type: anything passes"),
    case("My Value", {"type": ["object", "type"]}, True, id="unknown name in a type list"),
    case("b", {"enum": ["a"]}, param_error("p is not a."), id="missing type: enum applies"),
    case("a", {"enum": ["a"]}, True, id="missing type: enum met"),
    case("x", {"format": "hex-color"}, HEX_COLOR_ERROR, id="missing type: format applies"),
    case(5, {"format": "uuid"}, UUID_ERROR, id="missing type: format applies to non-strings"),
    case(
        "x",
        {"type": "strnig", "format": "email"},
        EMAIL_ERROR,
        id="unknown type: format applies",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), MISUSE_ROWS)
def test_a_missing_or_unknown_type_warns_and_skips_only_the_type_checks(
    value: Any, schema: dict[str, Any], expected: object
) -> None:
    with pytest.warns(SchemaMisuseWarning):
        result = validate(value, schema)
    assert result == expected
