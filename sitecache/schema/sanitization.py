"""Sanitization of a value by a schema (``rest_sanitize_value_from_schema``).

Coerces a value into its schema's type: arrays are split
and re-indexed, objects lose forbidden extra properties, scalars are cast as PHP casts them and
string formats are cleaned. It does not validate: callers validate first, as the REST server does.

It returns a `RestError` in three cases only: no ``anyOf``/``oneOf`` branch matches, items turn
out duplicated once sanitized (``uniqueItems``), or a nested value hits one of these. Where
WordPress would embed such a nested error inside the sanitized array, this engine returns it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from sitecache.errors import RestError
from sitecache.schema import messages, php
from sitecache.schema.formats import (
    sanitize_hex_color,
    sanitize_text_field,
    sanitize_textarea_field,
    sanitize_url,
)
from sitecache.schema.notices import doing_it_wrong
from sitecache.schema.types import (
    ALLOWED_TYPES,
    handle_multi_type_schema,
    sanitize_array,
    sanitize_boolean,
    sanitize_object,
)
from sitecache.schema.validation import (
    contains_unique_items,
    find_any_matching_schema,
    find_matching_pattern_property_schema,
    find_one_matching_schema,
    get_property_schema,
)

__all__ = ["FORMAT_SANITIZERS", "sanitize_value_from_schema"]

Schema = Mapping[str, Any]
_FUNCTION: Final = "rest_sanitize_value_from_schema"


def _sanitize_hex_color(value: Any) -> str:
    return sanitize_hex_color(value) or ""  # the (string) cast of rest_sanitize_value_from_schema


FORMAT_SANITIZERS: Final[dict[str, Callable[[Any], Any]]] = {
    "hex-color": _sanitize_hex_color,
    "date-time": sanitize_text_field,
    "email": sanitize_text_field,  # deliberately not reduced to a valid address
    "uri": sanitize_url,
    "ip": sanitize_text_field,
    "uuid": sanitize_text_field,
    "text-field": sanitize_text_field,
    "textarea-field": sanitize_textarea_field,
}


def sanitize_value_from_schema(value: Any, args: Schema, param: str = "") -> Any:
    """``value`` coerced by the schema ``args``; a `RestError` only in the cases listed above.

    A list of types with no fitting type sanitizes to ``None``.
    """
    return _sanitize(value, args, param)


def _sanitize(value: Any, args: Any, param: str) -> Any:
    schema: Schema = args if isinstance(args, Mapping) else {}
    for keyword, find in (("anyOf", find_any_matching_schema), ("oneOf", find_one_matching_schema)):
        if keyword not in schema:
            continue
        matched = find(value, schema, param)
        if isinstance(matched, RestError):
            return matched
        if schema.get("type") is None:
            schema = {**schema, "type": matched.get("type")}
        value = _sanitize(value, matched, param)
        if isinstance(value, RestError):
            return value

    type_name = schema.get("type")
    if type_name is None:
        doing_it_wrong(_FUNCTION, f'The "type" schema keyword for {param} is required.')
    elif isinstance(type_name, list | tuple):
        best = handle_multi_type_schema(value, type_name, param)
        if not best:
            return None
        type_name = best
    if type_name is not None and type_name not in ALLOWED_TYPES:
        doing_it_wrong(
            _FUNCTION,
            f'The "type" schema keyword for {param} can only be one of the built-in types: '
            f"{php.format_list(list(ALLOWED_TYPES))}.",
        )

    if type_name == "array":
        return _sanitize_array(value, schema, param)
    if type_name == "object":
        return _sanitize_object(value, schema, param)
    if type_name == "null":
        return None
    if type_name == "integer":
        return php.to_int(value)
    if type_name == "number":
        return php.to_float(value)
    if type_name == "boolean":
        return sanitize_boolean(value)

    format_name = schema.get("format")
    if isinstance(format_name, str):
        sanitizer = FORMAT_SANITIZERS.get(format_name)
        if sanitizer is not None:
            return sanitizer(value)
    if type_name == "string":
        return php.to_php_string(value)
    return value


def _sanitize_array(value: Any, schema: Schema, param: str) -> list[Any] | RestError:
    items = sanitize_array(value)
    item_schema = schema.get("items")
    if not php.is_empty(item_schema):
        sanitized: list[Any] = []
        for index, item in enumerate(items):
            result = _sanitize(item, item_schema, f"{param}[{index}]")
            if isinstance(result, RestError):
                return result
            sanitized.append(result)
        items = sanitized
    if not php.is_empty(schema.get("uniqueItems")) and not contains_unique_items(items):
        return messages.duplicate_items(param)
    return items


def _sanitize_object(
    value: Any, schema: Schema, param: str
) -> dict[Any, Any] | list[Any] | RestError:
    source = sanitize_object(value)
    properties = schema.get("properties")
    additional = schema.get("additionalProperties")
    result: dict[Any, Any] = {}
    for key, item in php.array_items(source):
        child = get_property_schema(properties, key)
        if child is None:
            child = find_matching_pattern_property_schema(key, schema)
        if child is None:
            if additional is False:
                continue
            if not isinstance(additional, Mapping):
                result[key] = item
                continue
            child = additional
        sanitized = _sanitize(item, child, f"{param}[{key}]")
        if isinstance(sanitized, RestError):
            return sanitized
        result[key] = sanitized
    if isinstance(source, list) and list(result) == list(range(len(result))):
        # A list stays a list when none of its entries was removed.
        return list(result.values())
    return result
