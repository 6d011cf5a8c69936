"""Generated schemas and values for the compiled-schema property test (#18).

`cases` draws a schema with every keyword the engine knows (types and lists of types, ``enum``,
bounds and exclusive flags, ``multipleOf``, lengths, patterns from a small safe set, formats,
``items``, ``properties``, ``additionalProperties``, ``patternProperties``, ``required`` in both
forms, ``anyOf``/``oneOf`` with and without titles and with overlapping branches, nested a few
levels), keyword values PHP reads loosely (``"5"`` for a bound, ``1`` for a flag) and, now and
then, a schema that reports misuse; then a batch of values for it. Half the values are tame
(aimed at conforming, with a near miss deeper down now and then), half wild: numeric strings,
``"true"`` and ``1`` for booleans, comma lists for arrays, lists for objects, lengths and bounds
off by one.

Everything is drawn from strategies built once, at import: a run draws many thousand values,
and building strategies per schema is what makes a hypothesis run slow.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from hypothesis import strategies as st

__all__ = ["VALUES_PER_SCHEMA", "Case", "cases", "draw_schema", "draw_value"]

Schema = dict[str, Any]
Values = st.SearchStrategy[Any]
Case = tuple[Schema, list[Any], str]
"""A schema, values for it and the param to name them by."""

VALUES_PER_SCHEMA = (16, 20)
"""How many values `cases` draws for each schema."""
MAX_DEPTH = 3

TYPES = ("array", "object", "string", "number", "integer", "boolean", "null")
SAFE_PATTERNS = ("^a", "[0-9]", "^[a-z]+$", "x$", r"^\d{3}-\d{2}$", "#", r"^\p{Lu}", r"^\S")
FORMATS = ("hex-color", "date-time", "email", "ip", "uuid", "uri", "text-field", "bogus")
PROPERTY_NAMES = ("a", "b", "c", "0")
OTHER_KEYS = ("x1", "x2", "e1", "1", "")

NUMBERISH: tuple[Any, ...] = (
    *(0, 1, -1, 2, 3, 5, 7, 10, 60, 99, 100, 101, -100),
    *(0.5, 1.5, -0.5, 2.4, 3.0, 1e20, 10**20, math.nan, math.inf, -math.inf),
    *("5", " 5", "5 ", "5.0", "1e3", ".5", "-0", "+5", "0x1A", "abc", "1,2", ""),
    *(True, False, None),
)
BOOLEANISH: tuple[Any, ...] = (
    *(True, False, 0, 1, 2, -1, 1.0, 0.0),
    *("true", "false", "TRUE", "False", "0", "1", "yes", "", " true", "00"),
    None,
)
STRINGISH: tuple[Any, ...] = (
    *("", " ", "a", "ab", "abc", "Abc", "x", "xyz", "a,b", "1, 2 3", "0", "5", "true"),
    *("#fff", "#abcdef", "#ab", "#fff\n", "2017-01-16T11:30:00Z", "2017-01-16", "a@b.co"),
    *("a@b.c", "127.0.0.1", "::1", "1:2:3", "123e4567-e89b-42d3-a456-426614174000"),
    *("123E4567-E89B-42D3-A456-426614174000", "http://x y", "javascript:alert(1)"),
    *("123-45", "a#b", "<p>x</p>", " a%20b\t", "\u00e9t\u00e9", "line\nbreak", "x$\n"),
    *(1, 1.5, True, None),
)
LOOSE_BOUNDS: tuple[Any, ...] = (0, 1, 2, 3, 5, 10, -1, 0.5, 2.5, "5", "2", None)
LOOSE_FLAGS: tuple[Any, ...] = (True, False, 1, 0, "yes", "", None)


# ---------------------------------------------------------------------- schemas
def _optional(*choices: Any) -> Values:
    """One of ``choices`` half of the time, else ``None`` (the keyword is left out)."""
    return st.sampled_from((*(None for _ in choices), *choices))


BOOLEANS = st.booleans()
STRING_KEYWORDS: dict[str, Values] = {
    "minLength": _optional(*LOOSE_BOUNDS),
    "maxLength": _optional(*LOOSE_BOUNDS),
    "pattern": _optional(*SAFE_PATTERNS),
    "format": _optional(*FORMATS),
}
NUMBER_KEYWORDS: dict[str, Values] = {
    "minimum": _optional(*LOOSE_BOUNDS),
    "maximum": _optional(3, 10, 100, 99.5, "50", 2.5),
    "exclusiveMinimum": _optional(*LOOSE_FLAGS),
    "exclusiveMaximum": _optional(*LOOSE_FLAGS),
    "multipleOf": _optional(2, 3, 0.5, 1.5, 0, "2"),
}
ARRAY_KEYWORDS: dict[str, Values] = {
    "minItems": _optional(0, 1, 2, "1"),
    "maxItems": _optional(0, 1, 2, 3),
    "uniqueItems": _optional(True, True, 1, "yes", False, ""),
}
OBJECT_KEYWORDS: dict[str, Values] = {
    "minProperties": _optional(0, 1, 2),
    "maxProperties": _optional(1, 2, 4),
}
NUMBER_TYPES = st.sampled_from(["integer", "number"])
SCALAR_KINDS = st.sampled_from(["string", "number", "boolean", "null"])
PROPERTY_LISTS = st.lists(st.sampled_from(PROPERTY_NAMES), max_size=3, unique=True)
REQUIRED_LISTS = st.lists(st.sampled_from((*PROPERTY_NAMES, "x1")), max_size=2, unique=True)
V3_FLAGS = st.sampled_from([True, True, 1, "yes"])
KEY_PATTERNS = st.sampled_from(["^x", "[0-9]", "^e"])
ADDITIONAL = st.sampled_from(["absent", "false", "true", "schema"])
COMBINERS = st.sampled_from([["anyOf"], ["oneOf"], ["anyOf", "oneOf"]])
BRANCH_COUNTS = st.integers(1, 3)
TYPE_NAMES = st.sampled_from(TYPES)
CONTAINER_TYPES = st.sampled_from(["array", "object"])
MISUSE: st.SearchStrategy[Schema] = st.sampled_from(
    [
        {},
        {"type": "strnig"},
        {"type": ["string", "bogus"]},
        {"type": "string", "pattern": "("},
        {"type": "array", "items": "x"},
        {"type": "object", "properties": {"a": {}}},
        {"anyOf": [{"type": "string"}, {"minimum": 1}]},
        {"format": "hex-color"},
    ]
)
ENUMS = st.lists(
    st.sampled_from(["a", "b", "abc", 1, 2, 1.0, "1", True, False, None, [1, 2], {"a": 1}, ""]),
    min_size=1,
    max_size=3,
) | st.sampled_from(["a", 0])
KINDS = st.sampled_from(["scalar", "scalar", "type-list", "misuse"])
NESTING_KINDS = st.sampled_from(
    ["scalar", "scalar", "type-list", "misuse", "array", "array", "object", "object", "combined"]
)
ORDERS = {count: st.permutations(range(count)) for count in range(1, 6)}
ONE_IN_FOUR = st.integers(0, 3)
ONE_IN_SIX = st.integers(0, 5)


def _keywords(draw: st.DrawFn, schema: Schema, keywords: dict[str, Values]) -> Schema:
    for key, values in keywords.items():
        value = draw(values)
        if value is not None:
            schema[key] = value
    return schema


def _scalar(draw: st.DrawFn) -> Schema:
    kind = draw(SCALAR_KINDS)
    if kind == "string":
        return _keywords(draw, {"type": "string"}, STRING_KEYWORDS)
    if kind == "number":
        return _keywords(draw, {"type": draw(NUMBER_TYPES)}, NUMBER_KEYWORDS)
    return {"type": kind}


def _array(draw: st.DrawFn, depth: int) -> Schema:
    schema: Schema = {"type": "array"}
    if draw(BOOLEANS):
        schema["items"] = draw_schema(draw, depth + 1)
    return _keywords(draw, schema, ARRAY_KEYWORDS)


def _object(draw: st.DrawFn, depth: int) -> Schema:
    schema: Schema = {"type": "object"}
    names = draw(PROPERTY_LISTS)
    properties = {name: draw_schema(draw, depth + 1) for name in names}
    if bool(names) or draw(BOOLEANS):
        schema["properties"] = properties
    required = draw(REQUIRED_LISTS)
    if draw(BOOLEANS):
        schema["required"] = required
    else:
        for name in set(required) & set(names):
            properties[name]["required"] = draw(V3_FLAGS)
    if draw(BOOLEANS):
        child = draw_schema(draw, depth + 1) if draw(BOOLEANS) else None
        schema["patternProperties"] = {draw(KEY_PATTERNS): child}
    additional = draw(ADDITIONAL)
    if additional == "schema":
        schema["additionalProperties"] = draw_schema(draw, depth + 1)
    elif additional != "absent":
        schema["additionalProperties"] = additional == "true"
    return _keywords(draw, schema, OBJECT_KEYWORDS)


def _combined(draw: st.DrawFn, depth: int) -> Schema:
    keywords = draw(COMBINERS)
    schema: Schema = {}
    for keyword in keywords:
        branches = [draw_schema(draw, depth + 1) for _ in range(draw(BRANCH_COUNTS))]
        if draw(ONE_IN_FOUR) == 0:  # an overlapping branch: some values match two
            branches.append({**copy.deepcopy(branches[0]), "description": "again"})
        if draw(BOOLEANS):
            for position, branch in enumerate(branches):
                branch["title"] = f"shape {position}"
        if draw(BOOLEANS):
            branches = [{k: v for k, v in branch.items() if k != "type"} for branch in branches]
        schema[keyword] = branches
    if draw(BOOLEANS) or (len(keywords) > 1 and draw(ONE_IN_FOUR) != 0):
        schema["type"] = draw(TYPE_NAMES)
    return schema


def _type_list(draw: st.DrawFn) -> Schema:
    parts = [_scalar(draw) for _ in range(draw(BRANCH_COUNTS) + 1)]
    merged: Schema = {}
    for part in parts:
        merged.update(part)
    names = list(dict.fromkeys(part["type"] for part in parts))
    if draw(BOOLEANS):
        names.append(draw(CONTAINER_TYPES))
    names = list(dict.fromkeys(names))
    merged["type"] = [names[i] for i in draw(ORDERS[len(names)])]
    return merged


def draw_schema(draw: st.DrawFn, depth: int = 0) -> Schema:
    """A schema with every keyword the engine knows, nested up to `MAX_DEPTH` levels."""
    kind = draw(NESTING_KINDS if depth < MAX_DEPTH else KINDS)
    if kind == "array":
        schema = _array(draw, depth)
    elif kind == "object":
        schema = _object(draw, depth)
    elif kind == "combined":
        schema = _combined(draw, depth)
    elif kind == "type-list":
        schema = _type_list(draw)
    elif kind == "misuse" and draw(ONE_IN_FOUR) == 0:
        schema = copy.deepcopy(draw(MISUSE))
    else:
        schema = _scalar(draw)
    if draw(ONE_IN_SIX) == 0:
        schema["enum"] = draw(ENUMS)
    return schema


# ---------------------------------------------------------------------- values
JSON_POOL: tuple[Any, ...] = (
    *(None, True, False, 0, 1, -1, 2, 0.5, "", "a", "1", "a,b", "x y"),
    *([], [1], [1, 1], ["a", "b"], [None], [[]], [{}], [1, "1", True], ["1", "01"]),
    *({}, {"a": 1}, {"a": None}, {"b": "x", "a": 1}, {"0": "a"}, {"x1": 1}, {"e1": []}),
    *({"a": {"b": 1}}, {"a": [1, 2]}, {"": 1}, [{"a": 1}, {"a": 1}], [{"a": 1, "b": 2}]),
)
json_values: Values = st.sampled_from(JSON_POOL)
"""Any JSON-like value, from a fixed pool (cheap to draw: the run draws a great many)."""


_INDEXES = tuple(st.integers(0, max(count - 1, 0)) for count in range(41))
_WILD: dict[str, Values] = {
    "integer": st.one_of(st.sampled_from(NUMBERISH), st.integers(-200, 200)),
    "number": st.one_of(st.sampled_from(NUMBERISH), st.integers(-200, 200)),
    "boolean": st.sampled_from(BOOLEANISH),
    "string": st.one_of(st.sampled_from(STRINGISH), st.text(max_size=4)),
    "null": st.sampled_from((None, "", "null", 0)),
    "separated": st.lists(st.sampled_from(("1", "01", "a", "b", " ", "2")), max_size=4).map(
        ",".join
    ),
    "array-like": st.sampled_from(("", 5, True, False, None, "1,,2", {"0": 1, "1": 2}, {"a": 1})),
    "object-like": st.sampled_from(("", [], "x", 5, None, {0: "a"}, {"a": None})),
}
_TAME: dict[str, Values] = {
    "integer": st.one_of(st.integers(-3, 104), st.sampled_from(("5", "10", " 7", "1e2"))),
    "number": st.one_of(st.integers(-3, 104), st.sampled_from((0.5, 1.5, 2.5, 99.5, "4.5"))),
    "boolean": st.sampled_from((True, False, "true", "false", "0", "1", 0, 1)),
    "string": st.one_of(st.sampled_from(("a", "ab", "abc", "xyz", "Abc", "x1")), st.text()),
    "null": st.none(),
}
SAMPLES: dict[str, tuple[str, ...]] = {
    "hex-color": ("#fff", "#A0b1C2", "#abcd"),
    "date-time": ("2017-01-16T11:30:00Z", "2017-01-16 11:30:00.5+05:30", "2017-02-30T01:02:03"),
    "email": ("a@b.co", "x.y+z@example.org", "a@localhost"),
    "ip": ("127.0.0.1", "::1", "fe80::217:f2ff:fe07:ed62", "256.1.1.1"),
    "uuid": ("123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-42d3-a456-42661417400"),
    "^a": ("a", "abc", "ba"),
    "[0-9]": ("a1", "7", "x"),
    "^[a-z]+$": ("abc", "abc\n", "aB"),
    "x$": ("x", "ax\n", "xa"),
    r"^\d{3}-\d{2}$": ("123-45", "123-456"),
    "#": ("#", "a#b", "ab"),
    r"^\p{Lu}": ("\u00c9t\u00e9", "Abc", "abc"),
    r"^\S": ("a b", " a"),
}
"""Strings that meet (or just miss) each format and safe pattern."""
ONE_IN_THREE = st.integers(0, 2)
ONE_IN_EIGHT = st.integers(0, 7)


def _pick(draw: st.DrawFn, options: list[Any]) -> Any:
    return options[draw(_INDEXES[len(options)])]


def draw_value(draw: st.DrawFn, schema: Any, tame: bool) -> Any:
    """A value for ``schema``: a ``tame`` one aims at conforming (each rule met, now and then a
    near miss deeper down), a wild one is anything near the rules' edges."""
    if not isinstance(schema, dict):
        return draw(json_values)
    sources: list[Any] = [] if tame else ["json"]
    for keyword in ("anyOf", "oneOf"):
        for branch in schema.get(keyword) or ():
            if isinstance(branch, dict) and "type" not in branch and "type" in schema:
                branch = {**branch, "type": schema["type"]}
            sources.append(("branch", branch))
    type_name = schema.get("type")
    sources.extend(type_name if isinstance(type_name, list) else [type_name])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        sources = ["enum"] if tame else [*sources, "enum"]
    source = _pick(draw, sources[:40])
    if isinstance(source, tuple):
        return draw_value(draw, source[1], tame)
    if source == "enum":
        return _pick(draw, schema["enum"])
    if source == "array":
        return _draw_array(draw, schema, tame)
    if source == "object":
        return _draw_object(draw, schema, tame)
    edges = _edges(schema, source)
    if bool(edges) and draw(BOOLEANS):
        return _pick(draw, edges)
    samples = SAMPLES.get(schema.get("format", "")) or SAMPLES.get(schema.get("pattern", ""))
    if source == "string" and tame and samples:
        return _pick(draw, list(samples))
    return draw((_TAME if tame else _WILD).get(source, json_values))


