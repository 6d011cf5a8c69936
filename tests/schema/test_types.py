"""Type recognition and coercion: ``is_*``, ``sanitize_*`` and ``get_best_type_for_value``.

Every row comes from WordPress's schema functions, §5 and the "Objects and
arrays" tables of §7. A plain Python object stands in for PHP's "plain user object".
"""

from __future__ import annotations

from typing import Any

import pytest

from sitecache.schema import (
    get_best_type_for_value,
    is_array,
    is_boolean,
    is_integer,
    is_object,
    sanitize_array,
    sanitize_boolean,
    sanitize_object,
)


class PlainObject:
    """A user object that is neither a map nor a list."""


def same_value(actual: Any, expected: Any) -> bool:
    """Equal and of the same Python type, recursively (so ``1 == True`` does not count)."""
    if type(actual) is not type(expected):
        return False
    if isinstance(expected, dict):
        return list(actual) == list(expected) and all(
            same_value(actual[key], expected[key]) for key in expected
        )
    if isinstance(expected, list):
        return len(actual) == len(expected) and all(
            same_value(a, e) for a, e in zip(actual, expected, strict=True)
        )
    return bool(actual == expected)


# ---------------------------------------------------------------------- boolean
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(True, True, id="true"),
        pytest.param(False, True, id="false"),
        pytest.param(0, True, id="int-0"),
        pytest.param(1, True, id="int-1"),
        pytest.param("true", True, id="str-true"),
        pytest.param("false", True, id="str-false"),
        pytest.param("1", True, id="str-1"),
        pytest.param("0", True, id="str-0"),
        pytest.param("TRUE", True, id="str-TRUE-any-case"),
        pytest.param("False", True, id="str-False-any-case"),
        pytest.param(2, False, id="int-2"),
        pytest.param(-1, False, id="int-minus-1"),
        pytest.param(1123, False, id="int-1123"),
        pytest.param(1.0, False, id="float-1.0"),
        pytest.param("yes", False, id="str-yes"),
        pytest.param("no", False, id="str-no"),
        pytest.param("", False, id="empty-string"),
        pytest.param(" true", False, id="str-leading-space-true"),
        pytest.param(None, False, id="null"),
        pytest.param([], False, id="empty-list"),
        pytest.param([True], False, id="list-of-true"),
    ],
)
def test_is_boolean_accepts_only_booleans_0_1_and_the_four_strings(
    value: object, expected: bool
) -> None:
    assert is_boolean(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(True, True, id="true"),
        pytest.param(False, False, id="false"),
        pytest.param("false", False, id="str-false"),
        pytest.param("FALSE", False, id="str-FALSE-lowercased"),
        pytest.param("0", False, id="str-0"),
        pytest.param("true", True, id="str-true"),
        pytest.param("1", True, id="str-1"),
        pytest.param("", False, id="empty-string"),
        pytest.param("no", True, id="str-no-is-truthy"),
        pytest.param("off", True, id="str-off-is-truthy"),
        pytest.param(" ", True, id="str-space-is-truthy"),
        pytest.param("0.0", True, id="str-0.0-is-truthy"),
        pytest.param("00", True, id="str-00-is-truthy"),
        pytest.param("false ", True, id="str-false-trailing-space-is-truthy"),
        pytest.param(0, False, id="int-0"),
        pytest.param(1, True, id="int-1"),
        pytest.param(0.0, False, id="float-0.0"),
        pytest.param([], False, id="empty-list"),
        pytest.param([0], True, id="list-of-0"),
        pytest.param(None, False, id="null"),
    ],
)
def test_sanitize_boolean_makes_only_false_and_0_strings_false_then_follows_truthiness(
    value: object, expected: bool
) -> None:
    assert sanitize_boolean(value) is expected


# ---------------------------------------------------------------------- integer
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(5, True, id="int"),
        pytest.param(0, True, id="int-0"),
        pytest.param(-3, True, id="negative-int"),
        pytest.param("1.0", True, id="str-1.0"),
        pytest.param(1.0, True, id="float-1.0"),
        pytest.param("1e3", True, id="str-1e3"),
        pytest.param("05", True, id="str-05"),
        pytest.param("-0", True, id="str-minus-0"),
        pytest.param("+5", True, id="str-plus-5"),
        pytest.param("5.", True, id="str-5-dot"),
        pytest.param(1e20, True, id="float-1e20"),
        pytest.param("9999999999999999999", True, id="str-beyond-int64"),
        pytest.param(" 5", True, id="leading-whitespace"),
        pytest.param("5 ", True, id="trailing-whitespace-php8"),
        pytest.param(1.5, False, id="float-1.5"),
        pytest.param("5.5", False, id="str-5.5"),
        pytest.param(".5", False, id="str-dot-5"),
        pytest.param(True, False, id="true-is-not-numeric"),
        pytest.param(None, False, id="null"),
        pytest.param("", False, id="empty-string"),
        pytest.param("0x1A", False, id="hex-string"),
        pytest.param("abc", False, id="non-numeric-string"),
        pytest.param([], False, id="empty-list"),
    ],
)
def test_is_integer_requires_a_numeric_value_without_fraction(
    value: object, expected: bool
) -> None:
    assert is_integer(value) is expected


