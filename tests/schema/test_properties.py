"""Property tests of the schema engine: generated schemas, generated values, junk.

1. Sanitizing is idempotent on valid values: once a value validates, sanitizing the sanitized
   value changes nothing more.
2. Values drawn *from* a schema (a strategy built for each generated schema) validate.
3. Arbitrary pairs, junk schemas included (non-dict sub-schemas, weird keyword values, huge
   numbers, NaN and infinities, deep nesting, invalid regular expressions), never raise: validation
   gives ``True`` or a `RestError` with one of the engine's eight codes, sanitizing gives a value or
   such an error. Misuse notices are expected there and are collected, not warned.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from sitecache.errors import RestError
from sitecache.schema import (
    filter_response_by_context,
    report_misuse_to,
    sanitize_value_from_schema,
    validate_value_from_schema,
)

Schema = dict[str, Any]
Values = st.SearchStrategy[Any]

MAX_DEPTH = 3
TYPE_NAMES = ("array", "object", "string", "number", "integer", "boolean", "null")
ERROR_CODES = frozenset(
    {
        "rest_invalid_type",
        "rest_invalid_param",
        "rest_property_required",
        "rest_invalid_pattern",
        "rest_invalid_hex_color",
        "rest_invalid_date",
        "rest_invalid_email",
        "rest_invalid_uuid",
    }
)
"""The only codes a schema error may carry (docs/reference/schema-engine.md)."""

NASTY_STRINGS = (
    "",
    " ",
    "0",
    "1",
    "true",
    "FALSE",
    "null",
    "1e3",
    " 5",
    "5 ",
    "0x1A",
    ".5",
    "-0",
    "NaN",
    "INF",
    "9" * 30,
    "1,2,3",
    "a,b,",
    " , ",
    "%0d",
    "%0d%0a",
    "%0%0dd",
    "a%20b",
    "x%2%200",
    "<p>x</p>",
    "< a>",
    "<",
    "a < b",
    "<script>x</script>",
    "javascript:alert(1)",
    "hello world",
    "#fff",
    "#fff\n",
    "2017-01-16T11:30:00Z",
    "a@b.co",
    "::1",
    "127.0.0.1",
    "123e4567-e89b-42d3-a456-426614174000",
    "\ud800",
    "\x00",
    "\u00e9\u00df\u0130",
    "line\nbreak\ttab",
)
HUGE_NUMBERS = (2**63, -(2**63) - 1, 10**30, 10**400, -(10**400), 1e308, -1e308, 5e-324)
GOOD_PATTERNS = ("^a", "[0-9]", "^[a-z]+$", "x$", r"^\d{3}-\d{2}$", "#")
BAD_PATTERNS = (
    "(",
    "[",
    "*",
    "a{2,1}",
    "(?<",
    "\\",
    "[z-a]",
    "(?P<n>a)(?P<n>b)",
    "[[:alpha:]]",
    "[[",
    "[a&&b]",
    "[a--b]",
    "a**",
    "(?",
    r"\p{L}",
    r"\h+",
    "a(?i)b",
    r"\z",
    r"\Z",
    "[^]a]",
    r"\k<x>",
    "(?R)",
    r"\Q.\E",
)
FORMATS = (
    "hex-color",
    "date-time",
    "email",
    "ip",
    "uuid",
    "uri",
    "text-field",
    "textarea-field",
    "bogus",
)
KEYWORDS = (
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
    "required",
    "title",
    "default",
    "context",
)


# ---------------------------------------------------------------------- helpers
def php_identity(value: Any) -> Any:
    """A hashable form at least as coarse as PHP ``serialize`` identity of a stabilized value.

    Maps and lists compare key-sorted (``{}`` and ``[]`` are the same PHP array), so two values
    with different identities are certainly not duplicates for ``uniqueItems``.
    """
    if value is None:
        return ("n",)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int):
        return ("i", value)
    if isinstance(value, float):
        return ("d", repr(value))
    if isinstance(value, str):
        return ("s", value)
    items = value.items() if isinstance(value, dict) else enumerate(value)
    pairs = sorted(((str(key), php_identity(item)) for key, item in items), key=lambda p: p[0])
    return ("a", tuple(pairs))


def same_value(actual: Any, expected: Any) -> bool:
    """Equal and of the same type, recursively (``True`` is not ``1``, ``1`` is not ``1.0``)."""
    if type(actual) is not type(expected):
        return False
    if isinstance(expected, dict):
        return set(actual) == set(expected) and all(
            same_value(actual[key], expected[key]) for key in expected
        )
    if isinstance(expected, list):
        return len(actual) == len(expected) and all(
            same_value(a, e) for a, e in zip(actual, expected, strict=True)
        )
    if isinstance(expected, float) and math.isnan(expected):
        return math.isnan(actual)
    return bool(actual == expected)


def integer_forms(number: int) -> Values:
    """Representations of an integer that ``integer`` and ``number`` schemas accept."""
    forms: list[Any] = [number, str(number), f" {number}", f"{number}.0"]
    if abs(number) < 2**53:
        forms.append(float(number))
    return st.sampled_from(forms)


def float_forms(number: float) -> Values:
    """Representations of a finite float that a ``number`` schema accepts."""
    return st.sampled_from([number, repr(number)])


json_scalars: Values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(HUGE_NUMBERS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(NASTY_STRINGS),
)
json_keys: Values = st.one_of(
    st.sampled_from(("a", "b", "c", "0", "1", "x1", "e1", "")), st.text(max_size=4)
)
json_values: Values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(json_keys, children, max_size=4)
    ),
    max_leaves=12,
)
"""Any JSON-like value, NaN, infinities and huge integers included."""

plain_json: Values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-100, 100), st.text(max_size=5)),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=6,
)
"""Tame JSON values for the places of a schema that accept anything."""


# ---------------------------------------------------------------------- valid schemas
class Level(NamedTuple):
    """Where a schema is being generated: its nesting depth and the kind of ``anyOf`` wanted.

    A general ``anyOf`` may list overlapping branches. Sanitizing can then move a value from one
    branch to an earlier one (``0`` matches ``array`` as ``['0']``, which an earlier ``object``
    branch then sanitizes differently), in WordPress as here, so sanitizing is idempotent only for
    ``anyOf`` branches that no value can satisfy two of: ``general=False`` generates those.
    """

    depth: int
    general: bool

    def deeper(self) -> Level:
        return Level(self.depth + 1, self.general)


Builder = Callable[[st.DrawFn, Level], tuple[Schema, Values]]


def _fits(low: int, high: int | None) -> list[str]:
    return [s for s in NASTY_STRINGS if low <= len(s) and (high is None or len(s) <= high)]


def _date_times() -> Values:
    return st.builds(
        lambda moment, separator, fraction, offset: (
            moment.strftime(f"%Y-%m-%d{separator}%H:%M:%S") + fraction + offset
        ),
        st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2100, 12, 31)),
        st.sampled_from("Tt "),
        st.sampled_from(["", ".5", ".123456"]),
        st.sampled_from(["", "Z", "+05", "-05:30", "+00:00"]),
    )


_emails: Values = st.builds(
    "{}@{}.{}".format,
    st.from_regex(r"\A[a-z0-9][a-z0-9._+-]{0,6}\Z"),
    st.from_regex(r"\A[a-z0-9]([a-z0-9-]{0,5}[a-z0-9])?\Z"),
    st.sampled_from(["com", "org", "co"]),
)

FORMAT_VALUES: dict[str, Values] = {
    "hex-color": st.from_regex(r"\A#([A-Fa-f0-9]{3}){1,2}\Z"),
    "date-time": _date_times(),
    "email": _emails,
    "ip": st.ip_addresses().map(str),
    "uuid": st.uuids().map(str),
    "uri": st.one_of(st.text(max_size=12), st.sampled_from(NASTY_STRINGS)),
    "text-field": st.one_of(st.text(max_size=12), st.sampled_from(NASTY_STRINGS)),
    "textarea-field": st.one_of(st.text(max_size=12), st.sampled_from(NASTY_STRINGS)),
}


def _string(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    flavour = draw(st.sampled_from(["plain", "pattern", "format", "enum"]))
    schema: Schema = {"type": "string"}
    if flavour == "pattern":
        pattern = draw(st.sampled_from(GOOD_PATTERNS))
        schema["pattern"] = pattern
        return schema, st.from_regex(pattern)
    if flavour == "format":
        name = draw(st.sampled_from(sorted(FORMAT_VALUES)))
        schema["format"] = name
        return schema, FORMAT_VALUES[name]
    if flavour == "enum":
        members = draw(st.lists(st.text(max_size=5), min_size=1, max_size=4, unique=True))
        schema["enum"] = members
        return schema, st.sampled_from(members)
    low = draw(st.none() | st.integers(0, 4))
    high = draw(st.none() | st.integers(low or 0, (low or 0) + 6))
    if low is not None:
        schema["minLength"] = low
    if high is not None:
        schema["maxLength"] = high
    values = st.text(min_size=low or 0, max_size=high if high is not None else (low or 0) + 10)
    nasty = _fits(low or 0, high)
    return schema, st.one_of(values, st.sampled_from(nasty)) if nasty else values


def _bounds(draw: st.DrawFn, schema: Schema, step: int) -> tuple[int | None, int | None]:
    """Optional minimum/maximum (with exclusive flags) leaving room for a multiple of ``step``."""
    low = draw(st.none() | st.integers(-1000, 1000))
    high = None
    if draw(st.booleans()):
        base = low if low is not None else draw(st.integers(-1000, 1000))
        high = base + draw(st.integers(2 * step + 2, 2000))
    if low is not None:
        schema["minimum"] = low
    if high is not None:
        schema["maximum"] = high
    exclusive_min = draw(st.booleans())
    exclusive_max = draw(st.booleans())
    if exclusive_min:
        schema["exclusiveMinimum"] = True  # without a minimum the flag must do nothing
    if exclusive_max:
        schema["exclusiveMaximum"] = True
    lowest = -(10**6) if low is None else low + (1 if exclusive_min else 0)
    highest = 10**6 if high is None else high - (1 if exclusive_max else 0)
    return lowest, highest


def _integer(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    schema: Schema = {"type": "integer"}
    step = draw(st.none() | st.integers(1, 7))
    if step is not None:
        schema["multipleOf"] = step
    lowest, highest = _bounds(draw, schema, step or 1)
    assert lowest is not None
    assert highest is not None
    multiples = st.integers(-(-lowest // (step or 1)), highest // (step or 1)).map(
        lambda k: k * (step or 1)
    )
    if draw(st.booleans()):
        members = draw(st.lists(multiples, min_size=1, max_size=3, unique=True))
        schema["enum"] = members
        multiples = st.sampled_from(members)
    return schema, multiples.flatmap(integer_forms)


def _number(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    schema: Schema = {"type": "number"}
    step = draw(st.none() | st.integers(1, 5))
    if step is not None:
        schema["multipleOf"] = step
        lowest, highest = _bounds(draw, schema, step)
        assert lowest is not None
        assert highest is not None
        multiples = st.integers(-(-lowest // step), highest // step).map(lambda k: k * step)
        return schema, multiples.flatmap(integer_forms)
    low = draw(st.none() | st.sampled_from([-10, -0.5, 0, 0.5, 3]))
    high = draw(st.none() | st.sampled_from([10, 12.5, 1000]))
    exclusive = draw(st.booleans())
    if low is not None:
        schema["minimum"] = low
    if high is not None:
        schema["maximum"] = high
    if exclusive:
        schema["exclusiveMinimum"] = schema["exclusiveMaximum"] = True
    floats = st.floats(
        min_value=low,
        max_value=high,
        exclude_min=exclusive and low is not None,
        exclude_max=exclusive and high is not None,
        allow_nan=False,
        allow_infinity=False,
    )
    return schema, floats.flatmap(float_forms)


BOOLEAN_VALUES = (True, False, 0, 1, "true", "false", "TRUE", "False", "0", "1")


def _boolean(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    return {"type": "boolean"}, st.sampled_from(BOOLEAN_VALUES)


def _null(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    return {"type": "null"}, st.none()


def bare_values(type_name: str) -> Values:
    """Values of a type under a schema with no other keyword."""
    if type_name == "string":
        return st.one_of(st.text(max_size=8), st.sampled_from(NASTY_STRINGS))
    if type_name == "integer":
        return st.integers(-(10**6), 10**6).flatmap(integer_forms)
    if type_name == "number":
        return st.floats(allow_nan=False, allow_infinity=False).flatmap(float_forms)
    if type_name == "boolean":
        return st.sampled_from(BOOLEAN_VALUES)
    if type_name == "null":
        return st.none()
    if type_name == "array":
        return st.one_of(st.lists(plain_json, max_size=3), st.sampled_from(["", "a,b", 5, True]))
    return st.one_of(st.dictionaries(st.text(max_size=3), plain_json, max_size=3), st.just(""))


def _type_list(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    types = draw(st.lists(st.sampled_from(TYPE_NAMES), min_size=2, max_size=3, unique=True))
    if not level.general and "boolean" in types:
        # The first listed type a value fits sanitizes it, in WordPress as here, and a value
        # sanitized as a later type may fit an earlier one: under ``["boolean", "integer"]``
        # 0.0 becomes the integer 0, which is then the boolean false. Listed last, ``boolean``
        # catches only values no other listed type fits, whose sanitized forms stay booleans.
        types = [name for name in types if name != "boolean"] + ["boolean"]
    return {"type": types}, st.one_of([bare_values(name) for name in types])


def _array(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    schema: Schema = {"type": "array"}
    if draw(st.booleans()):
        items, item_values = draw_schema(draw, level.deeper())
        schema["items"] = items
    else:
        item_values = plain_json
    unique = draw(st.booleans())
    if unique:
        schema["uniqueItems"] = True
    low = draw(st.none() | st.integers(0, 1 if unique else 2))
    high = draw(st.none() | st.integers(max(low or 0, 1), (low or 0) + 3))
    if low is not None:
        schema["minItems"] = low
    if high is not None:
        schema["maxItems"] = high
    values = st.lists(
        item_values,
        min_size=low or 0,
        max_size=high if high is not None else (low or 0) + 3,
        unique_by=php_identity if unique else None,
    )
    extras: list[Values] = []
    if "items" not in schema:
        tokens = st.lists(
            st.from_regex(r"\A[a-z0-9]{1,4}\Z"),
            min_size=low or 0,
            max_size=high if high is not None else (low or 0) + 3,
            unique=True,
        )
        extras.append(tokens.map(",".join))
    if not low:
        extras.append(st.just(""))
    return schema, st.one_of(values, *extras)


def _merge(parts: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in parts:
        merged.update(part)
    return merged


def _object(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    schema: Schema = {"type": "object"}
    names = draw(st.lists(st.sampled_from("abcd"), max_size=3, unique=True))
    children = {name: draw_schema(draw, level.deeper()) for name in names}
    required = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    v3 = draw(st.booleans()) and not any("required" in child for child, _ in children.values())
    properties: dict[str, Schema] = {}
    for name, (child, _) in children.items():
        properties[name] = {**child, "required": True} if v3 and name in required else child
    if bool(names) or draw(st.booleans()):
        schema["properties"] = properties
    if not v3 and (required or draw(st.booleans())):
        schema["required"] = required

    extra_parts: list[Values] = []
    if draw(st.booleans()):
        pattern_child, pattern_values = draw_schema(draw, level.deeper())
        schema["patternProperties"] = {"^x": pattern_child}
        extra_parts.append(st.dictionaries(st.sampled_from(["x1", "x2"]), pattern_values))
    additional = draw(st.sampled_from(["absent", "false", "true", "schema"]))
    if additional == "false":
        schema["additionalProperties"] = False
    elif additional == "true":
        schema["additionalProperties"] = True
    if additional == "schema":
        additional_child, additional_values = draw_schema(draw, level.deeper())
        schema["additionalProperties"] = additional_child
        extra_parts.append(st.dictionaries(st.sampled_from(["e1", "e2"]), additional_values))
    elif additional != "false":
        extra_parts.append(st.dictionaries(st.sampled_from(["e1", "e2"]), plain_json))

    if draw(st.booleans()):
        schema["minProperties"] = draw(st.integers(0, len(required)))
    if draw(st.booleans()):
        schema["maxProperties"] = draw(st.integers(len(names) + 4, len(names) + 6))

    declared = st.fixed_dictionaries(
        {name: values for name, (_, values) in children.items() if name in required},
        optional={name: values for name, (_, values) in children.items() if name not in required},
    )
    values = st.tuples(declared, *extra_parts).map(_merge)
    if not required and not schema.get("minProperties"):
        values = st.one_of(values, st.sampled_from(["", []]))
    return schema, values


def _any_of(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    if level.general:
        count = draw(st.integers(1, 3))
        branches = [draw_schema(draw, level.deeper(), combiners=False) for _ in range(count)]
    else:
        kinds = draw(st.lists(st.sampled_from(sorted(ONE_OF_FAMILY)), min_size=1, unique=True))
        branches = [
            _object(draw, level.deeper()) if kind == "object" else ONE_OF_FAMILY[kind]
            for kind in kinds
        ]
    schema = {"anyOf": [branch for branch, _ in branches]}
    return schema, st.one_of([values for _, values in branches])


ONE_OF_FAMILY: dict[str, tuple[Schema, Values]] = {
    "null": ({"type": "null"}, st.none()),
    "boolean": ({"type": "boolean"}, st.booleans()),
    "string": ({"type": "string", "pattern": "^a"}, st.text(max_size=5).map("a{}".format)),
    "integer": ({"type": "integer", "minimum": 2}, st.integers(2, 10**6)),
    "object": ({"type": "object"}, st.dictionaries(st.text(max_size=3), plain_json, max_size=3)),
}
"""Branches no value can satisfy two of at once, so a value of one matches exactly one."""


def _one_of(draw: st.DrawFn, level: Level) -> tuple[Schema, Values]:
    kinds = draw(st.lists(st.sampled_from(sorted(ONE_OF_FAMILY)), min_size=1, unique=True))
    schema = {"oneOf": [ONE_OF_FAMILY[kind][0] for kind in kinds]}
    return schema, st.one_of([ONE_OF_FAMILY[kind][1] for kind in kinds])


LEAF_BUILDERS: dict[str, Builder] = {
    "string": _string,
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
    "null": _null,
    "type-list": _type_list,
}
CONTAINER_BUILDERS: dict[str, Builder] = {"array": _array, "object": _object}
COMBINER_BUILDERS: dict[str, Builder] = {"anyOf": _any_of, "oneOf": _one_of}


def draw_schema(draw: st.DrawFn, level: Level, *, combiners: bool = True) -> tuple[Schema, Values]:
    """A valid schema and a strategy for values that satisfy it."""
    builders = dict(LEAF_BUILDERS)
    if level.depth < MAX_DEPTH:
        builders.update(CONTAINER_BUILDERS)
        if combiners:
            builders.update(COMBINER_BUILDERS)
    kind = draw(st.sampled_from(sorted(builders)))
    return builders[kind](draw, level)


@st.composite
def schemas_with_values(draw: st.DrawFn, *, general: bool = True) -> tuple[Schema, Values]:
    return draw_schema(draw, Level(0, general))


def _with_value(pair: tuple[Schema, Values]) -> st.SearchStrategy[tuple[Schema, Any]]:
    return st.tuples(st.just(pair[0]), pair[1])


conforming_cases: st.SearchStrategy[tuple[Schema, Any]] = schemas_with_values().flatmap(_with_value)
"""A generated schema with a value drawn from it."""

idempotence_cases: st.SearchStrategy[tuple[Schema, Any]] = st.one_of(
    schemas_with_values(general=False).flatmap(_with_value),
    st.tuples(schemas_with_values(general=False).map(lambda pair: pair[0]), json_values),
)
"""Generated schemas (``anyOf`` branches disjoint) with values drawn from them, or any value."""


# ---------------------------------------------------------------------- junk schemas
keyword_junk: Values = st.one_of(
    json_scalars,
    st.sampled_from((*TYPE_NAMES, "bogus", "", "Array")),
    st.sampled_from(BAD_PATTERNS + GOOD_PATTERNS),
    st.sampled_from(FORMATS),
    st.lists(st.sampled_from((*TYPE_NAMES, "bogus")), max_size=3),
    st.lists(json_values, max_size=3),
    st.dictionaries(json_keys, json_values, max_size=3),
)
junk_schemas: Values = st.recursive(
    st.one_of(st.dictionaries(st.sampled_from(KEYWORDS), keyword_junk, max_size=4), json_scalars),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(KEYWORDS), st.one_of(children, keyword_junk), max_size=5),
        st.dictionaries(
            st.one_of(st.sampled_from(BAD_PATTERNS + GOOD_PATTERNS), st.text(max_size=3)),
            children,
            max_size=3,
        ),
    ),
    max_leaves=20,
)
"""Schemas of any shape: known keywords with any values, maps of patterns, lists, scalars."""


@st.composite
def damaged_schemas(draw: st.DrawFn) -> Any:
    """A valid generated schema with some of its keywords replaced by junk."""
    schema, _ = draw(schemas_with_values())
    for _ in range(draw(st.integers(1, 3))):
        keyword = draw(st.sampled_from(KEYWORDS))
        schema[keyword] = draw(st.one_of(keyword_junk, junk_schemas))
    return schema


any_schema: Values = st.one_of(
    junk_schemas, damaged_schemas(), schemas_with_values().map(lambda pair: pair[0])
)
any_value: Values = st.one_of(json_values, conforming_cases.map(lambda case: case[1]))


# ---------------------------------------------------------------------- the properties
@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(case=idempotence_cases)
def test_sanitizing_a_valid_value_twice_changes_nothing_more(case: tuple[Schema, Any]) -> None:
    schema, value = case
    assume(validate_value_from_schema(value, schema, "p") is True)
    once = sanitize_value_from_schema(value, schema, "p")
    if isinstance(once, RestError):
        # The one legitimate failure: items distinct as given but equal once sanitized.
        assert once.message.endswith("has duplicate items."), once
        return
    twice = sanitize_value_from_schema(once, schema, "p")
    assert same_value(twice, once), f"{value!r} -> {once!r} -> {twice!r}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=conforming_cases)
def test_values_drawn_from_a_schema_validate_against_it(case: tuple[Schema, Any]) -> None:
    schema, value = case
    result = validate_value_from_schema(value, schema, "p")
    assert result is True, f"{value!r} rejected: {result!r}"


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=any_schema, value=any_value)
def test_arbitrary_schemas_and_values_never_raise(schema: Any, value: Any) -> None:
    with report_misuse_to(lambda function, message: None):
        valid = validate_value_from_schema(value, schema, "p")
        sanitized = sanitize_value_from_schema(value, schema, "p")
        filter_response_by_context(value, schema, "view")
    assert valid is True or isinstance(valid, RestError), valid
    if isinstance(valid, RestError):
        assert valid.code in ERROR_CODES, valid
    if isinstance(sanitized, RestError):
        assert sanitized.code in ERROR_CODES, sanitized


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    type_name=st.sampled_from((*TYPE_NAMES, "bogus")),
    keywords=st.dictionaries(
        st.sampled_from(KEYWORDS), st.one_of(keyword_junk, junk_schemas), max_size=4
    ),
    value=st.one_of(any_value, *(bare_values(name) for name in TYPE_NAMES)),
)
def test_every_type_with_junk_keywords_never_raises(
    type_name: str, keywords: dict[str, Any], value: Any
) -> None:
    schema = {**keywords, "type": type_name}
    with report_misuse_to(lambda function, message: None):
        valid = validate_value_from_schema(value, schema, "p")
        sanitized = sanitize_value_from_schema(value, schema, "p")
        filter_response_by_context(value, schema, "edit")
    assert valid is True or (isinstance(valid, RestError) and valid.code in ERROR_CODES), valid
    assert not isinstance(sanitized, RestError) or sanitized.code in ERROR_CODES, sanitized


WEIRD_KEYWORD_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1.5,
    math.nan,
    math.inf,
    -math.inf,
    10**400,
    "",
    "abc",
    "(",
    "object",
    [],
    [[]],
    [{}],
    [None, 1, "a"],
    {},
    {"a": []},
    {"(": {"type": "string"}},
    {"a": "not a schema"},
    [{"type": "string"}, "x"],
)
"""Values no schema keyword expects, tried for every keyword."""

WEIRD_VALUES: tuple[Any, ...] = (
    None,
    True,
    0,
    1.5,
    math.nan,
    10**400,
    "",
    "a,b",
    "%0d",
    [],
    [1, [2]],
    {},
    {"a": 1, "(": [None]},
)


@pytest.mark.parametrize("keyword", KEYWORDS)
def test_each_keyword_with_weird_values_never_raises(keyword: str) -> None:
    failures: list[str] = []
    with report_misuse_to(lambda function, message: None):
        for type_name in (*TYPE_NAMES, None):
            for junk in WEIRD_KEYWORD_VALUES:
                schema: dict[str, Any] = {keyword: junk}
                if type_name is not None and keyword != "type":
                    schema["type"] = type_name
                for value in WEIRD_VALUES:
                    for function in (validate_value_from_schema, sanitize_value_from_schema):
                        try:
                            result = function(value, schema, "p")
                        except Exception as error:
                            failures.append(
                                f"{function.__name__}({value!r}, {schema!r}): {error!r}"
                            )
                            continue
                        if isinstance(result, RestError) and result.code not in ERROR_CODES:
                            failures.append(f"{function.__name__}: unexpected code {result!r}")
    assert not failures, f"{len(failures)} failures, e.g.\n" + "\n".join(failures[:5])


def _check_format(format_name: str, type_name: str | None, value: Any) -> None:
    schema: Schema = {"format": format_name}
    if type_name is not None:
        schema["type"] = type_name
    with report_misuse_to(lambda function, message: None):
        valid = validate_value_from_schema(value, schema, "p")
        sanitized = sanitize_value_from_schema(value, schema, "p")
    assert valid is True or (isinstance(valid, RestError) and valid.code in ERROR_CODES), valid
    assert not isinstance(sanitized, RestError), sanitized


@pytest.mark.parametrize("type_name", ["string", "bogus", None])
@pytest.mark.parametrize("format_name", FORMATS)
def test_every_format_checks_and_sanitizes_each_nasty_value_without_raising(
    format_name: str, type_name: str | None
) -> None:
    value: object
    for value in (*NASTY_STRINGS, *HUGE_NUMBERS, math.nan, math.inf, None, True, [], {}):
        _check_format(format_name, type_name, value)


@settings(max_examples=300, deadline=None)
@example(format_name="uri", type_name="string", value="%0D")  # once found, always replayed
@given(
    format_name=st.sampled_from(FORMATS),
    type_name=st.sampled_from(["string", "bogus", None]),
    value=st.one_of(st.text(), json_scalars),
)
def test_every_format_checks_and_sanitizes_any_value_without_raising(
    format_name: str, type_name: str | None, value: Any
) -> None:
    _check_format(format_name, type_name, value)


def _nest(depth: int, kinds: list[str]) -> tuple[Schema, Any]:
    schema: Schema = {"type": "string", "format": "uri", "context": ["view"]}
    value: Any = "a b"
    for level in range(depth):
        kind = kinds[level % len(kinds)]
        if kind == "array":
            schema = {"type": "array", "items": schema, "uniqueItems": True, "context": ["view"]}
            value = [value]
        elif kind == "object":
            schema = {"type": "object", "properties": {"k": schema}, "context": ["view"]}
            value = {"k": value}
        else:
            branches = [{"type": "null"}, schema]
            schema = {"type": schema["type"], "anyOf": branches, "context": ["view"]}
    return schema, value


@settings(max_examples=40, deadline=None)
@given(
    depth=st.integers(1, 120),
    kinds=st.lists(st.sampled_from(["array", "object", "anyOf"]), min_size=1, max_size=3),
)
def test_deeply_nested_schemas_validate_and_sanitize(depth: int, kinds: list[str]) -> None:
    schema, value = _nest(depth, kinds)
    assert validate_value_from_schema(value, schema, "p") is True
    sanitized = sanitize_value_from_schema(value, schema, "p")
    expected = _nest(depth, kinds)[1]
    assert sanitized == _replace_leaf(expected, "http://a%20b")
    assert filter_response_by_context(value, schema, "view") == value


def _replace_leaf(value: Any, leaf: str) -> Any:
    if isinstance(value, list):
        return [_replace_leaf(item, leaf) for item in value]
    if isinstance(value, dict):
        return {key: _replace_leaf(item, leaf) for key, item in value.items()}
    return leaf
