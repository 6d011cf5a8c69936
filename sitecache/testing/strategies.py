"""Hypothesis strategies of values that validate against a schema, coercions included.

`from_schema` reads a schema as `sitecache.schema` reads it and draws values the
engine accepts *and* sanitizes without an error: natural JSON values and the forms the engine
coerces (``"5"`` and ``"5.0"`` for an integer, ``"true"``/``"0"``/``1`` for a boolean, ``"a,b"``
and ``{"0": …}`` for an array, ``""`` and lists for an object). With ``transport="query"`` only
values a query string or form body can carry are drawn: strings, and lists and maps of them
(PHP's bracket syntax), an empty array or object being ``""``.

The rules are the engine's own: its type tests (`get_best_type_for_value`), PHP's numeric
semantics (`sitecache.schema.php`), its pattern matcher and format checks. Where building a
value by construction cannot decide alone, the engine's verdict on a *branch* decides: which
``oneOf`` branches a value matches, and when sanitized array items would collide for
``uniqueItems``. tests/testing/test_strategies.py proves, over generated schemas, that every
drawn value passes `validate_value_from_schema` (and the compiled validators).

Known limits: a keyword set on both a schema and one of its ``anyOf``/``oneOf`` branches is read
from the branch; ``enum`` members are drawn as they are (a member that breaks the schema's other
rules is the schema's own mistake); a schema that can only be satisfied by ``null`` has no
value in the query transport.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final, Literal

from hypothesis import assume
from hypothesis import strategies as st

from sitecache.schema import php
from sitecache.schema.patterns import pattern_matches
from sitecache.schema.sanitization import sanitize_value_from_schema
from sitecache.schema.types import ALLOWED_TYPES, get_best_type_for_value
from sitecache.schema.validation import check_value, get_property_schema
from sitecache.testing.formats import TEXT, valid_format_strings

__all__ = [
    "SHADOWED",
    "Transport",
    "best_type_is",
    "flag",
    "from_schema",
    "number_rules_pass",
    "object_child_schema",
    "required_names",
]

Transport = Literal["json", "query"]
Strategy = st.SearchStrategy[Any]
Schema = dict[str, Any]

MAX_ITEMS: Final = 4
"""Arrays and objects drawn without an upper bound have at most this many extra entries."""
_SPAN: Final = 10**6
_KEY = st.from_regex(r"\A[a-z][a-z0-9_]{0,5}\Z")
SHADOWED: Final = {
    # (earlier type, later type): every value the later type accepts goes to the earlier one
    ("array", "string"), ("array", "number"), ("array", "integer"), ("array", "boolean"),
    ("number", "integer"),
}  # fmt: skip
_ANY_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-1000, 1000), st.text(TEXT, max_size=8)
)
_ANY_JSON = st.recursive(
    _ANY_SCALAR,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_KEY, children, max_size=3),
    max_leaves=6,
)
_ANY_QUERY = st.recursive(
    st.text(TEXT, max_size=8),
    lambda children: (
        st.lists(children, min_size=1, max_size=3)
        | st.dictionaries(_KEY, children, min_size=1, max_size=3)
    ),
    max_leaves=6,
)


def from_schema(schema: Mapping[str, Any], *, transport: Transport = "json") -> Strategy:
    """A strategy of values ``schema`` accepts: `validate_value_from_schema` answers ``True``
    and `sanitize_value_from_schema` gives no error for each (an empty strategy when none).

    Args:
        schema: an argument definition or any schema `sitecache.schema` reads.
        transport: ``"json"`` for any JSON value (a JSON body), ``"query"`` for what a query
            string or form body carries (strings, lists and maps of them).
    """
    return _Valid(transport).of(schema)


# ---------------------------------------------------------------------- shared rule readers
def flag(value: Any) -> bool:
    """A draft-4 boolean keyword (``exclusiveMinimum``, ``uniqueItems``) as the engine reads it."""
    return value if value.__class__ is bool else not php.is_empty(value)


def number_rules_pass(number: int | float, schema: Mapping[str, Any]) -> bool:
    """Whether a number passes ``multipleOf`` and the bounds, by the engine's arithmetic."""
    divisor = schema.get("multipleOf")
    if divisor is not None:
        try:
            if math.fmod(php.to_float(number), php.to_float(divisor)) != 0.0:
                return False
        except ValueError:
            return False
    minimum, maximum = schema.get("minimum"), schema.get("maximum")
    if minimum is not None:
        low = php.to_number(minimum)
        if number < low or (flag(schema.get("exclusiveMinimum")) and number == low):
            return False
    if maximum is not None:
        high = php.to_number(maximum)
        if number > high or (flag(schema.get("exclusiveMaximum")) and number == high):
            return False
    return True


