"""The run-time helpers of compiled checks: the steps generated code calls by name.

Each is one rule of the reference (`sitecache.schema.validation`) answered as a verdict, for the
code `sitecache.schema.compiled_checks` generates. They never build an error: a refused value
goes to the reference, which names it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from sitecache.schema import php
from sitecache.schema.validation import (
    TYPE_RULES,
    check_value,
    contains_unique_items,
    find_matching_pattern_property_schema,
    get_property_schema,
)

__all__ = [
    "Check",
    "all_unique",
    "first_match",
    "has_all",
    "is_digits",
    "is_multiple",
    "object_rule",
    "one_key",
    "only_match",
]

Check = Callable[[Any], bool]
"""``True`` exactly when the reference would find the value valid."""


def has_all(container: dict[Any, Any], names: tuple[Any, ...]) -> bool:
    """Every required name is a key (``array_key_exists`` with PHP's key equivalence)."""
    for name in names:
        if not (name.__class__ is str and name in container) and not php.has_key(container, name):
            return False
    return True


def all_unique(items: list[Any]) -> bool:
    """``uniqueItems``: strings compare as themselves, anything else by its PHP identity."""
    if all(item.__class__ is str for item in items):
        return len(set(items)) == len(items)
    return contains_unique_items(items)


def is_multiple(number: float, divisor: float) -> bool:
    """``fmod(number, divisor) == 0.0``; a zero or infinite operand gives NAN, never a multiple."""
    try:
        return math.fmod(php.to_float(number), divisor) == 0.0
    except ValueError:
        return False


def first_match(checks: tuple[Check, ...], value: Any) -> int:
    """``anyOf``: the position of the first branch the value satisfies, else -1."""
    for position, check in enumerate(checks):
        if check(value):
            return position
    return -1


def only_match(checks: tuple[Check, ...], value: Any) -> int:
    """``oneOf``: the position of the one branch the value satisfies, else -1 (none or several)."""
    found = -1
    for position, check in enumerate(checks):
        if check(value):
            if found >= 0:
                return -1
            found = position
    return found


def object_rule(value: Any, schema: Mapping[str, Any]) -> bool:
    """The reference's object rule, for objects that are not dicts (lists, ``""``)."""
    return TYPE_RULES["object"](value, schema, "") is None


def one_key(schema: Mapping[str, Any], key: Any, item: Any) -> bool:
    """The reference's reading of one property whose key is not a string."""
    child = get_property_schema(schema.get("properties"), key)
    if child is None:
        child = find_matching_pattern_property_schema(key, schema)
    if child is None:
        additional = schema.get("additionalProperties")
        if additional is False:
            return False
        if not isinstance(additional, Mapping):
            return True
        child = additional
    return check_value(item, child, "") is None


def is_digits(text: str) -> bool:
    """Whether ``text`` is a short run of ASCII digits, which `int` reads as PHP's numeric-string
    rules do (``"0123"`` is 123); anything else takes the general path."""
    return len(text) < 19 and text.isdigit() and text.isascii()
