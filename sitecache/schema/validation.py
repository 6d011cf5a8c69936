"""Validation of a value against a schema (``rest_validate_value_from_schema``).

The order of work is WordPress's: ``anyOf``, then ``oneOf``, then
the type (a list of types resolves to the best one), the type's own rules, ``enum`` and, for
strings only, ``format``. The first failure is returned. Each type's rules are one function in
`TYPE_RULES`; each format's check is one entry of `FORMAT_CHECKS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final

from sitecache.errors import RestError
from sitecache.schema import messages, php
from sitecache.schema.combining import BranchFailure, combining_error
from sitecache.schema.dates import parse_date
from sitecache.schema.formats import is_email, is_ip_address, is_uuid, parse_hex_color
from sitecache.schema.notices import doing_it_wrong
from sitecache.schema.patterns import pattern_matches
from sitecache.schema.types import (
    ALLOWED_TYPES,
    handle_multi_type_schema,
    is_array,
    is_boolean,
    is_object,
    sanitize_array,
    sanitize_object,
)

__all__ = [
    "FORMAT_CHECKS",
    "TYPE_RULES",
    "check_value",
    "find_any_matching_schema",
    "find_matching_pattern_property_schema",
    "find_one_matching_schema",
    "validate_value_from_schema",
]

Schema = Mapping[str, Any]
TypeRule = Callable[[Any, Schema, str], RestError | None]
FormatCheck = Callable[[Any, str], RestError | None]

_FUNCTION: Final = "rest_validate_value_from_schema"


def validate_value_from_schema(value: Any, args: Schema, param: str = "") -> bool | RestError:
    """``True`` when ``value`` satisfies the schema ``args``, else the first `RestError`.

    ``param`` names the value in messages; nested items and properties extend it as
    ``param[index]`` and ``param[property]``.
    """
    error = check_value(value, args, param)
    return True if error is None else error


def check_value(value: Any, schema: Any, param: str) -> RestError | None:
    """The first rule ``value`` breaks, or ``None``: the walker behind every validation.

    ``schema`` is normally a mapping; anything else (a sub-schema of ``true``, say) is read as an
    empty schema, as PHP reads keys of a non-array as unset.
    """
    if schema.__class__ is not dict:
        schema = dict(schema) if isinstance(schema, Mapping) else {}
    if "anyOf" in schema:
        matched = find_any_matching_schema(value, schema, param)
        if isinstance(matched, RestError):
            return matched
        if schema.get("type") is None and matched.get("type") is not None:
            schema = {**schema, "type": matched["type"]}
    if "oneOf" in schema:
        matched = find_one_matching_schema(value, schema, param)
        if isinstance(matched, RestError):
            return matched
        if schema.get("type") is None and matched.get("type") is not None:
            schema = {**schema, "type": matched["type"]}

    type_name = schema.get("type")
    if type_name is None:
        doing_it_wrong(_FUNCTION, f'The "type" schema keyword for {param} is required.')
    elif isinstance(type_name, list | tuple):
        best = handle_multi_type_schema(value, type_name, param)
        if not best:
            listed = ",".join(php.to_php_string(name) for name in type_name)
            return messages.invalid_type(param, listed)
        type_name = best
        schema = {**schema, "type": best}

    rule = TYPE_RULES.get(type_name) if type_name.__class__ is str else None
    if rule is None:
        if type_name is not None:
            doing_it_wrong(
                _FUNCTION,
                f'The "type" schema keyword for {param} can only be one of the built-in types: '
                f"{php.format_list(list(ALLOWED_TYPES))}.",
            )
    else:
        error = rule(value, schema, param)
        if error is not None:
            return error

    enum = schema.get("enum")
    if enum and isinstance(enum, list | dict | tuple):  # a non-empty enum; an empty one is ignored
        error = _check_enum(value, schema, type_name, enum, param)
        if error is not None:
            return error
    elif enum is not None and not php.is_empty(enum):
        # PHP's foreach over a scalar enum finds no member: nothing can match ("is not one of .").
        return messages.not_in_enum(param, [])

    format_name = schema.get("format")
    if isinstance(format_name, str) and (rule is None or type_name == "string"):
        check = FORMAT_CHECKS.get(format_name)
        if check is not None:
            return check(value, param)
    return None


# ---------------------------------------------------------------------- per-type rules
def _check_null(value: Any, schema: Schema, param: str) -> RestError | None:
    return None if value is None else messages.invalid_type(param, "null")


def _check_boolean(value: Any, schema: Schema, param: str) -> RestError | None:
    return None if is_boolean(value) else messages.invalid_type(param, "boolean")


def _flag(value: Any) -> bool:
    """A draft-4 boolean keyword (``exclusiveMinimum``): set when not PHP-empty."""
    return value if value.__class__ is bool else not php.is_empty(value)


def _check_number(value: Any, schema: Schema, param: str) -> RestError | None:
    value_type = value.__class__
    if value_type is int or value_type is float:
        number = value
    elif php.is_numeric(value):
        number = php.to_number(value)
    else:
        return messages.invalid_type(param, php.to_php_string(schema["type"]))

    divisor = schema.get("multipleOf")
    if divisor is not None:
        try:
            remainder = math.fmod(php.to_float(number), php.to_float(divisor))
        except ValueError:  # a zero or infinite divisor, or an infinite value: PHP gives NAN
            remainder = math.nan
        if remainder != 0.0:
            return messages.not_multiple_of(param, divisor)

    minimum = schema.get("minimum")
    maximum = schema.get("maximum")
    if minimum is None and maximum is None:
        return None
    exclusive_min = _flag(schema.get("exclusiveMinimum"))
    exclusive_max = _flag(schema.get("exclusiveMaximum"))
    low = php.to_number(minimum) if minimum is not None else None
    high = php.to_number(maximum) if maximum is not None else None
    too_low = low is not None and (number <= low if exclusive_min else number < low)
    too_high = high is not None and (number >= high if exclusive_max else number > high)
    if too_low or too_high:
        return messages.out_of_bounds(param, minimum, maximum, exclusive_min, exclusive_max)
    return None


def _check_integer(value: Any, schema: Schema, param: str) -> RestError | None:
    error = _check_number(value, schema, param)
    if error is not None:
        return error
    if value.__class__ is int or php.is_integral(value):
        return None
    return messages.invalid_type(param, "integer")


def _check_string(value: Any, schema: Schema, param: str) -> RestError | None:
    if not isinstance(value, str):
        return messages.invalid_type(param, "string")
    min_length = schema.get("minLength")
    if min_length is not None and len(value) < php.to_number(min_length):
        return messages.too_short(param, min_length)
    max_length = schema.get("maxLength")
    if max_length is not None and len(value) > php.to_number(max_length):
        return messages.too_long(param, max_length)
    pattern = schema.get("pattern")
    if pattern is not None and not _pattern_matches(pattern, value):
        return messages.invalid_pattern(param, pattern)
    return None


def _pattern_matches(pattern: Any, value: str) -> bool:
    matched = pattern_matches(pattern, value)
    if matched is None:
        doing_it_wrong(
            _FUNCTION,
            f"The pattern {php.to_php_string(pattern)} is not a valid regular expression.",
        )
        return False
    return matched


def get_property_schema(properties: Any, key: Any) -> Any:
    """``$args['properties'][$key]`` when set, with PHP's int/string key equivalence."""
    if properties.__class__ is not dict and not isinstance(properties, Mapping):
        return None
    found = properties.get(key)
    if found is None and key.__class__ is not str:
        found = properties.get(str(key))
    return found