def required_names(schema: Mapping[str, Any]) -> list[str]:
    """The properties an object must have: ``required`` (draft 4) or ``required: true`` on a
    property (draft 3, read only when ``required`` is not a list), as JSON keys."""
    required = schema.get("required")
    if php.is_php_array(required):
        names = list(required.values()) if isinstance(required, dict) else list(required)
        if any(php.is_php_array(name) for name in names):
            return []  # an array is never a key: the object can never be valid
        return list(dict.fromkeys(str(php.normalize_key(name)) for name in names))
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    return [
        str(name)
        for name, child in properties.items()
        if isinstance(child, Mapping) and child.get("required") is True
    ]


def object_child_schema(schema: Mapping[str, Any], key: str) -> Any:
    """The schema the engine applies to ``key`` of an object: its property, else the first
    matching ``patternProperties`` entry, else ``additionalProperties``; ``False`` when the key
    is forbidden, ``None`` when anything goes."""
    child = get_property_schema(schema.get("properties"), key)
    if child is not None:
        return child
    patterns = schema.get("patternProperties")
    if isinstance(patterns, Mapping):
        for pattern, pattern_child in patterns.items():
            if pattern_matches(pattern, key):
                return pattern_child
    additional = schema.get("additionalProperties")
    if additional is False:
        return False
    return additional if isinstance(additional, Mapping) else None


def _as_schema(schema: Any) -> Schema:
    return dict(schema) if isinstance(schema, Mapping) else {}


def _bound(value: Any, kind: Callable[[float], float]) -> int | None:
    if value is None:
        return None
    number = php.to_number(value)
    if isinstance(number, float) and not math.isfinite(number):
        return None
    return int(kind(number))


def _string_forms(number: int | float) -> list[str]:
    if isinstance(number, int):
        return [str(number), f" {number}", f"{number}.0", *([f"+{number}"] if number >= 0 else [])]
    return [repr(number)]


