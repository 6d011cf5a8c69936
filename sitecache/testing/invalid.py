"""Hypothesis strategies of values a schema rejects, each with the error code it must get.

`invalid_from_schema` breaks one rule at a time, keeping every rule the engine checks before it
satisfied, so the code announced is the code of the first failure:

=========================================  ==========================================
broken rule                                code
=========================================  ==========================================
type (none of the listed types fits)       ``rest_invalid_type``
integer given a fraction (in bounds)       ``rest_invalid_type``
bounds, ``multipleOf``                     ``rest_invalid_param``
``minLength``, ``maxLength``               ``rest_invalid_param``
``pattern``                                ``rest_invalid_pattern``
``required``                               ``rest_property_required``
extra property (``additionalProperties``)  ``rest_invalid_param``
item or property value                     that value's own code
item and property counts, duplicates       ``rest_invalid_param``
``enum``                                   ``rest_invalid_param``
``anyOf``/``oneOf`` (no branch fits)       ``rest_invalid_param``
``format``                                 ``rest_invalid_hex_color``, ``rest_invalid_date``,
                                           ``rest_invalid_email``, ``rest_invalid_uuid``,
                                           ``rest_invalid_param`` (ip)
=========================================  ==========================================

A schema that accepts everything (``{"type": "string"}``'s strings in the query transport, a
schema with no rule) has an empty strategy. tests/testing/test_strategies.py proves, over
generated schemas, that each drawn value fails `validate_value_from_schema` with its code.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final, NamedTuple

from hypothesis import assume
from hypothesis import strategies as st

from sitecache.errors import RestError
from sitecache.schema import messages, php
from sitecache.schema.patterns import pattern_matches
from sitecache.schema.sanitization import sanitize_value_from_schema
from sitecache.schema.types import ALLOWED_TYPES, get_best_type_for_value
from sitecache.schema.validation import check_value, contains_unique_items
from sitecache.testing.formats import FORMAT_CODES, TEXT, invalid_format_strings
from sitecache.testing.strategies import (
    SHADOWED,
    Transport,
    best_type_is,
    from_schema,
    number_rules_pass,
    object_child_schema,
    required_names,
)

__all__ = ["Invalid", "invalid_from_schema"]

Strategy = st.SearchStrategy[Any]
Schema = dict[str, Any]


class Invalid(NamedTuple):
    """A value a schema rejects and the code of the error it must get."""

    value: Any
    code: str


def invalid_from_schema(schema: Mapping[str, Any], *, transport: Transport = "json") -> Strategy:
    """A strategy of `Invalid` ``(value, code)`` pairs: `validate_value_from_schema` refuses
    each value with a `RestError` of that code (an empty strategy when nothing is refused).

    Args:
        schema: an argument definition or any schema `sitecache.schema` reads.
        transport: ``"json"`` or ``"query"``, as for `from_schema`.
    """
    return _Breaker(transport).of(schema)


_JSON_POOL: Final[tuple[Any, ...]] = (
    None, True, False, 0, 1, -7, 2.5, "", "abc", "1", "1.5", "true", "x y", [], [1], ["a"],
    {"a": 1}, {"0": "x"}, {"k": [1]},
)  # fmt: skip
_QUERY_POOL: Final[tuple[Any, ...]] = (
    "", "abc", "1", "1.5", "-7", "true", "yes", "x y", "a,b", ["a"], ["1", "2"], {"k": "v"},
)  # fmt: skip
_TYPE_TESTS: Final[dict[str, Callable[[Any], bool]]] = {
    name: partial(best_type_is, [name], name) for name in ALLOWED_TYPES
}
_TYPE_TESTS["string"] = partial(best_type_is, ["string"], "string")  # "" is a string too


def _as_schema(schema: Any) -> Schema:
    return dict(schema) if isinstance(schema, Mapping) else {}


def _pair(code: str) -> Callable[[Any], Invalid]:
    return lambda value: Invalid(value, code)


class _Breaker:
    """Builds the strategy of rejected values of one schema, recursively."""

    def __init__(self, transport: Transport) -> None:
        self.transport: Transport = transport
        self.query = transport == "query"
        self.pool = _QUERY_POOL if self.query else _JSON_POOL

    def valid(self, schema: Any) -> Strategy:
        return from_schema(schema, transport=self.transport)

    def of(self, raw: Any) -> Strategy:
        """``(value, code)`` pairs ``raw`` rejects."""
        schema = _as_schema(raw)
        if "anyOf" in schema or "oneOf" in schema:
            return self._no_branch(schema)
        options = self._type_breaks(schema)
        enum = schema.get("enum")
        if isinstance(enum, list | tuple | dict) and enum:
            options.append(self._not_in_enum(schema, enum))
        return st.one_of(options) if options else st.nothing()

    # ------------------------------------------------------------------ anyOf / oneOf
    def _no_branch(self, schema: Schema) -> Strategy:
        keyword = "anyOf" if "anyOf" in schema else "oneOf"
        raw = schema.get(keyword)
        branches = []
        for _, branch in php.array_items(raw) if php.is_php_array(raw) else ():
            branch_schema = _as_schema(branch)
            if branch_schema.get("type") is None and schema.get("type") is not None:
                branch_schema["type"] = schema["type"]
            branches.append(branch_schema)
        if not branches:
            return st.nothing()
        candidates = [self.of(branch).map(lambda pair: pair.value) for branch in branches]
        candidates.append(st.sampled_from(self.pool))
        return (
            st.one_of(candidates)
            .filter(lambda value: all(check_value(value, b, "") is not None for b in branches))
            .map(_pair(messages.INVALID_PARAM))
        )

    # ------------------------------------------------------------------ types
    def _type_breaks(self, schema: Schema) -> list[Strategy]:
        type_name = schema.get("type")
        if isinstance(type_name, list | tuple):
            types = list(type_name)
            if any(name not in ALLOWED_TYPES for name in types):
                return []  # nothing fits, and the first unknown name lets the value through
            options = [self._wrong_type(lambda value: not get_best_type_for_value(value, types))]
            for position, name in enumerate(types):
                if name in types[:position] or any(
                    (earlier, name) in SHADOWED for earlier in types[:position]
                ):
                    continue
                breaks = self._rule_breaks({**schema, "type": name}, name)
                options.extend(
                    found.filter(partial(_pair_best_type_is, types, name)) for found in breaks
                )
            return options
        if isinstance(type_name, str) and type_name in ALLOWED_TYPES:
            test = _TYPE_TESTS[type_name]
            return [
                self._wrong_type(lambda value: not test(value)),
                *self._rule_breaks(schema, type_name),
            ]
        return self._format_breaks(schema)  # no type: only a format can refuse a value

    def _wrong_type(self, refused: Callable[[Any], bool]) -> Strategy:
        wrong = [value for value in self.pool if refused(value)]
        return st.sampled_from(wrong).map(_pair(messages.INVALID_TYPE)) if wrong else st.nothing()

    def _rule_breaks(self, schema: Schema, type_name: str) -> list[Strategy]:
        if type_name in ("integer", "number"):
            return self._number_breaks(schema, type_name == "integer")
        if type_name == "string":
            return self._string_breaks(schema)
        if type_name == "array":
            return self._array_breaks(schema)
        if type_name == "object":
            return [_object_breaks(self, schema)]
        return []

    # ------------------------------------------------------------------ numbers
    def _number_breaks(self, schema: Schema, integral: bool) -> list[Strategy]:
        near: list[int | float] = [0, 1, -1, 7, 2.5, -2.5, 10**6]
        for keyword in ("minimum", "maximum", "multipleOf"):
            if schema.get(keyword) is not None:
                bound = php.to_number(schema[keyword])
                if isinstance(bound, int | float) and math.isfinite(bound):
                    near += [bound + step for step in (-1, -0.5, 0, 0.5, 1, 1.5)]
                    near += [bound * 3 + 1, -bound]
        numbers = st.one_of(st.sampled_from(near), st.integers(-1000, 1000), st.floats(-1e3, 1e3))
        options = [
            numbers.filter(lambda n: not number_rules_pass(n, schema))
            .flatmap(self._number_forms)
            .map(_pair(messages.INVALID_PARAM))
        ]
        if integral:  # a fraction that passes the number rules is refused as "not an integer"
            fractions = numbers.map(lambda n: n + 0.5).filter(
                lambda n: not php.is_integral(n) and number_rules_pass(n, schema)
            )
            options.append(fractions.flatmap(self._number_forms).map(_pair(messages.INVALID_TYPE)))
        return options

    def _number_forms(self, number: int | float) -> Strategy:
        text = str(number) if isinstance(number, int) else repr(number)
        return st.just(text) if self.query else st.sampled_from([number, text])

    # ------------------------------------------------------------------ strings
    def _string_breaks(self, schema: Schema) -> list[Strategy]:
        low = _limit(schema.get("minLength"), math.ceil)
        high = _limit(schema.get("maxLength"), math.floor)
        options = []
        if low is not None and low > 0:
            options.append(
                st.text(TEXT, max_size=min(low - 1, 20)).map(_pair(messages.INVALID_PARAM))
            )
        if high is not None and high >= 0:
            size = max(high + 1, low or 0)
            options.append(
                st.text(TEXT, min_size=size, max_size=size + 4).map(_pair(messages.INVALID_PARAM))
            )
        fits = _length_fits(low, high)
        pattern = schema.get("pattern")
        if pattern is not None and pattern_matches(pattern, "") is not None:
            texts = st.text(TEXT, min_size=max(low or 0, 0), max_size=max(low or 0, 0) + 12)
            options.append(
                texts.filter(
                    lambda text: fits(text) and pattern_matches(pattern, text) is False
                ).map(_pair(messages.INVALID_PATTERN))
            )
        if schema.get("enum") is None:
            options.extend(self._format_breaks(schema))
        return options

    def _format_breaks(self, schema: Schema) -> list[Strategy]:
        name = schema.get("format")
        texts = invalid_format_strings(name) if isinstance(name, str) else None
        if texts is None or schema.get("enum") is not None:
            return []
        if schema.get("type") == "string":
            fits = _length_fits(
                _limit(schema.get("minLength"), math.ceil),
                _limit(schema.get("maxLength"), math.floor),
            )
            pattern = schema.get("pattern")
            texts = texts.filter(
                lambda text: fits(text) and (pattern is None or pattern_matches(pattern, text))
            )
        return [texts.map(_pair(FORMAT_CODES[str(name)]))]

    # ------------------------------------------------------------------ arrays
    def _array_breaks(self, schema: Schema) -> list[Strategy]:
        item_schema = schema.get("items")
        options = []
        if item_schema is not None:
            items = self.valid(item_schema)
            bad = self.of(item_schema)
            prefixes = st.just([]) if items.is_empty else st.lists(items, max_size=2)
            options.append(
                st.tuples(prefixes, bad).map(
                    lambda found: Invalid([*found[0], found[1].value], found[1].code)
                )
            )
        else:
            items = self.valid({})
        if items.is_empty:
            return options  # no valid item: no count or duplicate to break
        low = _limit(schema.get("minItems"), math.ceil)
        high = _limit(schema.get("maxItems"), math.floor)
        unique = schema.get("uniqueItems")
        checks_unique = unique is not None and (
            unique if unique.__class__ is bool else not php.is_empty(unique)
        )
        if low is not None or high is not None or checks_unique:
            top = max(high + 2 if high is not None else 0, (low or 0) + 1, 3)
            lists = st.lists(items, max_size=min(top, 8)).flatmap(
                lambda found: st.sampled_from([found, found + found[:1]]) if found else st.just([])
            )
            options.append(
                lists.filter(lambda found: _count_or_duplicate(found, low, high, checks_unique))
                .filter(lambda found: not self.query or bool(found))
                .map(_pair(messages.INVALID_PARAM))
            )
        return options

    # ------------------------------------------------------------------ enum
    def _not_in_enum(self, schema: Schema, enum: Any) -> Strategy:
        members = list(enum.values()) if isinstance(enum, dict) else list(enum)
        base = {key: value for key, value in schema.items() if key != "enum"}

        def outside(value: Any) -> bool:
            sanitized = sanitize_value_from_schema(value, base)
            if isinstance(sanitized, RestError):
                return False
            return not any(php.values_equal(sanitized, member) for member in members)

        return self.valid(base).filter(outside).map(_pair(messages.INVALID_PARAM))


def _pair_best_type_is(types: list[Any], name: str, pair: Invalid) -> bool:
    return best_type_is(types, name, pair.value)


def _coin(draw: st.DrawFn) -> bool:
    flipped: bool = draw(st.booleans())
    return flipped


def _limit(value: Any, kind: Callable[[float], float]) -> int | None:
    if value is None:
        return None
    number = php.to_number(value)
    if isinstance(number, float) and not math.isfinite(number):
        return None
    return int(kind(number))


def _length_fits(low: int | None, high: int | None) -> Callable[[str], bool]:
    return lambda text: (low is None or len(text) >= low) and (high is None or len(text) <= high)


def _count_or_duplicate(items: list[Any], low: int | None, high: int | None, unique: bool) -> bool:
    if low is not None and len(items) < low:
        return True
    if high is not None and len(items) > high:
        return True
    return unique and not contains_unique_items(items)


# ---------------------------------------------------------------------- objects
@st.composite
def _object_breaks(draw: st.DrawFn, breaker: _Breaker, schema: Schema) -> Invalid:
    """An object that breaks one object rule: a required property left out, a bad value, an
    extra property where none may be, or too few or too many properties."""
    value = draw(breaker.valid(schema))
    value = dict(value) if isinstance(value, dict) else {}
    required = required_names(schema)
    ways = ["value", "extra", "count"] + (["required"] if required else [])
    way = draw(st.sampled_from(ways))
    if way == "required":
        missing = draw(st.sampled_from(required))
        value.pop(missing, None)
        assume(not breaker.query or value)
        return Invalid(value, messages.PROPERTY_REQUIRED)
    if way == "value":
        properties = schema.get("properties")
        names = [str(name) for name in properties] if isinstance(properties, Mapping) else []
        key = "zz_extra"
        if names and _coin(draw):
            key = draw(st.sampled_from(names))
        child = object_child_schema(schema, key)
        if child is False:
            way = "extra"
        else:
            assume(child is not None)
            bad = draw(breaker.of(child))
            value[key] = bad.value
            return Invalid(value, bad.code)
    if way == "extra":
        assume(object_child_schema(schema, "zz_extra") is False)
        value["zz_extra"] = "x"
        return Invalid(value, messages.INVALID_PARAM)
    low = _limit(schema.get("minProperties"), math.ceil)
    high = _limit(schema.get("maxProperties"), math.floor)
    if high is not None and draw(st.booleans()):
        for index in range(max(high + 1 - len(value), 0)):
            child = object_child_schema(schema, f"zz_more{index}")
            assume(child is not False)
            value[f"zz_more{index}"] = draw(
                breaker.valid(child) if child is not None else st.just("x")
            )
        assume(len(value) > high)
        return Invalid(value, messages.INVALID_PARAM)
    assume(low is not None and len(required) < low)
    value = {key: value[key] for key in value if key in required}
    assume(value or not breaker.query)
    return Invalid(value, messages.INVALID_PARAM)
