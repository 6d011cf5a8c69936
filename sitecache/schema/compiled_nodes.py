"""What the schema compiler needs to know about a schema before it compiles it.

The compiled validators (`sitecache.schema.compiled`) promise the reference functions' results,
misuse notices included. Notices carry the ``param`` of the place they concern, and a compiled
check does not know that ``param`` until it fails, so a schema that could report misuse somewhere
is never compiled: `may_report_misuse` finds such schemas by walking every place the reference
walkers (`check_value`, `sanitize_value_from_schema`) can visit, and says ``True`` when in doubt.

It also holds the small readings of a schema both compilers share: the branches of
``anyOf``/``oneOf`` with their inherited type, draft-4 boolean flags and the compiled form of a
``pattern``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import regex

from sitecache.schema import php
from sitecache.schema.patterns import compile_schema_pattern
from sitecache.schema.types import ALLOWED_TYPES

__all__ = [
    "CompiledPattern",
    "branches",
    "flag",
    "may_report_misuse",
    "schema_pattern",
]

CompiledPattern = re.Pattern[str] | regex.Pattern[str]
_COMBINERS: Final = ("anyOf", "oneOf")


class _Misuse(Exception):
    """Some value could make the reference report misuse for this schema."""


def flag(value: Any) -> bool:
    """A draft-4 boolean keyword (``exclusiveMinimum``, ``uniqueItems``): set when not empty."""
    return value if value.__class__ is bool else not php.is_empty(value)


def branches(schema: Mapping[str, Any], keyword: str) -> list[tuple[Any, dict[str, Any]]]:
    """The ``(position, schema)`` branches of ``anyOf``/``oneOf`` as the reference reads them.

    A branch that is not a mapping is an empty schema; a branch without ``type`` inherits the
    parent's.
    """
    raw = schema.get(keyword)
    if not php.is_php_array(raw):
        return []
    parent_type = schema.get("type")
    found: list[tuple[Any, dict[str, Any]]] = []
    for position, branch in php.array_items(raw):
        branch_schema = dict(branch) if isinstance(branch, Mapping) else {}
        if branch_schema.get("type") is None and parent_type is not None:
            branch_schema["type"] = parent_type
        found.append((position, branch_schema))
    return found


def schema_pattern(pattern: Any) -> CompiledPattern | None:
    """The compiled form of a schema ``pattern`` (any value, read as PHP reads it), or ``None``
    when PCRE would refuse it."""
    text = pattern if isinstance(pattern, str) else _pattern_text(pattern)
    return compile_schema_pattern(text)


def _pattern_text(pattern: Any) -> str:
    return php.to_php_string(pattern) if php.is_scalar(pattern) else str(pattern)


def may_report_misuse(schema: Mapping[str, Any]) -> bool:
    """Whether validating or sanitizing some value by ``schema`` could report misuse.

    ``True`` for a missing or unknown ``type`` anywhere a value can reach, an invalid
    ``pattern`` or ``patternProperties`` pattern, a sub-schema that is not a mapping, a schema
    that contains itself, and ``anyOf`` beside ``oneOf`` without an outer ``type`` (whose branch
    types are decided at run time).
    """
    try:
        _walk(schema, set())
    except (_Misuse, RecursionError):
        return True
    return False


def _walk(node: Any, active: set[int]) -> None:
    if not isinstance(node, Mapping):
        raise _Misuse  # read as an empty schema: no type
    if id(node) in active:
        raise _Misuse  # a schema that contains itself: not compiled
    active.add(id(node))
    type_name = node.get("type")
    present = [keyword for keyword in _COMBINERS if keyword in node]
    if present and type_name is None and len(present) > 1:
        raise _Misuse
    possible = [type_name]
    for keyword in present:
        found = branches(node, keyword)
        for _, branch in found:
            _walk(branch, active)
        if type_name is None:
            possible = [branch.get("type") for _, branch in found]
    for candidate in possible:
        for resolved in _resolved_types(candidate):
            _walk_keywords(node, resolved, active)
    active.discard(id(node))


def _resolved_types(type_name: Any) -> list[str]:
    """The concrete types a ``type`` value can resolve to; `_Misuse` when one would notice."""
    if isinstance(type_name, list | tuple):
        names = list(type_name)
        if any(name.__class__ is not str or name not in ALLOWED_TYPES for name in names):
            raise _Misuse
        return names
    if type_name.__class__ is str and type_name in ALLOWED_TYPES:
        return [type_name]
    raise _Misuse


def _walk_keywords(node: Mapping[str, Any], type_name: str, active: set[int]) -> None:
    if type_name == "string":
        if node.get("pattern") is not None and schema_pattern(node["pattern"]) is None:
            raise _Misuse
    elif type_name == "array":
        if node.get("items") is not None:
            _walk(node["items"], active)
    elif type_name == "object":
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            for child in properties.values():
                if child is not None:
                    _walk(child, active)
        pattern_properties = node.get("patternProperties")
        if isinstance(pattern_properties, Mapping):
            for pattern, child in pattern_properties.items():
                if schema_pattern(pattern) is None:
                    raise _Misuse
                if child is not None:
                    _walk(child, active)
        additional = node.get("additionalProperties")
        if isinstance(additional, Mapping):
            _walk(additional, active)