def _number(value: Any) -> float | None:
    """A bound as a number (``"5"`` included), or ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _edges(schema: Schema, type_name: Any) -> list[Any]:
    """Values on and beside the schema's own bounds, lengths and divisors."""
    found: list[Any] = []
    if type_name in ("integer", "number"):
        for key in ("minimum", "maximum", "multipleOf"):
            bound = _number(schema.get(key))
            if bound is not None:
                for near in (
                    bound - 1,
                    bound - 0.5,
                    bound,
                    bound + 0.5,
                    bound + 1,
                    -3 * bound,
                    -bound - 1,
                ):
                    found.extend((near, str(near)))
    elif type_name == "string":
        for key in ("minLength", "maxLength"):
            bound = _number(schema.get(key))
            if bound is not None:
                sizes = [int(size) for size in (bound - 1, bound, bound + 1) if size >= 0]
                found.extend(letter * size for size in sizes for letter in ("x", "\u00e9"))
    return found[:40]


def _child_tame(draw: st.DrawFn, tame: bool) -> bool:
    return tame and draw(ONE_IN_EIGHT) != 0


def _draw_array(draw: st.DrawFn, schema: Schema, tame: bool) -> Any:
    shape = draw(_INDEXES[4])
    if shape == 0 and not tame:
        return draw(_WILD["separated"])
    if shape == 1 and not tame:
        return draw(_WILD["array-like"])
    items = [
        draw_value(draw, schema.get("items"), _child_tame(draw, tame))
        for _ in range(draw(_INDEXES[4]))
    ]
    if shape == 0:
        return ",".join(str(item) for item in items if isinstance(item, str | int))
    return items + items[:1] if shape == 2 else items


