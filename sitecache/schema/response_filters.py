"""Shaping response data: by ``context``, by ``_fields``, and reading ``_embed``.

Mirrors ``rest_filter_response_by_context``, ``rest_filter_response_fields``,
``rest_is_field_included`` and ``rest_parse_embed_param``. All
functions return new containers and never modify their input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from sitecache.errors import RestError
from sitecache.schema import php
from sitecache.schema.types import is_array
from sitecache.schema.validation import (
    find_any_matching_schema,
    find_matching_pattern_property_schema,
    find_one_matching_schema,
    get_property_schema,
)

__all__ = [
    "filter_response_by_context",
    "filter_response_fields",
    "is_field_included",
    "parse_embed_param",
    "parse_fields",
]


# ---------------------------------------------------------------------- context
def filter_response_by_context(data: Any, schema: Mapping[str, Any], context: str) -> Any:
    """``data`` without the entries whose schema ``context`` list lacks ``context``.

    Walks objects (``properties``, then the first matching ``patternProperties``, then an
    ``additionalProperties`` schema), arrays (their shared ``items``: when the items schema
    excludes the context the whole array becomes empty) and the first matching ``anyOf``/``oneOf``
    branch. An entry whose schema has no ``context`` is kept whole and not walked into.
    """
    return _filter_by_context(data, schema, context)


def _filter_by_context(data: Any, schema: Any, context: str) -> Any:
    if schema.__class__ is not dict and not isinstance(schema, Mapping):
        return data
    if "anyOf" in schema or "oneOf" in schema:
        data, schema = _through_branches(data, schema, context)
    kind = data.__class__
    if kind is not dict and kind is not list and not php.is_php_array(data):
        return data
    shape = _shape(data, schema)
    if shape is None:
        return data
    is_array_type, is_object_type = shape
    # NOTE: each key's schema is found as `get_property_schema`, then
    # `find_matching_pattern_property_schema`, then ``additionalProperties`` find it; the
    # lookups are inlined for plain dicts (a response's every item and key pass here).
    items_schema = schema.get("items") if is_array_type else None
    properties = schema.get("properties") if is_object_type and not is_array_type else None
    plain_properties = properties if properties.__class__ is dict else None
    patterns = is_object_type and not is_array_type and "patternProperties" in schema
    additional = schema.get("additionalProperties") if is_object_type else None
    if additional is not None and not isinstance(additional, Mapping):
        additional = None

    result: dict[Any, Any] = {}
    for key, value in data.items() if kind is dict else php.array_items(data):
        check: Any = None
        if is_array_type:
            check = items_schema
        elif is_object_type:
            if plain_properties is not None:
                check = plain_properties.get(key)
                if check is None and key.__class__ is not str:
                    check = plain_properties.get(str(key))
            else:
                check = get_property_schema(properties, key)
            if check is None and patterns:
                check = find_matching_pattern_property_schema(key, schema)
            if check is None:
                check = additional
        if check.__class__ is dict or isinstance(check, Mapping):
            allowed = check.get("context")
        else:
            allowed = None
        if allowed is None:
            result[key] = value
            continue
        if not (context in allowed if allowed.__class__ is list else _lists(allowed, context)):
            if is_array_type:
                return []  # all items share one schema: none of them is visible
            continue
        if value.__class__ in _SCALARS or not php.is_php_array(value):
            result[key] = value
        else:
            result[key] = _filter_by_context(value, check, context)
    return _like(data, result)


_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
"""Value types that are never a PHP array (checked first: most values are one of these)."""


def _through_branches(data: Any, schema: Any, context: str) -> tuple[Any, Any]:
    """``data`` filtered by the first matching ``anyOf`` then ``oneOf`` branch, and the schema
    to go on with (its ``type`` taken from the branch when it has none)."""
    if "anyOf" in schema:
        matched = find_any_matching_schema(data, schema, "")
        if not isinstance(matched, RestError):
            if schema.get("type") is None:
                schema = {**schema, "type": matched.get("type")}
            data = _filter_by_context(data, matched, context)
    if "oneOf" in schema:
        matched = find_one_matching_schema(data, schema, "", stop_after_first_match=True)
        if not isinstance(matched, RestError):
            if schema.get("type") is None:
                schema = {**schema, "type": matched.get("type")}
            data = _filter_by_context(data, matched, context)
    return data, schema


def _shape(data: Any, schema: Any) -> tuple[bool, bool] | None:
    """Whether ``data`` is walked as an array and as an object by ``schema`` (never both), or
    ``None`` when the schema says neither (no ``type`` and no ``properties``)."""
    type_name = schema.get("type")
    if type_name is None:
        if schema.get("properties") is None:
            return None
        type_name = "object"
    types = list(type_name) if isinstance(type_name, list | tuple) else [type_name]
    is_array_type = "array" in types
    is_object_type = "object" in types
    if is_array_type and is_object_type:
        if is_array(data):
            is_object_type = False
        else:
            is_array_type = False
    return is_array_type, is_object_type


def _lists(allowed: Any, context: str) -> bool:
    """Whether the ``context`` list ``allowed`` (a PHP array) holds ``context``."""
    if allowed.__class__ is list:
        return context in allowed
    return php.is_php_array(allowed) and context in _values(allowed)


def _values(container: Any) -> list[Any]:
    return list(container.values()) if isinstance(container, dict) else list(container)


def _like(original: Any, result: dict[Any, Any]) -> Any:
    """``result`` in the container shape of ``original``: a list stays a list if still dense."""
    if isinstance(original, dict):
        return result
    if list(result) == list(range(len(result))):
        return list(result.values())
    return result


# ---------------------------------------------------------------------- _fields
def parse_fields(fields: Any) -> list[str]:
    """A ``_fields`` value (comma/space separated string or list) as a list of trimmed names."""
    return [php.php_trim(php.to_php_string(field)) for field in php.parse_list(fields)]


def _field_tree(fields: list[str]) -> dict[str, Any]:
    """The nested map of requested fields: a leaf is ``True`` (keep the whole value).

    A parent requested whole makes its children redundant, whichever comes first. Where
    WordPress stops reading the whole list at such a redundant child (so ``meta,meta.a,id``
    would lose ``id``), this skips just that child.
    """
    tree: dict[str, Any] = {}
    for field in fields:
        parts = field.split(".")
        node = tree
        redundant = False
        for part in parts[:-1]:
            existing = node.get(part)
            if existing is True:
                redundant = True
                break
            if not isinstance(existing, dict):
                existing = {}
                node[part] = existing
            node = existing
        if not redundant:
            node[parts[-1]] = True
    return tree


def _intersect(data: Any, tree: dict[str, Any]) -> Any:
    if not php.is_php_array(data):
        return data
    result: dict[Any, Any] = {}
    for key, value in php.array_items(data):
        wanted = tree.get(str(key))
        if wanted is None:
            continue
        if isinstance(wanted, dict) and php.is_php_array(value):
            result[key] = _intersect(value, wanted)
        else:
            result[key] = value
    return _like(data, result)


def filter_response_fields(data: Any, fields: Any) -> Any:
    """``data`` reduced to the ``_fields`` requested.

    ``fields`` is a comma/space separated string or a list; dotted names select nested keys; a
    list of items is filtered item by item; no usable field name leaves the data untouched.
    """
    names = [name for name in parse_fields(fields) if name != ""]
    if not names:
        return data
    tree = _field_tree(names)
    if php.is_numeric_array(data):
        return [_intersect(item, tree) for _, item in php.array_items(data)]
    return _intersect(data, tree)


def is_field_included(field: str, fields: Any) -> bool:
    """Whether ``field`` is wanted by ``fields``: listed itself, a parent of a listed field
    (``title`` for ``title.raw``), or a child of one (``title.raw`` for ``title``)."""
    names = fields if isinstance(fields, list | tuple) else parse_fields(fields)
    if field in names:
        return True
    for accepted in names:
        if not isinstance(accepted, str):
            continue
        if accepted.startswith(f"{field}.") or field.startswith(f"{accepted}."):
            return True
    return False


# ---------------------------------------------------------------------- _embed
def parse_embed_param(embed: Any) -> bool | list[str]:
    """``True`` (embed every relation) or the list of relation names to embed.

    Absent, empty, ``"0"``, ``"true"`` and ``"1"`` mean all; otherwise the comma/space separated
    names (so ``"false"`` is the single relation ``false``).
    """
    if php.is_empty(embed) or embed in ("true", "1"):
        return True
    relations = [php.to_php_string(name) for name in php.parse_list(embed)]
    return relations if relations else True
