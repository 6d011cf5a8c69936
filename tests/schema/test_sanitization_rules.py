"""Rule-by-rule data tables for `sanitize_value_from_schema`.

One table per rule family of WordPress's ``rest_sanitize_value_from_schema`` as written down in
WordPress's schema functions: PHP casts for the scalar types,
``rest_sanitize_boolean``, array splitting and re-indexing, object coercion with silently dropped
extra properties, the string formats' sanitizers, and the few cases that return an error (no
matching anyOf/oneOf branch, duplicate items after sanitizing), with the engine's collapsed codes.

Each row is ``(value, schema, expected)``: ``expected`` is the sanitized value, compared strictly
(``5`` is not ``5.0`` and ``1`` is not ``True``), or ``(code, message, data)`` for an error.
"""

from __future__ import annotations

from typing import Any

import pytest

from sitecache.errors import RestError
from sitecache.schema import SchemaMisuseWarning, sanitize_value_from_schema

PARAM = "p"
INVALID_PARAM = "rest_invalid_param"

case = pytest.param


def typed(value: Any) -> Any:
    """``value`` with the type of every scalar spelled out, so that equality is strict.

    Objects keep their key order (a sanitized object keeps the input order); a `RestError` and an
    expected ``(code, message, data)`` tuple both become ``("error", code, message, data)``.
    """
    if isinstance(value, RestError):
        return ("error", value.code, value.message, value.data)
    if isinstance(value, tuple):
        return ("error", *value)
    if isinstance(value, dict):
        return ("object", [(key, typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("array", [typed(item) for item in value])
    return (type(value).__name__, value)


def sanitize(value: Any, schema: dict[str, Any]) -> Any:
    return typed(sanitize_value_from_schema(value, schema, PARAM))


def duplicates() -> tuple[str, str, None]:
    return (INVALID_PARAM, "p has duplicate items.", None)


# ====================================================================== integer
INTEGER = {"type": "integer"}
INTEGER_ROWS = [
    case(5, INTEGER, 5, id="int stays"),
    case("5", INTEGER, 5, id="'5'"),
    case("1.10", INTEGER, 1, id="'1.10'"),
    case("1abc", INTEGER, 1, id="'1abc' takes the leading number"),
    case("abc", INTEGER, 0, id="'abc' is 0"),
    case("7.9", INTEGER, 7, id="'7.9' truncates"),
    case("-3.7", INTEGER, -3, id="'-3.7' truncates toward zero"),
    case("1e3", INTEGER, 1000, id="'1e3' is 1000"),
    case("05", INTEGER, 5, id="'05'"),
    case("+5", INTEGER, 5, id="'+5'"),
    case(" 12", INTEGER, 12, id="leading space"),
    case("", INTEGER, 0, id="empty string is 0"),
    case("0x1A", INTEGER, 0, id="hex string is 0"),
    case(5.9, INTEGER, 5, id="5.9 truncates"),
    case(-5.9, INTEGER, -5, id="-5.9 truncates toward zero"),
    case(1.0, INTEGER, 1, id="1.0 is 1"),
    case(True, INTEGER, 1, id="true is 1"),
    case(False, INTEGER, 0, id="false is 0"),
    case(None, INTEGER, 0, id="None is 0"),
    case([], INTEGER, 0, id="empty list is 0"),
    case([0], INTEGER, 1, id="non-empty list is 1"),
    case("5", {"type": "integer", "enum": [1]}, 5, id="enum is not enforced"),
    case("50", {"type": "integer", "maximum": 5}, 50, id="bounds are not enforced"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), INTEGER_ROWS)
def test_integer_is_a_php_int_cast(value: Any, schema: dict[str, Any], expected: Any) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== number
NUMBER = {"type": "number"}
NUMBER_ROWS = [
    case(5, NUMBER, 5.0, id="int 5 becomes float 5.0"),
    case(1.5, NUMBER, 1.5, id="float stays"),
    case("1.10", NUMBER, 1.1, id="'1.10'"),
    case("-2.5", NUMBER, -2.5, id="'-2.5'"),
    case(".5", NUMBER, 0.5, id="'.5'"),
    case("1e3", NUMBER, 1000.0, id="'1e3'"),
    case(" 3 ", NUMBER, 3.0, id="surrounding spaces"),
    case("3abc", NUMBER, 3.0, id="leading number then letters"),
    case("abc", NUMBER, 0.0, id="'abc' is 0.0"),
    case("", NUMBER, 0.0, id="empty string is 0.0"),
    case([], NUMBER, 0.0, id="empty list is 0.0"),
    case(True, NUMBER, 1.0, id="true is 1.0"),
    case(False, NUMBER, 0.0, id="false is 0.0"),
    case(None, NUMBER, 0.0, id="None is 0.0"),
    case(7, {"type": "number", "multipleOf": 2}, 7.0, id="multipleOf is not enforced"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), NUMBER_ROWS)
def test_number_is_a_php_float_cast_so_ints_come_back_as_floats(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== boolean
BOOLEAN = {"type": "boolean"}
BOOLEAN_ROWS = [
    case(True, BOOLEAN, True, id="true"),
    case(False, BOOLEAN, False, id="false"),
    case("true", BOOLEAN, True, id="'true'"),
    case("false", BOOLEAN, False, id="'false'"),
    case("FALSE", BOOLEAN, False, id="'FALSE' is lower-cased"),
    case("False", BOOLEAN, False, id="'False' is lower-cased"),
    case("0", BOOLEAN, False, id="'0'"),
    case("1", BOOLEAN, True, id="'1'"),
    case("", BOOLEAN, False, id="empty string is false"),
    case("no", BOOLEAN, True, id="'no' is true"),
    case("off", BOOLEAN, True, id="'off' is true"),
    case(" ", BOOLEAN, True, id="a space is true"),
    case("0.0", BOOLEAN, True, id="'0.0' is true"),
    case("00", BOOLEAN, True, id="'00' is true"),
    case("false ", BOOLEAN, True, id="'false ' with a space is true"),
    case("yes", BOOLEAN, True, id="'yes' is true"),
    case("abc", BOOLEAN, True, id="any other string is true"),
    case(0, BOOLEAN, False, id="int 0"),
    case(1, BOOLEAN, True, id="int 1"),
    case(2, BOOLEAN, True, id="int 2 is truthy"),
    case(-1, BOOLEAN, True, id="int -1 is truthy"),
    case(0.0, BOOLEAN, False, id="float 0.0 is false"),
    case(0.1, BOOLEAN, True, id="float 0.1 is true"),
    case(None, BOOLEAN, False, id="None is false"),
    case([], BOOLEAN, False, id="empty list is false"),
    case([0], BOOLEAN, True, id="[0] is true"),
    case({}, BOOLEAN, False, id="empty object is false"),
    case({"a": 1}, BOOLEAN, True, id="non-empty object is true"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), BOOLEAN_ROWS)
def test_boolean_makes_false_and_0_false_and_otherwise_follows_php_truthiness(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== null
NULL = {"type": "null"}
NULL_ROWS = [
    case(None, NULL, None, id="None"),
    case("abc", NULL, None, id="a string"),
    case(0, NULL, None, id="zero"),
    case([1], NULL, None, id="a list"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), NULL_ROWS)
def test_null_type_always_sanitizes_to_null(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== string casts
STRING = {"type": "string"}
STRING_ROWS = [
    case("abc", STRING, "abc", id="a string stays"),
    case(" <b>x</b> ", STRING, " <b>x</b> ", id="a plain string is not cleaned"),
    case(1, STRING, "1", id="1"),
    case(0, STRING, "0", id="0"),
    case(-5, STRING, "-5", id="-5"),
    case(1.1, STRING, "1.1", id="1.1"),
    case(-0.5, STRING, "-0.5", id="-0.5"),
    case(2.50, STRING, "2.5", id="2.50"),
    case(1.0, STRING, "1", id="1.0 prints as 1"),
    case(True, STRING, "1", id="true is '1'"),
    case(False, STRING, "", id="false is ''"),
    case(None, STRING, "", id="None is ''"),
    case("x", {"type": "string", "enum": ["a"]}, "x", id="enum is not enforced"),
    case("abc", {"type": "string", "maxLength": 1}, "abc", id="maxLength is not enforced"),
    case("abc", {"type": "string", "pattern": "^x$"}, "abc", id="pattern is not enforced"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), STRING_ROWS)
def test_string_without_a_format_is_a_php_string_cast(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== string formats
def fmt(name: str) -> dict[str, Any]:
    return {"type": "string", "format": name}


FORMAT_ROWS = [
    # hex-color: the color, or ''
    case("#fff", fmt("hex-color"), "#fff", id="hex: #fff"),
    case("#FFFFFF", fmt("hex-color"), "#FFFFFF", id="hex: #FFFFFF"),
    case("WordPress", fmt("hex-color"), "", id="hex: a word"),
    case("#ab", fmt("hex-color"), "", id="hex: #ab"),
    case("#jkl", fmt("hex-color"), "", id="hex: #jkl"),
    case("#abcd", fmt("hex-color"), "", id="hex: 4 digits"),
    case("", fmt("hex-color"), "", id="hex: empty"),
    # sanitize_text_field for date-time, email, ip, uuid and text-field
    case("a < b", fmt("text-field"), "a &lt; b", id="text: lone < escaped"),
    case("<p>Hello World</p>", fmt("text-field"), "Hello World", id="text: tags stripped"),
    case(
        "<script>alert(1)</script>x",
        fmt("text-field"),
        "x",
        id="text: script content stripped",
    ),
    case(
        "<style>p{}</style>x",
        fmt("text-field"),
        "x",
        id="text: style content stripped",
    ),
    case(" a%20b\tc\n ", fmt("text-field"), "ab c", id="text: octets removed"),
    case("a%%2020b", fmt("text-field"), "ab", id="text: octets removed repeatedly"),
    case("a %41 b", fmt("text-field"), "a b", id="text: spaces re-collapsed after octets"),
    case("  x \r\n\t y  ", fmt("text-field"), "x y", id="text: whitespace collapsed"),
    case(5, fmt("text-field"), "5", id="text: int cast to string"),
    case("invalid", fmt("email"), "invalid", id="email: not reduced to a valid address"),
    case(" user@example.com ", fmt("email"), "user@example.com", id="email: trimmed"),
    case(" 1.2.3.4 ", fmt("ip"), "1.2.3.4", id="ip: trimmed"),
    case("not an ip", fmt("ip"), "not an ip", id="ip: not validated"),
    case("  ABC  ", fmt("uuid"), "ABC", id="uuid: trimmed, case kept"),
    case(
        "2017-01-16T11:30:00 ",
        fmt("date-time"),
        "2017-01-16T11:30:00",
        id="date-time: trimmed",
    ),
    case("<b>2017</b>", fmt("date-time"), "2017", id="date-time: tags stripped"),
    # sanitize_textarea_field keeps newlines and tabs
    case("a\n\nb", fmt("textarea-field"), "a\n\nb", id="textarea: newlines kept"),
    case("  a\tb  ", fmt("textarea-field"), "a\tb", id="textarea: trimmed, tab kept"),
    case("<b>x</b>\ny", fmt("textarea-field"), "x\ny", id="textarea: tags stripped"),
    # sanitize_url
    case("hello world", fmt("uri"), "http://hello%20world", id="uri: space and scheme"),
    case(
        "https://example.com/a b",
        fmt("uri"),
        "https://example.com/a%20b",
        id="uri: space encoded",
    ),
    case("example.com", fmt("uri"), "http://example.com", id="uri: http:// added"),
    case("https://example.com", fmt("uri"), "https://example.com", id="uri: unchanged"),
    case("javascript:alert(1)", fmt("uri"), "", id="uri: javascript: is disallowed"),
    # an unknown format leaves the plain string cast
    case(5, fmt("made-up"), "5", id="unknown format: plain cast"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), FORMAT_ROWS)
def test_string_formats_apply_their_own_sanitizer(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


FORMAT_ON_OTHER_TYPES_ROWS = [
    case("#fff", {"type": "array", "format": "hex-color"}, ["#fff"], id="array keeps '#fff'"),
    case("nope", {"type": "array", "format": "hex-color"}, ["nope"], id="array ignores format"),
    case("5", {"type": "integer", "format": "hex-color"}, 5, id="integer ignores format"),
    case("5", {"type": "number", "format": "uri"}, 5.0, id="number ignores format"),
    case("0", {"type": "boolean", "format": "uuid"}, False, id="boolean ignores format"),
    case(
        {"a": " x "},
        {"type": "object", "format": "text-field"},
        {"a": " x "},
        id="object ignores format",
    ),
    case(
        "#fff,nope",
        {"type": "array", "items": {"type": "string", "format": "hex-color"}},
        ["#fff", ""],
        id="items of type string use the format",
    ),
    case(
        " x ",
        {"type": ["integer", "string"], "format": "text-field"},
        "x",
        id="a type list that picks string uses the format",
    ),
    case(
        "5",
        {"type": ["integer", "string"], "format": "hex-color"},
        5,
        id="a type list that picks integer ignores the format",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), FORMAT_ON_OTHER_TYPES_ROWS)
def test_format_is_ignored_when_the_type_is_not_string(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== arrays
ARRAY = {"type": "array"}
ARRAY_ROWS = [
    case([1, "a"], ARRAY, [1, "a"], id="a list stays"),
    case("1,2,3", ARRAY, ["1", "2", "3"], id="csv"),
    case("1,,", ARRAY, ["1"], id="'1,,' drops empty pieces"),
    case("", ARRAY, [], id="empty string is []"),
    case(5, ARRAY, ["5"], id="5 is ['5']"),
    case(1.5, ARRAY, ["1.5"], id="1.5 is ['1.5']"),
    case(True, ARRAY, ["1"], id="true is ['1']"),
    case(False, ARRAY, [], id="false is []"),
    case("1, 2 3", ARRAY, ["1", "2", "3"], id="commas and whitespace"),
    case("a\tb\nc", ARRAY, ["a", "b", "c"], id="tabs and newlines split"),
    case({"first": "1", "second": "2"}, ARRAY, ["1", "2"], id="a map keeps its values"),
    case(None, ARRAY, [], id="None is []"),
    case(
        "1,2,a",
        {"type": "array", "items": {"type": "number"}},
        [1.0, 2.0, 0.0],
        id="number items",
    ),
    case(
        "1,01",
        {"type": "array", "items": {"type": "integer"}},
        [1, 1],
        id="integer items",
    ),
    case(
        {"a": "1", "b": "2"},
        {"type": "array", "items": {"type": "integer"}},
        [1, 2],
        id="a map's values sanitized as items",
    ),
    case(
        [1, True],
        {"type": "array", "items": {"type": "string"}},
        ["1", "1"],
        id="string items",
    ),
    case(
        ["1,2", "3"],
        {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        [[1, 2], [3]],
        id="nested arrays",
    ),
    case([1, "1"], {"type": "array", "items": {}}, [1, "1"], id="empty items is not applied"),
    case(
        ["a", "b"],
        {"type": "array", "items": {"type": "string"}, "maxItems": 1},
        ["a", "b"],
        id="maxItems is not enforced",
    ),
    # uniqueItems runs on the sanitized items
    case([1, "1"], {"type": "array", "uniqueItems": True}, [1, "1"], id="unique without items"),
    case(
        "1,01",
        {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        duplicates(),
        id="csv '1,01' duplicates after sanitizing",
    ),
    case(
        [1, True],
        {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        duplicates(),
        id="1 and true both become '1'",
    ),
    case(
        ["hello world", "hello%20world"],
        {"type": "array", "items": {"type": "string", "format": "uri"}, "uniqueItems": True},
        duplicates(),
        id="urls equal once sanitized",
    ),
    case(
        [{"b": 2, "a": 1}, {"a": 1, "b": 2}],
        {"type": "array", "items": {"type": "object"}, "uniqueItems": True},
        duplicates(),
        id="objects with reordered keys",
    ),
    case(
        "1,2",
        {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        [1, 2],
        id="unique after sanitizing",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), ARRAY_ROWS)
def test_array_splits_scalars_reindexes_maps_and_sanitizes_each_item(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== objects
OBJECT = {"type": "object"}
A_INTEGER = {"a": {"type": "integer"}}
OBJECT_ROWS = [
    case({"a": 1}, OBJECT, {"a": 1}, id="a map stays"),
    case("", OBJECT, {}, id="empty string is {}"),
    case(None, OBJECT, {}, id="None is {}"),
    case(5, OBJECT, {}, id="an int is {}"),
    case("str", OBJECT, {}, id="a string is {}"),
    case(True, OBJECT, {}, id="true is {}"),
    case([1, 2], OBJECT, [1, 2], id="a list stays a list"),
    case(
        {"a": "5", "b": "x"},
        {"type": "object", "properties": A_INTEGER},
        {"a": 5, "b": "x"},
        id="properties sanitized, others kept untouched",
    ),
    case(
        {"b": "x", "a": "5"},
        {"type": "object", "properties": A_INTEGER},
        {"b": "x", "a": 5},
        id="input key order kept",
    ),
    case(
        {"a": "5", "b": "x"},
        {"type": "object", "properties": A_INTEGER, "additionalProperties": False},
        {"a": 5},
        id="additionalProperties false removes extras silently",
    ),
    case(
        {"x": "3"},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"x": 3},
        id="additionalProperties schema sanitizes extras",
    ),
    case(
        {"x": "3"},
        {"type": "object", "additionalProperties": True},
        {"x": "3"},
        id="additionalProperties true keeps extras",
    ),
    case(
        {"ab": "5", "ba": 5},
        {
            "type": "object",
            "patternProperties": {"^a": {"type": "integer"}, "a": {"type": "string"}},
        },
        {"ab": 5, "ba": "5"},
        id="first matching patternProperties schema",
    ),
    case(
        {"ab": 5},
        {
            "type": "object",
            "properties": {"ab": {"type": "string"}},
            "patternProperties": {"^a": {"type": "integer"}},
        },
        {"ab": "5"},
        id="properties beat patternProperties",
    ),
    case(
        {"x1": "5", "y": 1},
        {
            "type": "object",
            "patternProperties": {"^x": {"type": "integer"}},
            "additionalProperties": False,
        },
        {"x1": 5},
        id="pattern-matched keys survive additionalProperties false",
    ),
    case(
        {},
        {"type": "object", "required": ["a"], "minProperties": 2},
        {},
        id="no required or count checks",
    ),
    case(
        {"inner": {"x": "false", "y": 1}},
        {
            "type": "object",
            "properties": {
                "inner": {
                    "type": "object",
                    "properties": {"x": {"type": "boolean"}},
                    "additionalProperties": False,
                }
            },
        },
        {"inner": {"x": False}},
        id="nested objects",
    ),
    case(
        [{"id": "1", "extra": True}],
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "additionalProperties": False,
            },
        },
        [{"id": 1}],
        id="objects inside arrays",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), OBJECT_ROWS)
def test_object_coerces_to_a_map_and_sanitizes_each_property(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== type lists (§5)
TYPE_LIST_ROWS = [
    case(["Hello!"], {"type": ["number", "string"]}, None, id="no fit gives None"),
    case(True, {"type": ["integer", "string"]}, None, id="true fits neither"),
    case("", {"type": ["integer", "string"]}, "", id="empty string picks string"),
    case("1", {"type": ["boolean", "integer"]}, True, id="'1' boolean first"),
    case("1", {"type": ["integer", "boolean"]}, 1, id="'1' integer first"),
    case("5.0", {"type": ["number", "string"]}, 5.0, id="'5.0' number first"),
    case("5.0", {"type": ["string", "number"]}, "5.0", id="'5.0' string first"),
    case("false", {"type": ["boolean", "string"]}, False, id="'false' is a boolean"),
    case("a,b", {"type": ["array", "string"]}, ["a", "b"], id="'a,b' is an array"),
    case(1, {"type": ["array", "integer"]}, ["1"], id="1 is an array first"),
    case([], {"type": ["object", "array"]}, [], id="[] is an object"),
    case("", {"type": ["object", "array"]}, {}, id="'' is an object"),
    case(None, {"type": ["null", "integer"]}, None, id="None picks null"),
    case("5", {"type": ["null", "integer"]}, 5, id="'5' picks integer"),
    case(1.5, {"type": ["integer", "number"]}, 1.5, id="1.5 picks number"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), TYPE_LIST_ROWS)
def test_a_type_list_sanitizes_with_the_best_type_or_gives_none(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== anyOf / oneOf (§4, §6)
COMBINING_ROWS = [
    case(
        "5",
        {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        5,
        id="anyOf first match sanitizes",
    ),
    case(
        "abc",
        {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "abc",
        id="anyOf second match",
    ),
    case(
        5,
        {"anyOf": [{"type": "string"}]},
        (
            INVALID_PARAM,
            "p does not match the expected format. Reason: p is not of type string.",
            {"position": 0},
        ),
        id="anyOf without a match returns the error",
    ),
    case(
        5,
        {"oneOf": [{"type": "integer"}, {"type": "number"}]},
        (
            INVALID_PARAM,
            "p matches more than one of the expected formats.",
            {"positions": [0, 1]},
        ),
        id="oneOf with two matches returns the error",
    ),
    case(
        "5",
        {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        (
            INVALID_PARAM,
            "p matches more than one of the expected formats.",
            {"positions": [0, 1]},
        ),
        id="'5' is both an integer and a string",
    ),
    case(
        "5",
        {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
        5,
        id="oneOf single match sanitizes",
    ),
    case(
        [],
        {
            "oneOf": [
                {"title": "circle", "type": "string"},
                {"title": "square", "type": "integer"},
            ]
        },
        (INVALID_PARAM, "p is not a valid circle and square.", None),
        id="oneOf without a match, all titled",
    ),
    case(
        " a ",
        {"type": "string", "anyOf": [{"format": "text-field"}]},
        "a",
        id="the value is replaced by the branch's sanitized value",
    ),
    case(
        " a ",
        {"anyOf": [{"type": "string", "format": "text-field"}], "oneOf": [{"pattern": "^a$"}]},
        "a",
        id="oneOf sees the value anyOf already sanitized",
    ),
    case(
        {"a": "1", "b": "2"},
        {"anyOf": [{"type": "object", "properties": {"a": {"type": "integer"}}}]},
        {"a": 1, "b": "2"},
        id="an object branch sanitizes its properties",
    ),
    case(
        {"a": "1", "b": 2},
        {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}},
                    "additionalProperties": False,
                }
            ]
        },
        (
            INVALID_PARAM,
            "p does not match the expected format. Reason: b is not a valid property of Object.",
            {"position": 0},
        ),
        id="a branch is validated before it sanitizes, so extras fail it",
    ),
    case(
        ["1", "true"],
        {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}},
        [1, True],
        id="each item takes its own branch",
    ),
]


@pytest.mark.parametrize(("value", "schema", "expected"), COMBINING_ROWS)
def test_any_of_and_one_of_sanitize_with_the_matching_branch_or_return_the_error(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    assert sanitize(value, schema) == typed(expected)


# ====================================================================== the param string (§1)
def test_errors_name_the_param_given_to_the_call() -> None:
    schema = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    error = sanitize_value_from_schema("1,01", schema, "ids")
    assert typed(error) == ("error", INVALID_PARAM, "ids has duplicate items.", None)


# ====================================================================== misuse
MISUSE_ROWS = [
    case([1, "a"], {}, [1, "a"], id="missing type: value unchanged"),
    case(" x ", {"type": "invalid"}, " x ", id="unknown type: value unchanged"),
    case("x", {"format": "hex-color"}, "", id="missing type: format still applies"),
    case(" x ", {"format": "text-field"}, "x", id="missing type: text-field applies"),
    case("My Value", {"type": ["object", "type"]}, "My Value", id="unknown name in a type list"),
]


@pytest.mark.parametrize(("value", "schema", "expected"), MISUSE_ROWS)
def test_a_missing_or_unknown_type_warns_and_leaves_the_value_unchanged_except_for_format(
    value: Any, schema: dict[str, Any], expected: Any
) -> None:
    with pytest.warns(SchemaMisuseWarning):
        result = sanitize(value, schema)
    assert result == typed(expected)
