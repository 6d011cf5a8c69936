"""Route arguments: derived from a resource schema, validated and sanitized per request.

Mirrors ``rest_get_endpoint_args_for_schema``, ``rest_default_additional_properties_to_false``
and the default argument callbacks ``rest_validate_request_arg``, ``rest_sanitize_request_arg``
and ``rest_parse_request_arg``. The callbacks only need a
request that answers ``get_attributes()``, so they live here, below the REST layer that
re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from sitecache.errors import RestError
from sitecache.schema.sanitization import sanitize_value_from_schema
from sitecache.schema.validation import check_value

__all__ = [
    "ALLOWED_SCHEMA_KEYWORDS",
    "CREATABLE",
    "EDITABLE",
    "HasAttributes",
    "default_additional_properties_to_false",
    "get_endpoint_args_for_schema",
    "parse_request_arg",
    "sanitize_request_arg",
    "validate_request_arg",
]

CREATABLE: Final = "POST"
EDITABLE: Final = "POST, PUT, PATCH"

ALLOWED_SCHEMA_KEYWORDS: Final = (
    "title", "description", "default", "type", "format", "enum", "items", "properties",
    "additionalProperties", "patternProperties", "minProperties", "maxProperties", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
    "pattern", "minItems", "maxItems", "uniqueItems", "anyOf", "oneOf",
)  # fmt: skip
"""The schema keywords an argument definition keeps (``rest_get_allowed_schema_keywords``)."""

_COPIED_KEYWORDS: Final = tuple(
    k for k in ALLOWED_SCHEMA_KEYWORDS if k not in ("default", "required")
)


class HasAttributes(Protocol):
    """What the default argument callbacks need of a request: its handler attributes."""

    def get_attributes(self) -> Mapping[str, Any]: ...


def _argument_schema(request: HasAttributes, param: str) -> Mapping[str, Any] | None:
    args = request.get_attributes().get("args")
    if not isinstance(args, dict | Mapping):
        return None
    schema = args.get(param)
    return schema if isinstance(schema, dict | Mapping) else None


def validate_request_arg(value: Any, request: HasAttributes, param: str) -> bool | RestError:
    """Validate ``value`` against the request's argument definition ``param`` (``True`` if none)."""
    schema = _argument_schema(request, param)
    if schema is None:
        return True
    error = check_value(value, schema, param)
    return True if error is None else error


def sanitize_request_arg(value: Any, request: HasAttributes, param: str) -> Any:
    """Sanitize ``value`` by the request's argument definition ``param`` (unchanged if none)."""
    schema = _argument_schema(request, param)
    if schema is None:
        return value
    return sanitize_value_from_schema(value, schema, param)


def parse_request_arg(value: Any, request: HasAttributes, param: str) -> Any:
    """Validate, then sanitize: the `RestError` of validation, or the sanitized value."""
    valid = validate_request_arg(value, request, param)
    if isinstance(valid, RestError):
        return valid
    return sanitize_request_arg(value, request, param)


def default_additional_properties_to_false(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` where every object definition without ``additionalProperties``
    gets ``additionalProperties: false`` (through ``properties``, ``patternProperties`` and
    ``items``). A schema without ``type`` is returned unchanged (as a copy)."""
    result = dict(schema)
    type_name = result.get("type")
    types = list(type_name) if isinstance(type_name, list | tuple) else [type_name]
    if "object" in types:
        for keyword in ("properties", "patternProperties"):
            children = result.get(keyword)
            if isinstance(children, Mapping):
                result[keyword] = {
                    key: default_additional_properties_to_false(child)
                    if isinstance(child, Mapping)
                    else child
                    for key, child in children.items()
                }
        if result.get("additionalProperties") is None:
            result["additionalProperties"] = False
    if "array" in types and isinstance(result.get("items"), Mapping):
        result["items"] = default_additional_properties_to_false(result["items"])
    return result


def get_endpoint_args_for_schema(
    schema: Mapping[str, Any], method: str = CREATABLE
) -> dict[str, dict[str, Any]]:
    """The argument definitions of an endpoint, one per writable property of ``schema``.

    Read-only properties are skipped. Each argument gets the default validate and sanitize
    callbacks; ``default`` and ``required`` are kept only when ``method`` is exactly ``"POST"``
    (create); every other allowed keyword is copied; ``arg_options`` are merged last, without
    their ``required`` and ``default`` on other methods.
    """
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        return {}
    creatable = method == CREATABLE
    endpoint_args: dict[str, dict[str, Any]] = {}
    for name, definition in properties.items():
        if not isinstance(definition, Mapping) or definition.get("readonly"):
            continue
        argument: dict[str, Any] = {
            "validate_callback": validate_request_arg,
            "sanitize_callback": sanitize_request_arg,
        }
        if creatable and definition.get("default") is not None:
            argument["default"] = definition["default"]
        if creatable and definition.get("required"):
            argument["required"] = True
        for keyword in _COPIED_KEYWORDS:
            if definition.get(keyword) is not None:
                argument[keyword] = definition[keyword]
        options = definition.get("arg_options")
        if isinstance(options, Mapping):
            if not creatable:
                options = {k: v for k, v in options.items() if k not in ("required", "default")}
            argument.update(options)
        endpoint_args[name] = argument
    return endpoint_args