def _check_object(value: Any, schema: Schema, param: str) -> RestError | None:
    if value.__class__ is not dict:
        if not is_object(value):
            return messages.invalid_type(param, "object")
        value = sanitize_object(value)
    properties = schema.get("properties")
    required = schema.get("required")
    if php.is_php_array(required):
        for name in required.values() if isinstance(required, dict) else required:
            if not php.has_key(value, name):
                return messages.property_required(name, param)
    elif isinstance(properties, Mapping):
        for name, property_schema in properties.items():
            if (
                isinstance(property_schema, Mapping)
                and property_schema.get("required") is True
                and not php.has_key(value, name)
            ):
                return messages.property_required(name, param)

    additional = schema.get("additionalProperties")
    for key, item in value.items() if value.__class__ is dict else enumerate(value):
        child = get_property_schema(properties, key)
        if child is None:
            child = find_matching_pattern_property_schema(key, schema)
        if child is None:
            if additional is False:
                return messages.additional_property_forbidden(key)
            if not isinstance(additional, Mapping):
                continue
            child = additional
        error = check_value(item, child, f"{param}[{key}]")
        if error is not None:
            return error

    count = len(value)
    min_properties = schema.get("minProperties")
    if min_properties is not None and count < php.to_number(min_properties):
        return messages.too_few_properties(param, min_properties)
    max_properties = schema.get("maxProperties")
    if max_properties is not None and count > php.to_number(max_properties):
        return messages.too_many_properties(param, max_properties)
    return None


def _check_array(value: Any, schema: Schema, param: str) -> RestError | None:
    if not is_array(value):
        return messages.invalid_type(param, "array")
    items = sanitize_array(value)
    item_schema = schema.get("items")
    if item_schema is not None:
        for index, item in enumerate(items):
            error = check_value(item, item_schema, f"{param}[{index}]")
            if error is not None:
                return error
    count = len(items)
    min_items = schema.get("minItems")
    if min_items is not None and count < php.to_number(min_items):
        return messages.too_few_items(param, min_items)
    max_items = schema.get("maxItems")
    if max_items is not None and count > php.to_number(max_items):
        return messages.too_many_items(param, max_items)
    unique = schema.get("uniqueItems")
    if unique is not None and _flag(unique) and not contains_unique_items(items):
        return messages.duplicate_items(param)
    return None


def contains_unique_items(items: list[Any]) -> bool:
    """``rest_validate_array_contains_unique_items``: no two items are the same PHP value."""
    seen: set[Any] = set()
    for item in items:
        form = php.stable_form(item)
        if form in seen:
            return False
        seen.add(form)
    return True