# ---------------------------------------------------------------------- the builder
class _Valid:
    """Builds the strategy of valid values of one schema, recursively."""

    def __init__(self, transport: Transport) -> None:
        self.query = transport == "query"

    def of(self, raw: Any) -> Strategy:
        """The valid values of ``raw`` (a schema; anything else reads as ``{}``)."""
        schema = _as_schema(raw)
        if "anyOf" in schema or "oneOf" in schema:
            return self._combined(schema)
        enum = schema.get("enum")
        if enum is not None:
            return self._enum(schema, enum)
        type_name = schema.get("type")
        if isinstance(type_name, list | tuple):
            return self._type_list(schema, list(type_name))
        if not isinstance(type_name, str) or type_name not in ALLOWED_TYPES:
            return self._typeless(schema)
        return self._typed(schema, type_name)

    # ------------------------------------------------------------------ schema shapes
    def _typeless(self, schema: Schema) -> Strategy:
        formatted = valid_format_strings(str(schema.get("format")))
        if formatted is not None:
            return formatted  # the format check applies to a value of any type
        return _ANY_QUERY if self.query else _ANY_JSON

    def _typed(self, schema: Schema, type_name: str) -> Strategy:
        build = {
            "null": self._null,
            "boolean": self._boolean,
            "integer": self._integer,
            "number": self._number,
            "string": self._string,
            "array": self._array,
            "object": self._object,
        }[type_name]
        return build(schema)

    def _type_list(self, schema: Schema, types: list[Any]) -> Strategy:
        known = [name for name in types if isinstance(name, str) and name in ALLOWED_TYPES]
        options: list[Strategy] = []
        for position, name in enumerate(known):
            if any((earlier, name) in SHADOWED for earlier in known[:position]):
                continue
            typed = self._typed({**schema, "type": name}, name)
            options.append(typed.filter(partial(best_type_is, types, name)))
        return st.one_of(options) if options else st.nothing()

    def _enum(self, schema: Schema, enum: Any) -> Strategy:
        if isinstance(enum, dict):
            members = list(enum.values())
        elif isinstance(enum, list | tuple):
            members = list(enum)
        else:
            return st.nothing() if not php.is_empty(enum) else self.of(_without(schema, "enum"))
        if not members:
            return self.of(_without(schema, "enum"))  # an empty enum is ignored
        type_name = schema.get("type")
        forms: list[Any] = []
        for member in members:
            forms.extend(self._member_forms(member, type_name))
        return st.sampled_from(forms) if forms else st.nothing()

    def _member_forms(self, member: Any, type_name: Any) -> list[Any]:
        """An enum member and the forms that sanitize to it under a single type."""
        forms: list[Any] = [] if self.query else [member]
        if type_name in ("integer", "number") and (php.is_int(member) or php.is_float(member)):
            forms.extend(_string_forms(member)[:1])
        elif type_name == "boolean" and isinstance(member, bool):
            forms.extend(["true", "1"] if member else ["false", "0"])
        elif (self.query and isinstance(member, str)) or (
            self.query and php.is_php_array(member) and member and _query_safe(member)
        ):
            forms.append(member)
        return forms

    def _combined(self, schema: Schema) -> Strategy:
        keyword = "anyOf" if "anyOf" in schema else "oneOf"
        branches = _branches(schema, keyword)
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
        options = []
        for position, branch in enumerate(branches):
            values = self.of({**rest, **branch})
            others = branches[:position] + branches[position + 1 :]
            if keyword == "oneOf":
                values = values.filter(partial(_matches_none, branches=others))
            elif "oneOf" in schema:
                one_of = _branches(schema, "oneOf")
                values = values.filter(partial(_matches_exactly_one, branches=one_of))
            if keyword == "anyOf" and _has_constraints(rest):
                # The parent's own rules run with the first matching branch's type.
                earlier = branches[:position]
                values = values.filter(partial(_matches_none, branches=earlier))
            options.append(values)
        return st.one_of(options) if options else st.nothing()

    # ------------------------------------------------------------------ scalar types
    def _null(self, schema: Schema) -> Strategy:
        return st.nothing() if self.query else st.none()

    def _boolean(self, schema: Schema) -> Strategy:
        texts = st.sampled_from(["true", "false", "0", "1", "TRUE", "False", "tRuE"])
        return texts if self.query else st.one_of(st.booleans(), st.sampled_from([0, 1]), texts)

    def _integer(self, schema: Schema) -> Strategy:
        return self._numbers(schema, integral=True)

    def _number(self, schema: Schema) -> Strategy:
        return self._numbers(schema, integral=False)

    def _numbers(self, schema: Schema, integral: bool) -> Strategy:
        low = _bound(schema.get("minimum"), math.floor)
        high = _bound(schema.get("maximum"), math.ceil)
        low = -_SPAN if low is None else low - 1
        high = _SPAN if high is None else high + 1
        if low > high:
            return st.nothing()
        divisor = schema.get("multipleOf")
        numbers: Strategy
        if divisor is None:
            numbers = st.integers(low, high)
            if not integral:
                floats = st.floats(low, high, allow_nan=False, allow_infinity=False)
                numbers = st.one_of(numbers, floats)
        else:
            step = php.to_float(divisor)
            if step == 0.0 or not math.isfinite(step):
                return st.nothing()
            first, last = sorted((math.floor(low / step), math.ceil(high / step)))
            numbers = st.integers(first, last).map(partial(_times, step=step, divisor=divisor))
        if integral:
            numbers = numbers.filter(php.is_integral).map(_integral)
        numbers = numbers.filter(partial(number_rules_pass, schema=schema))
        return numbers.flatmap(self._number_forms)

    def _number_forms(self, number: int | float) -> Strategy:
        texts = _string_forms(number)
        if self.query:
            return st.sampled_from(texts)
        others: list[Any] = [number, *texts]
        if isinstance(number, int) and abs(number) < 2**53:
            others.append(float(number))
        return st.sampled_from(others)

    def _string(self, schema: Schema) -> Strategy:
        low = _bound(schema.get("minLength"), math.ceil)
        high = _bound(schema.get("maxLength"), math.floor)
        low = max(low or 0, 0)
        if high is not None and (high < low or high < 0):
            return st.nothing()
        pattern = schema.get("pattern")
        formatted = valid_format_strings(str(schema.get("format")))
        texts: Strategy
        if formatted is not None:
            texts = formatted
        elif pattern is not None:
            texts = _pattern_strings(pattern, low, high)
        else:
            return st.text(TEXT, min_size=low, max_size=high if high is not None else low + 12)
        if pattern is not None:
            texts = texts.filter(partial(_matches_pattern, pattern))
        return texts.filter(lambda text: low <= len(text) and (high is None or len(text) <= high))

    # ------------------------------------------------------------------ containers
    def _array(self, schema: Schema) -> Strategy:
        item_schema = schema.get("items")
        items = self.of(item_schema) if item_schema is not None else self._anything()
        low = max(_bound(schema.get("minItems"), math.ceil) or 0, 0)
        high = _bound(schema.get("maxItems"), math.floor)
        if high is not None and high < low:
            return st.nothing()
        top = high if high is not None else low + MAX_ITEMS
        if items.is_empty:  # only the empty array, if it is allowed
            return self._array_forms([]) if low == 0 else st.nothing()
        unique = schema.get("uniqueItems")
        if unique is not None and flag(unique):
            sanitized_item = _as_schema(item_schema) if item_schema is not None else None

            def sanitized(item: Any) -> Any:
                if sanitized_item is None:
                    return php.stable_form(item)
                return php.stable_form(sanitize_value_from_schema(item, sanitized_item))

            lists = st.lists(
                items, min_size=low, max_size=top, unique_by=(php.stable_form, sanitized)
            )
        else:
            lists = st.lists(items, min_size=low, max_size=top)
        return lists.flatmap(self._array_forms)

    def _array_forms(self, items: list[Any]) -> Strategy:
        forms: list[Any] = []
        if all(isinstance(item, str) and item and not _SEPARATED.search(item) for item in items):
            forms.extend([",".join(items), ", ".join(items)])  # wp_parse_list's comma lists
        if self.query:
            return st.sampled_from(forms + ([items] if items else []))
        forms.append(items)
        forms.append({str(index * 2): item for index, item in enumerate(items)})
        return st.sampled_from(forms)

    def _anything(self) -> Strategy:
        return _ANY_QUERY if self.query else _ANY_JSON

    def _object(self, schema: Schema) -> Strategy:
        return _objects(self, schema)