def _required(schema: Schema) -> list[Any]:
    required, properties = schema.get("required"), schema.get("properties")
    if isinstance(required, list):
        return required
    if isinstance(properties, dict):
        return [key for key, child in properties.items() if child.get("required") is True]
    return []


def _draw_object(draw: st.DrawFn, schema: Schema, tame: bool) -> Any:
    shape = draw(_INDEXES[5])
    if shape == 0 and not tame:
        return draw(_WILD["object-like"])
    properties = schema.get("properties")
    declared = dict(properties) if isinstance(properties, dict) else {}
    required = _required(schema) if tame else []
    for key in (*required, *OTHER_KEYS):
        declared.setdefault(key, None)
    for child in (schema.get("patternProperties") or {}).values():
        declared["x1"] = child
    if isinstance(schema.get("additionalProperties"), dict):
        declared["e1"] = schema["additionalProperties"]
    value = {
        key: draw_value(draw, child, _child_tame(draw, tame))
        for key, child in declared.items()
        if key in required
        or draw(ONE_IN_EIGHT if tame and key in OTHER_KEYS else ONE_IN_THREE) == 0
    }
    return list(value.values()) if shape == 1 else value


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A schema, a batch of values for it (`VALUES_PER_SCHEMA`) and a param."""
    schema = draw_schema(draw)
    values = [draw_value(draw, schema, draw(BOOLEANS)) for _ in range(draw(COUNTS))]
    return schema, values, draw(PARAMS)


PARAMS = st.sampled_from(["p", "", "a[b]"])
COUNTS = st.integers(*VALUES_PER_SCHEMA)
