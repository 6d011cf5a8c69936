"""The errors schema rules produce: one named constructor per rule, codes and messages fixed.

The engine keeps eight codes: ``rest_invalid_type``, ``rest_property_required``,
``rest_invalid_pattern``, ``rest_invalid_hex_color``, ``rest_invalid_date``,
``rest_invalid_email``, ``rest_invalid_uuid`` and ``rest_invalid_param`` for every other failure
(enum, bounds, lengths, counts, duplicates, extra properties, multiples, IP addresses and the
``anyOf``/``oneOf`` combinations). Messages are WordPress's, word for word. Only type errors
carry data (``param``), and combining errors carry ``position`` or ``positions``.
"""

from __future__ import annotations

from typing import Any, Final

from sitecache.errors import RestError
from sitecache.schema import php

INVALID_TYPE: Final = "rest_invalid_type"
INVALID_PARAM: Final = "rest_invalid_param"
PROPERTY_REQUIRED: Final = "rest_property_required"
INVALID_PATTERN: Final = "rest_invalid_pattern"
INVALID_HEX_COLOR: Final = "rest_invalid_hex_color"
INVALID_DATE: Final = "rest_invalid_date"
INVALID_EMAIL: Final = "rest_invalid_email"
INVALID_UUID: Final = "rest_invalid_uuid"


def _counted(param: str, limit: object, singular: str, plural: str) -> str:
    noun = singular if php.is_singular(limit) else plural
    return f"{param} must {noun.format(php.format_count(limit))}"


# ---------------------------------------------------------------------- types
def invalid_type(param: str, type_text: str) -> RestError:
    """``<param> is not of type <type>.`` with data ``{"param": param}``."""
    return RestError(INVALID_TYPE, f"{param} is not of type {type_text}.", {"param": param})


# ---------------------------------------------------------------------- objects
def property_required(name: object, param: str) -> RestError:
    """``<name> is a required property of <param>.``"""
    return RestError(
        PROPERTY_REQUIRED, f"{php.to_php_string(name)} is a required property of {param}."
    )


def additional_property_forbidden(name: object) -> RestError:
    """``<name> is not a valid property of Object.`` (the property name only, not the path)."""
    return RestError(INVALID_PARAM, f"{php.to_php_string(name)} is not a valid property of Object.")


def too_few_properties(param: str, limit: object) -> RestError:
    """``<param> must contain at least <n> property|properties.``"""
    text = _counted(
        param, limit, "contain at least {} property.", "contain at least {} properties."
    )
    return RestError(INVALID_PARAM, text)


def too_many_properties(param: str, limit: object) -> RestError:
    """``<param> must contain at most <n> property|properties.``"""
    text = _counted(param, limit, "contain at most {} property.", "contain at most {} properties.")
    return RestError(INVALID_PARAM, text)


# ---------------------------------------------------------------------- arrays
def too_few_items(param: str, limit: object) -> RestError:
    """``<param> must contain at least <n> item(s).``"""
    text = _counted(param, limit, "contain at least {} item.", "contain at least {} items.")
    return RestError(INVALID_PARAM, text)


def too_many_items(param: str, limit: object) -> RestError:
    """``<param> must contain at most <n> item(s).``"""
    text = _counted(param, limit, "contain at most {} item.", "contain at most {} items.")
    return RestError(INVALID_PARAM, text)


def duplicate_items(param: str) -> RestError:
    """``<param> has duplicate items.``"""
    return RestError(INVALID_PARAM, f"{param} has duplicate items.")


# ---------------------------------------------------------------------- strings
def too_short(param: str, limit: object) -> RestError:
    """``<param> must be at least <n> character(s) long.``"""
    text = _counted(
        param, limit, "be at least {} character long.", "be at least {} characters long."
    )
    return RestError(INVALID_PARAM, text)


def too_long(param: str, limit: object) -> RestError:
    """``<param> must be at most <n> character(s) long.``"""
    text = _counted(param, limit, "be at most {} character long.", "be at most {} characters long.")
    return RestError(INVALID_PARAM, text)


def invalid_pattern(param: str, pattern: object) -> RestError:
    """``<param> does not match pattern <pattern>.`` (the raw pattern)."""
    return RestError(
        INVALID_PATTERN, f"{param} does not match pattern {php.to_php_string(pattern)}."
    )


