"""Compiled sanitizers: a schema turned into closures that coerce a value as the reference does.

`compile_sanitizer` gives a function returning exactly what `sanitize_value_from_schema`
returns for the schema, built once from the schema: the
keyword lookups, type dispatch, property tables and compiled patterns are decided ahead, so only
the value's own work is left. Where the reference would answer a `RestError` (no ``anyOf`` or
``oneOf`` branch fits, items duplicated once sanitized) the closure raises `Refused` and the
caller asks the reference for that error. ``anyOf``/``oneOf`` branches are chosen with the
compiled checks of `sitecache.schema.compiled_checks`, which give the reference's verdicts.

Only schemas that cannot report misuse are compiled (`may_report_misuse`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from sitecache.schema import php
from sitecache.schema.compiled_checks import Check, compile_check
from sitecache.schema.compiled_helpers import first_match, is_digits, only_match
from sitecache.schema.compiled_nodes import CompiledPattern, branches, schema_pattern
from sitecache.schema.sanitization import FORMAT_SANITIZERS
from sitecache.schema.types import (
    get_best_type_for_value,
    sanitize_array,
    sanitize_boolean,
    sanitize_object,
)
from sitecache.schema.validation import contains_unique_items

__all__ = ["Refused", "Sanitizer", "compile_sanitizer"]

Sanitizer = Callable[[Any], Any]
"""The sanitized value; raises `Refused` where the reference answers a `RestError`."""


Pick = Callable[[tuple[Check, ...], Any], int]
Branches = list[tuple[Any, dict[str, Any]]]


class Refused(Exception):
    """The reference answers a `RestError` for this value: ask it which."""


def compile_sanitizer(schema: Mapping[str, Any]) -> Sanitizer:
    """A function giving exactly `sanitize_value_from_schema`'s result for ``schema``.

    ``schema`` must be one `may_report_misuse` clears. Where the reference returns a
    `RestError`, the function raises `Refused`.
    """
    node = dict(schema)
    steps: list[tuple[Pick, Branches]] = [
        (pick, branches(node, keyword))
        for keyword, pick in (("anyOf", first_match), ("oneOf", only_match))
        if keyword in node
    ]
    if not steps:
        return _typed_sanitizer(node, node["type"])
    return _combined_sanitizer(node, steps)


def _combined_sanitizer(node: dict[str, Any], steps: list[tuple[Pick, Branches]]) -> Sanitizer:
    """``anyOf`` then ``oneOf``: the value is sanitized by the matched branch, then by the rest
    of the schema, whose type is the matched branch's when the schema has none."""
    compiled = [
        (
            pick,
            tuple(compile_check(branch) for _, branch in found),
            tuple(compile_sanitizer(branch) for _, branch in found),
        )
        for pick, found in steps
    ]
    type_name = node.get("type")
    if type_name is not None:
        rest = _typed_sanitizer(node, type_name)

        def sanitize(value: Any) -> Any:
            for pick, checks, sanitizers in compiled:
                position = pick(checks, value)
                if position < 0:
                    raise Refused  # no branch, or several for oneOf: the reference's error
                value = sanitizers[position](value)
            return rest(value)

        return sanitize
    # Only one combiner without a type (`may_report_misuse`): its match gives the type.
    (pick, checks, sanitizers), found = compiled[0], steps[0][1]
    rests = tuple(_typed_sanitizer(node, branch["type"]) for _, branch in found)

    def sanitize_typed_by_branch(value: Any) -> Any:
        position = pick(checks, value)
        if position < 0:
            raise Refused
        return rests[position](sanitizers[position](value))

    return sanitize_typed_by_branch


def _typed_sanitizer(node: dict[str, Any], type_name: Any) -> Sanitizer:
    """The sanitizer of the schema's keywords under one ``type`` (a name or a list of names)."""
    if isinstance(type_name, list | tuple):
        return _multi_type_sanitizer(node, tuple(type_name))
    if type_name == "array":
        return _array_sanitizer(node)
    if type_name == "object":
        return _object_sanitizer(node)
    if type_name == "string":
        format_name = node.get("format")
        if isinstance(format_name, str) and format_name in FORMAT_SANITIZERS:
            return FORMAT_SANITIZERS[format_name]
        return php.to_php_string
    return _SCALAR_SANITIZERS[type_name]


def _to_null(value: Any) -> None:
    return None


def _to_int(value: Any) -> int:
    """PHP's ``(int)`` cast (`php.to_int`), with a shortcut for ints and plain digit strings."""
    if value.__class__ is int:
        return int(value)
    if value.__class__ is str and is_digits(value):
        return int(value)
    return php.to_int(value)


_SCALAR_SANITIZERS: Final[dict[str, Sanitizer]] = {
    "null": _to_null,
    "integer": _to_int,
    "number": php.to_float,
    "boolean": sanitize_boolean,
}


def _multi_type_sanitizer(node: dict[str, Any], names: tuple[str, ...]) -> Sanitizer:
    """The best type for the value decides; none fitting gives ``None``."""
    variants = {name: _typed_sanitizer(node, name) for name in names}

    def sanitize(value: Any) -> Any:
        best = get_best_type_for_value(value, names)
        return variants[best](value) if best else None

    return sanitize


def _array_sanitizer(node: dict[str, Any]) -> Sanitizer:
    item_schema = node.get("items")
    sanitize_item = (
        compile_sanitizer(item_schema)
        if item_schema is not None and not php.is_empty(item_schema)
        else None
    )
    unique = not php.is_empty(node.get("uniqueItems"))

    def sanitize(value: Any) -> list[Any]:
        items = sanitize_array(value)
        if sanitize_item is not None:
            items = [sanitize_item(item) for item in items]
        if unique and not contains_unique_items(items):
            raise Refused
        return items

    return sanitize


def _object_sanitizer(node: dict[str, Any]) -> Sanitizer:
    properties = node.get("properties")
    declared = {
        key: compile_sanitizer(child)
        for key, child in (properties.items() if isinstance(properties, Mapping) else ())
        if child is not None
    }
    pattern_properties = node.get("patternProperties")
    patterns: list[tuple[CompiledPattern | None, Sanitizer | None]] = [
        (schema_pattern(pattern), None if child is None else compile_sanitizer(child))
        for pattern, child in (
            pattern_properties.items() if isinstance(pattern_properties, Mapping) else ()
        )
    ]
    additional = node.get("additionalProperties")
    drop_others = additional is False
    sanitize_other = compile_sanitizer(additional) if isinstance(additional, Mapping) else None

    def undeclared_child(key: Any) -> Sanitizer | None:
        """The sanitizer of a key ``declared`` does not name as it is: as a string, else by
        the first matching pattern (whose schema may be none)."""
        child = declared.get(str(key)) if key.__class__ is not str else None
        if child is None and patterns:
            name = key if key.__class__ is str else php.to_php_string(key)
            for pattern, pattern_child in patterns:
                if pattern is not None and pattern.search(name) is not None:
                    return pattern_child
        return child

    def sanitize(value: Any) -> dict[Any, Any] | list[Any]:
        source = sanitize_object(value)
        result: dict[Any, Any] = {}
        for key, item in source.items() if source.__class__ is dict else enumerate(source):
            child = declared.get(key)
            if child is None:
                child = undeclared_child(key)
                if child is None:
                    if drop_others:
                        continue
                    if sanitize_other is None:
                        result[key] = item
                        continue
                    child = sanitize_other
            result[key] = child(item)
        if source.__class__ is not dict and list(result) == list(range(len(result))):
            return list(result.values())  # a list stays a list when nothing was removed
        return result

    return sanitize