TYPE_RULES: Final[dict[str, TypeRule]] = {
    "null": _check_null,
    "boolean": _check_boolean,
    "object": _check_object,
    "array": _check_array,
    "number": _check_number,
    "string": _check_string,
    "integer": _check_integer,
}


# ---------------------------------------------------------------------- enum
def _check_enum(
    value: Any, schema: Schema, type_name: Any, enum: Any, param: str
) -> RestError | None:
    """The value, sanitized by its own schema, must equal one member (``rest_validate_enum``)."""
    members = list(enum.values()) if isinstance(enum, dict) else enum
    if (
        value.__class__ is str
        and type_name == "string"
        and "format" not in schema
        and "anyOf" not in schema
        and "oneOf" not in schema
    ):
        # PERF: a plain string sanitizes to itself; compare it directly.
        if any(member.__class__ is str and member == value for member in members):
            return None
        return messages.not_in_enum(param, list(members))
    # Imported here: sanitizing needs validation (anyOf/oneOf), and validation needs sanitizing
    # (enum compares the sanitized value), so one of the two modules has to look the other up late.
    from sitecache.schema.sanitization import sanitize_value_from_schema

    sanitized = sanitize_value_from_schema(value, schema, param)
    if isinstance(sanitized, RestError):
        return sanitized
    if any(php.values_equal(sanitized, member) for member in members):
        return None
    return messages.not_in_enum(param, list(members))


# ---------------------------------------------------------------------- formats
def _check_hex_color(value: Any, param: str) -> RestError | None:
    return None if parse_hex_color(value) else messages.invalid_hex_color()


def _check_date_time(value: Any, param: str) -> RestError | None:
    # Only a failed parse is invalid: the epoch itself (a timestamp of 0) is a valid date.
    return None if parse_date(value) is not False else messages.invalid_date()


def _check_email(value: Any, param: str) -> RestError | None:
    return None if is_email(value) else messages.invalid_email()


def _check_ip(value: Any, param: str) -> RestError | None:
    return None if is_ip_address(value) else messages.invalid_ip(param)


def _check_uuid(value: Any, param: str) -> RestError | None:
    return None if is_uuid(value) else messages.invalid_uuid(param)


FORMAT_CHECKS: Final[dict[str, FormatCheck]] = {
    "hex-color": _check_hex_color,
    "date-time": _check_date_time,
    "email": _check_email,
    "ip": _check_ip,
    "uuid": _check_uuid,
}
"""Formats that validate. ``uri``, ``text-field`` and ``textarea-field`` only sanitize."""


# ---------------------------------------------------------------------- combining schemas
def _branches(schema: Schema, keyword: str) -> list[tuple[Any, dict[str, Any]]]:
    """The sub-schemas of ``anyOf``/``oneOf``, each inheriting the parent's type if it has none."""
    raw = schema.get(keyword)
    if not php.is_php_array(raw):
        return []
    parent_type = schema.get("type")
    branches: list[tuple[Any, dict[str, Any]]] = []
    for position, branch in php.array_items(raw):
        branch_schema = dict(branch) if isinstance(branch, Mapping) else {}
        if branch_schema.get("type") is None and parent_type is not None:
            branch_schema["type"] = parent_type
        branches.append((position, branch_schema))
    return branches


def find_any_matching_schema(value: Any, schema: Schema, param: str) -> dict[str, Any] | RestError:
    """The first ``anyOf`` branch ``value`` satisfies, or the combining error."""
    failures: list[BranchFailure] = []
    for position, branch in _branches(schema, "anyOf"):
        error = check_value(value, branch, param)
        if error is None:
            return branch
        failures.append(BranchFailure(error, branch, position))
    return combining_error(value, param, failures)


def find_one_matching_schema(
    value: Any, schema: Schema, param: str, stop_after_first_match: bool = False
) -> dict[str, Any] | RestError:
    """The single ``oneOf`` branch ``value`` satisfies, or an error.

    No match gives the combining error; several matches give the "matches more than one" error
    with the matching ``positions``. With ``stop_after_first_match`` the first match is returned.
    """
    matches: list[tuple[Any, dict[str, Any]]] = []
    failures: list[BranchFailure] = []
    for position, branch in _branches(schema, "oneOf"):
        error = check_value(value, branch, param)
        if error is None:
            if stop_after_first_match:
                return branch
            matches.append((position, branch))
        else:
            failures.append(BranchFailure(error, branch, position))
    if not matches:
        return combining_error(value, param, failures)
    if len(matches) > 1:
        positions = [position for position, _ in matches]
        titles = [branch["title"] for _, branch in matches if branch.get("title") is not None]
        return messages.one_of_multiple_matches(
            param, titles if len(titles) == len(matches) else None, positions
        )
    return matches[0][1]


def find_matching_pattern_property_schema(key: Any, schema: Schema) -> Any:
    """The schema of the first ``patternProperties`` pattern matching ``key``, or ``None``."""
    pattern_properties = schema.get("patternProperties")
    if not isinstance(pattern_properties, Mapping):
        return None
    name = php.to_php_string(key)
    for pattern, child in pattern_properties.items():
        if _pattern_matches(pattern, name):
            return child
    return None