# ---------------------------------------------------------------------- numbers
def not_multiple_of(param: str, divisor: object) -> RestError:
    """``<param> must be a multiple of <n>.`` (the divisor as PHP prints it: 0.1, 1.5, 3)."""
    return RestError(INVALID_PARAM, f"{param} must be a multiple of {php.to_php_string(divisor)}.")


def _bound(value: object) -> str:
    # The bounds are printed with %d: float bounds are truncated, 0.5 prints as 0.
    return str(php.to_int(value))


def out_of_bounds(
    param: str,
    minimum: object | None,
    maximum: object | None,
    exclusive_minimum: bool,
    exclusive_maximum: bool,
) -> RestError:
    """The range message for whichever bounds the schema has (no final period, as WordPress)."""
    if maximum is None:
        relation = "greater than" if exclusive_minimum else "greater than or equal to"
        text = f"{param} must be {relation} {_bound(minimum)}"
    elif minimum is None:
        relation = "less than" if exclusive_maximum else "less than or equal to"
        text = f"{param} must be {relation} {_bound(maximum)}"
    else:
        low = "exclusive" if exclusive_minimum else "inclusive"
        high = "exclusive" if exclusive_maximum else "inclusive"
        text = f"{param} must be between {_bound(minimum)} ({low}) and {_bound(maximum)} ({high})"
    return RestError(INVALID_PARAM, text)


# ---------------------------------------------------------------------- enum
def enum_member_text(member: Any) -> str:
    """An enum member as the message prints it: scalars as PHP strings, the rest as JSON."""
    return php.to_php_string(member) if php.is_scalar(member) else php.json_compact(member)


def not_in_enum(param: str, members: list[Any]) -> RestError:
    """``<param> is not <a>.`` for one member, ``<param> is not one of <a, b, and c>.`` else."""
    texts = [enum_member_text(member) for member in members]
    if len(texts) == 1:
        return RestError(INVALID_PARAM, f"{param} is not {texts[0]}.")
    return RestError(INVALID_PARAM, f"{param} is not one of {php.format_list(texts)}.")


# ---------------------------------------------------------------------- formats
def invalid_hex_color() -> RestError:
    """``Invalid hex color.``"""
    return RestError(INVALID_HEX_COLOR, "Invalid hex color.")


def invalid_date() -> RestError:
    """``Invalid date.``"""
    return RestError(INVALID_DATE, "Invalid date.")


def invalid_email() -> RestError:
    """``Invalid email address.``"""
    return RestError(INVALID_EMAIL, "Invalid email address.")


def invalid_ip(param: str) -> RestError:
    """``<param> is not a valid IP address.``"""
    return RestError(INVALID_PARAM, f"{param} is not a valid IP address.")


def invalid_uuid(param: str) -> RestError:
    """``<param> is not a valid UUID.``"""
    return RestError(INVALID_UUID, f"{param} is not a valid UUID.")


# ---------------------------------------------------------------------- anyOf / oneOf
def no_matching_schema_reason(
    param: str, title: object | None, reason: str, position: Any
) -> RestError:
    """One failing branch explained: ``<param> is not a valid <title>. Reason: …`` or
    ``<param> does not match the expected format. Reason: …``, with data ``{"position": i}``."""
    if title is not None:
        text = f"{param} is not a valid {php.to_php_string(title)}. Reason: {reason}"
    else:
        text = f"{param} does not match the expected format. Reason: {reason}"
    return RestError(INVALID_PARAM, text, {"position": position})


def no_matching_titled_schema(param: str, titles: list[Any]) -> RestError:
    """``<param> is not a valid <a, b, and c>.`` when every branch has a title."""
    return RestError(INVALID_PARAM, f"{param} is not a valid {php.format_list(titles)}.")


def no_matching_schema(param: str) -> RestError:
    """``<param> does not match any of the expected formats.``"""
    return RestError(INVALID_PARAM, f"{param} does not match any of the expected formats.")


def one_of_multiple_matches(
    param: str, titles: list[Any] | None, positions: list[Any]
) -> RestError:
    """``<param> matches <a and b>, but should match only one.`` when every match has a title,
    else ``<param> matches more than one of the expected formats.``; data ``{"positions": […]}``."""
    if titles is not None:
        text = f"{param} matches {php.format_list(titles)}, but should match only one."
    else:
        text = f"{param} matches more than one of the expected formats."
    return RestError(INVALID_PARAM, text, {"positions": positions})