_SEPARATED = re.compile(r"[ \t\n\r\x0b\x0c,]")


@st.composite
def _objects(draw: st.DrawFn, builder: _Valid, schema: Schema) -> Any:
    required = required_names(schema)
    properties = schema.get("properties")
    declared = [str(name) for name in properties] if isinstance(properties, Mapping) else []
    low = max(_bound(schema.get("minProperties"), math.ceil) or 0, 0)
    high = _bound(schema.get("maxProperties"), math.floor)
    optional = [name for name in declared if name not in required]
    wanted = draw(st.lists(st.sampled_from(optional), unique=True)) if optional else []
    keys = required + wanted
    extras = _extra_keys(builder, schema)
    target = max(len(keys), low)
    if extras is not None:
        target = max(target, len(keys) + draw(st.integers(0, 2)))
    for _ in range(4 * (target - len(keys))):
        if extras is None or len(keys) >= target:
            break
        key = draw(extras)
        if key not in keys:
            keys.append(key)
    if high is not None:
        assume(len(required) <= high)
        keys = required + [key for key in keys if key not in required][: high - len(required)]
    assume(len(keys) >= low)
    value: dict[str, Any] = {}
    for key in keys:
        child = object_child_schema(schema, key)
        assume(child is not False)
        value[key] = draw(builder.of(child) if child is not None else builder._anything())
    if not value and draw(st.booleans()):
        return "" if builder.query or draw(st.booleans()) else []  # PHP's empty array forms
    assume(not builder.query or _query_safe(value))
    return value if value or not builder.query else ""


