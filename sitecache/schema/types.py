"""The seven schema types: how a value is recognised as one and coerced into it.

Mirrors ``rest_is_boolean``, ``rest_is_integer``, ``rest_is_array``, ``rest_is_object``, their
``rest_sanitize_*`` counterparts and ``rest_get_best_type_for_value``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from sitecache.schema import php
from sitecache.schema.notices import doing_it_wrong

__all__ = [
    "ALLOWED_TYPES",
    "get_best_type_for_value",
    "handle_multi_type_schema",
    "is_array",
    "is_boolean",
    "is_integer",
    "is_object",
    "sanitize_array",
    "sanitize_boolean",
    "sanitize_object",
]

ALLOWED_TYPES: Final = ("array", "object", "string", "number", "integer", "boolean", "null")
_BOOLEAN_STRINGS: Final = frozenset({"false", "true", "0", "1"})


def is_boolean(value: object) -> bool:
    """True for ``True``/``False``, the ints 0 and 1, and 'true' 'false' '0' '1' in any case."""
    if isinstance(value, bool):
        return True
    if isinstance(value, str):
        return php.ascii_lower(value) in _BOOLEAN_STRINGS
    if isinstance(value, int):
        return value in (0, 1)
    return False


def sanitize_boolean(value: object) -> bool:
    """'false' and '0' (any case) become ``False``; everything else follows PHP truthiness."""
    if isinstance(value, str) and php.ascii_lower(value) in ("false", "0"):
        return False
    return php.to_bool(value)


def is_integer(value: object) -> bool:
    """True for a numeric value with no fractional part ('1.0', '1e3' and 1e20 included)."""
    return php.is_integral(value)


def is_array(value: object) -> bool:
    """True for a list, a map with only integer keys, or any scalar (split as a list)."""
    if php.is_scalar(value):
        return True
    return php.is_numeric_array(value)


def sanitize_array(value: object) -> list[Any]:
    """A list: scalars are split on commas and whitespace, maps keep their values, else ``[]``."""
    if php.is_scalar(value):
        return php.parse_list(value)
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, dict):
        return list(value.values())
    return []


def is_object(value: object) -> bool:
    """True for a map, a list (PHP arrays are maps too) or the empty string."""
    return value == "" if isinstance(value, str) else php.is_php_array(value)


def sanitize_object(value: object) -> dict[Any, Any] | list[Any]:
    """The value as a map: '' becomes ``{}``, lists stay lists, anything else becomes ``{}``."""
    if isinstance(value, dict | list):
        return value
    if isinstance(value, tuple):
        return list(value)
    return {}


_TYPE_TESTS: Final[dict[str, Callable[[object], bool]]] = {
    "array": is_array,
    "object": is_object,
    "integer": is_integer,
    "number": php.is_numeric,
    "boolean": is_boolean,
    "string": lambda value: isinstance(value, str),
    "null": lambda value: value is None,
}


def get_best_type_for_value(value: object, types: Sequence[str]) -> str:
    """The first listed type the value satisfies, or ``""``.

    The empty string picks ``string`` when it is listed; otherwise the schema's own order decides
    (so ``1`` against ``["array", "integer"]`` is ``array``: scalars are arrays).
    """
    if value == "" and isinstance(value, str) and "string" in types:
        return "string"
    for type_name in types:
        test = _TYPE_TESTS.get(type_name) if isinstance(type_name, str) else None
        if test is not None and test(value):
            return type_name
    return ""


def handle_multi_type_schema(value: object, types: Sequence[Any], param: str) -> str:
    """Resolve a list of types to one (``rest_handle_multi_type_schema``).

    Unknown names are reported as misuse; when nothing fits and unknown names exist, the first
    unknown name is returned, so the value passes unchecked as it always has.
    """
    invalid = [name for name in types if name not in ALLOWED_TYPES]
    if invalid:
        doing_it_wrong(
            "rest_handle_multi_type_schema",
            f'The "type" schema keyword for {param} can only contain the built-in types: '
            f"{php.format_list(list(ALLOWED_TYPES))}.",
        )
    best = get_best_type_for_value(value, types)
    if not best and invalid:
        return php.to_php_string(invalid[0])
    return best
