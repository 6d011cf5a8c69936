"""Generated schemas that some value satisfies, for the property tests of the testing kit.

Every keyword `sitecache.testing.from_schema` reads appears: the seven types and lists of them,
bounds with exclusive flags, ``multipleOf`` (integers and exact and inexact fractions), lengths,
patterns, every format, ``enum`` (members drawn from the schema itself, sanitized), ``items``,
``minItems``/``maxItems``/``uniqueItems``, ``properties``, ``required`` in both drafts,
``additionalProperties`` (absent, false, true, a schema), ``patternProperties``,
``minProperties``/``maxProperties``, and ``anyOf``/``oneOf`` over branches of distinct types,
nested up to `MAX_DEPTH` levels. Bounds leave room for a value, so the schemas are satisfiable.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from sitecache.schema import sanitize_value_from_schema
from sitecache.testing import from_schema

__all__ = ["schemas"]

Schema = dict[str, Any]
MAX_DEPTH = 2
PATTERNS = ("^a", "[0-9]", "^[a-z]+$", "x$", r"^\d{3}-\d{2}$", "#", r"^\S")
FORMATS = ("hex-color", "date-time", "email", "ip", "uuid", "uri", "text-field")
TYPE_LISTS = (
    ["string", "integer"],
    ["integer", "string"],
    ["integer", "null"],
    ["boolean", "string"],
    ["array", "object"],
    ["object", "array"],
    ["number", "boolean"],
    ["null", "string"],
)


@st.composite
def _string(draw: st.DrawFn) -> Schema:
    schema: Schema = {"type": "string"}
    kind = draw(st.sampled_from(["lengths", "pattern", "format"]))
    if kind == "pattern":
        schema["pattern"] = draw(st.sampled_from(PATTERNS))
        if draw(st.booleans()):
            schema["maxLength"] = 30
    elif kind == "format":
        schema["format"] = draw(st.sampled_from(FORMATS))
    else:
        low = draw(st.none() | st.integers(0, 4))
        if low is not None:
            schema["minLength"] = draw(st.sampled_from([low, str(low)]))
        if draw(st.booleans()):
            schema["maxLength"] = (low or 0) + draw(st.integers(0, 6))
    return schema


@st.composite
def _number(draw: st.DrawFn) -> Schema:
    schema: Schema = {"type": draw(st.sampled_from(["integer", "number"]))}
    step = draw(st.sampled_from([None, None, 1, 2, 3, 7, 0.5, 0.25, 0.1, "2"]))
    if step is not None:
        schema["multipleOf"] = step
    low = draw(st.none() | st.integers(-1000, 1000))
    if low is not None:
        schema["minimum"] = draw(st.sampled_from([low, low + 0.5, str(low)]))
    if draw(st.booleans()):
        schema["maximum"] = (low if low is not None else 0) + draw(st.integers(30, 2000))
    for flag in ("exclusiveMinimum", "exclusiveMaximum"):
        if draw(st.integers(0, 3)) == 0:
            schema[flag] = draw(st.sampled_from([True, 1, False]))
    return schema


def _scalar() -> st.SearchStrategy[Schema]:
    return st.one_of(
        _string(),
        _number(),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
    )


@st.composite
def _array(draw: st.DrawFn, depth: int) -> Schema:
    schema: Schema = {"type": "array"}
    if draw(st.integers(0, 3)) != 0:
        schema["items"] = draw(_schema(depth + 1))
    low = draw(st.none() | st.integers(0, 2))
    if low is not None:
        schema["minItems"] = low
    if draw(st.booleans()):
        schema["maxItems"] = (low or 0) + draw(st.integers(0, 3))
    if draw(st.booleans()) and low in (None, 0):
        schema["uniqueItems"] = draw(st.sampled_from([True, 1]))
    return schema


@st.composite
def _object(draw: st.DrawFn, depth: int) -> Schema:
    schema: Schema = {"type": "object"}
    names = draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True))
    properties = {name: draw(_schema(depth + 1)) for name in names}
    schema["properties"] = properties
    required = [name for name in names if draw(st.booleans())]
    if bool(required) and draw(st.booleans()):
        schema["required"] = required
    else:
        for name in required:
            properties[name]["required"] = True
    if draw(st.booleans()):
        schema["patternProperties"] = {"^x_": draw(_schema(depth + 1))}
    additional = draw(st.sampled_from(["absent", "false", "true", "schema"]))
    if additional == "schema":
        schema["additionalProperties"] = draw(_schema(depth + 1))
    elif additional != "absent":
        schema["additionalProperties"] = additional == "true"
    if draw(st.integers(0, 3)) == 0:
        schema["minProperties"] = len(required)
    if draw(st.integers(0, 3)) == 0:
        schema["maxProperties"] = len(names) + 1
    return schema


@st.composite
def _combined(draw: st.DrawFn, depth: int) -> Schema:
    keyword = draw(st.sampled_from(["anyOf", "oneOf"]))
    kinds = draw(
        st.lists(st.sampled_from(["string", "integer", "boolean", "array"]), min_size=1,
                 max_size=3, unique=True)
    )  # fmt: skip
    branches: list[Schema] = []
    for kind in kinds:
        if kind == "string":
            branch = draw(_string())
        elif kind == "integer":
            branch = {**draw(_number()), "type": "integer"}
        elif kind == "array":
            branch = draw(_array(depth + 1))
        else:
            branch = {"type": "boolean"}
        if draw(st.booleans()):
            branch["title"] = f"shape {len(branches)}"
        branches.append(branch)
    return {keyword: branches}


def _schema(depth: int) -> st.SearchStrategy[Schema]:
    if depth >= MAX_DEPTH:
        return _scalar()
    return st.one_of(
        _scalar(),
        _array(depth),
        _object(depth),
        _combined(depth),
        st.sampled_from(TYPE_LISTS).map(lambda types: {"type": list(types)}),
    )


@st.composite
def schemas(draw: st.DrawFn) -> Schema:
    """A satisfiable schema; now and then with an ``enum`` of values drawn from it."""
    schema = draw(_schema(0))
    if draw(st.integers(0, 4)) == 0 and schema.get("type") in ("string", "integer", "number"):
        base = from_schema(schema)
        members = draw(st.lists(base, min_size=1, max_size=3))
        schema["enum"] = [sanitize_value_from_schema(member, schema) for member in members]
    return schema