# ---------------------------------------------------------------------- array
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("", True, id="empty-string"),
        pytest.param([], True, id="empty-list"),
        pytest.param([1, "a", None], True, id="list"),
        pytest.param("a,b,c", True, id="csv"),
        pytest.param("a,b,", True, id="csv-trailing-comma"),
        pytest.param("1,2,3", True, id="csv-numbers"),
        pytest.param("1,,", True, id="csv-empty-pieces"),
        pytest.param("a", True, id="single-string"),
        pytest.param(5, True, id="int-scalar"),
        pytest.param(1.5, True, id="float-scalar"),
        pytest.param(True, True, id="true-scalar"),
        pytest.param(False, True, id="false-scalar"),
        pytest.param({"0": "a"}, True, id="map-with-numeric-string-key"),
        pytest.param({"first": "1", "second": "2"}, False, id="associative-map"),
        pytest.param({"hi": "there"}, False, id="associative-map-hi"),
        pytest.param(None, False, id="null"),
        pytest.param(PlainObject(), False, id="plain-object"),
    ],
)
def test_is_array_accepts_lists_and_scalars_but_not_maps_with_string_keys(
    value: object, expected: bool
) -> None:
    assert is_array(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("", [], id="empty-string"),
        pytest.param([], [], id="empty-list"),
        pytest.param(["a", "b"], ["a", "b"], id="list-unchanged"),
        pytest.param([1, None, {"a": 1}], [1, None, {"a": 1}], id="mixed-list-unchanged"),
        pytest.param("a,b,c", ["a", "b", "c"], id="csv"),
        pytest.param("a,b,", ["a", "b"], id="csv-trailing-comma"),
        pytest.param("1,,", ["1"], id="csv-empty-pieces-dropped"),
        pytest.param("1, 2 3", ["1", "2", "3"], id="commas-and-whitespace"),
        pytest.param("a", ["a"], id="single-string"),
        pytest.param(5, ["5"], id="int-becomes-string-item"),
        pytest.param(True, ["1"], id="true-becomes-1"),
        pytest.param(False, [], id="false-becomes-empty"),
        pytest.param({"hi": "there"}, ["there"], id="associative-map-array-values"),
        pytest.param({"first": "1", "second": "2"}, ["1", "2"], id="associative-map-values"),
        pytest.param(None, [], id="null"),
        pytest.param(PlainObject(), [], id="plain-object"),
    ],
)
def test_sanitize_array_splits_scalars_reindexes_maps_and_empties_the_rest(
    value: object, expected: list[Any]
) -> None:
    assert same_value(sanitize_array(value), expected)


# ---------------------------------------------------------------------- object
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("", True, id="empty-string"),
        pytest.param({}, True, id="empty-map"),
        pytest.param({"hi": "there"}, True, id="map"),
        pytest.param([1, 2], True, id="list-is-a-php-array"),
        pytest.param([], True, id="empty-list"),
        pytest.param("str", False, id="string"),
        pytest.param(5, False, id="int"),
        pytest.param(1.5, False, id="float"),
        pytest.param(True, False, id="true"),
        pytest.param(None, False, id="null"),
        pytest.param(PlainObject(), False, id="plain-object"),
    ],
)
def test_is_object_accepts_maps_lists_and_the_empty_string(value: object, expected: bool) -> None:
    assert is_object(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("", {}, id="empty-string-becomes-empty-map"),
        pytest.param({"hi": "there"}, {"hi": "there"}, id="map-unchanged"),
        pytest.param(["a", "b"], ["a", "b"], id="list-stays-a-list"),
        pytest.param("str", {}, id="string"),
        pytest.param(5, {}, id="int"),
        pytest.param(None, {}, id="null"),
        pytest.param(PlainObject(), {}, id="plain-object"),
    ],
)
def test_sanitize_object_keeps_arrays_and_turns_everything_else_into_an_empty_map(
    value: object, expected: Any
) -> None:
    assert same_value(sanitize_object(value), expected)


# ---------------------------------------------------------------------- best type
@pytest.mark.parametrize(
    ("value", "types", "expected"),
    [
        pytest.param(1, ["array", "integer"], "array", id="scalar-is-an-array-first"),
        pytest.param("1", ["boolean", "integer"], "boolean", id="str-1-boolean-first"),
        pytest.param("1", ["integer", "boolean"], "integer", id="str-1-integer-first"),
        pytest.param("5.0", ["number", "string"], "number", id="str-5.0-number-first"),
        pytest.param("5.0", ["string", "number"], "string", id="str-5.0-string-first"),
        pytest.param("false", ["boolean", "string"], "boolean", id="str-false-boolean"),
        pytest.param("a,b", ["array", "string"], "array", id="csv-array-first"),
        pytest.param([], ["object", "array"], "object", id="empty-list-object-first"),
        pytest.param("", ["object", "array"], "object", id="empty-string-object-first"),
        pytest.param("", ["array", "string"], "string", id="empty-string-prefers-string"),
        pytest.param("", ["object", "string"], "string", id="empty-string-string-listed-last"),
        pytest.param(True, ["integer", "string"], "", id="true-matches-nothing"),
        pytest.param(None, ["string", "null"], "null", id="null"),
        pytest.param({"a": 1}, ["array", "object"], "object", id="map-is-not-an-array"),
        pytest.param(1.5, ["integer", "number"], "number", id="fraction-is-not-integer"),
        pytest.param("abc", ["integer", "number"], "", id="non-numeric-string-no-match"),
        pytest.param(2, ["boolean", "integer"], "integer", id="int-2-is-not-boolean"),
    ],
)
def test_get_best_type_for_value_walks_the_listed_order(
    value: object, types: list[str], expected: str
) -> None:
    assert get_best_type_for_value(value, types) == expected