def _extra_keys(builder: _Valid, schema: Schema) -> Strategy | None:
    """Keys beyond the declared properties, or ``None`` when none may be added."""
    sources = []
    patterns = schema.get("patternProperties")
    if isinstance(patterns, Mapping):
        for pattern in patterns:
            sources.append(_pattern_strings(pattern, 1, 8))
    if schema.get("additionalProperties") is not False:
        sources.append(_KEY)
    if not sources:
        return None
    keys = st.one_of(sources)
    declared = schema.get("properties")
    if isinstance(declared, Mapping):
        keys = keys.filter(lambda key: get_property_schema(declared, key) is None)
    return keys.filter(lambda key: not builder.query or _safe_key(key))


def _pattern_strings(pattern: Any, low: int, high: int | None) -> Strategy:
    """Strings aimed at ``pattern`` (Python's reading of it when it compiles, else text)."""
    text = php.to_php_string(pattern)
    try:
        re.compile(text)
    except (re.error, OverflowError):
        return st.text(TEXT, min_size=low, max_size=high if high is not None else low + 12)
    return st.from_regex(text, alphabet=TEXT).filter(
        lambda found: high is None or len(found) <= high
    )


def _safe_key(key: Any) -> bool:
    """A key PHP's bracket syntax carries unchanged inside brackets."""
    text = str(key)
    return bool(text) and "[" not in text and "]" not in text and not text.isdigit()


def _query_safe(value: Any) -> bool:
    """Whether a map or list survives the bracket syntax (no empty containers, safe keys)."""
    if isinstance(value, dict):
        return bool(value) and all(
            _safe_key(key) and _query_safe(item) for key, item in value.items()
        )
    if isinstance(value, list | tuple):
        return bool(value) and all(_query_safe(item) for item in value)
    return isinstance(value, str)


def _times(k: int, step: float, divisor: Any) -> int | float:
    if php.is_int(divisor) or (isinstance(divisor, str) and php.is_integral(divisor)):
        return k * php.to_int(divisor)
    return k * step


def _integral(number: int | float) -> int:
    return number if isinstance(number, int) else int(number)


def _without(schema: Schema, keyword: str) -> Schema:
    return {key: value for key, value in schema.items() if key != keyword}


def _branches(schema: Schema, keyword: str) -> list[Schema]:
    """The branches of ``anyOf``/``oneOf``, each inheriting the parent's type if it has none."""
    raw = schema.get(keyword)
    if not php.is_php_array(raw):
        return []
    parent_type = schema.get("type")
    found = []
    for _, branch in php.array_items(raw):
        branch_schema = _as_schema(branch)
        if branch_schema.get("type") is None and parent_type is not None:
            branch_schema["type"] = parent_type
        found.append(branch_schema)
    return found


def best_type_is(types: list[Any], name: str, value: Any) -> bool:
    """Whether the engine resolves ``value`` against the type list ``types`` to ``name``."""
    return get_best_type_for_value(value, types) == name


def _matches_pattern(pattern: Any, text: str) -> bool:
    return pattern_matches(pattern, text) is True


def _matches_none(value: Any, branches: list[Schema]) -> bool:
    return all(check_value(value, branch, "") is not None for branch in branches)


def _matches_exactly_one(value: Any, branches: list[Schema]) -> bool:
    return sum(check_value(value, branch, "") is None for branch in branches) == 1


_DESCRIPTIVE: Final = frozenset({"type", "title", "description", "default", "readonly", "context"})


def _has_constraints(schema: Schema) -> bool:
    return any(key not in _DESCRIPTIVE for key in schema)
