"""``filter_response_by_context`` gives what its first, plainer form gave (#18).

The walk was rewritten for speed (each key's schema found without a call per lookup, plain
dicts and lists recognised first); the rewrite must keep every answer. The reference below is
the former implementation, kept verbatim; generated schemas (with ``context`` lists scattered
through them, as lists, tuples, maps and odd values) and values are filtered by both.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitecache.errors import RestError
from sitecache.schema import php, report_misuse_to
from sitecache.schema.response_filters import filter_response_by_context
from sitecache.schema.types import is_array
from sitecache.schema.validation import (
    find_any_matching_schema,
    find_matching_pattern_property_schema,
    find_one_matching_schema,
    get_property_schema,
)
from tests.schema.generated_schemas import cases

CONTEXTS = ("view", "edit", "embed")


def reference(data: Any, schema: Any, context: str) -> Any:  # noqa: C901 - verbatim
    """The implementation before #18's rewrite."""
    if not isinstance(schema, Mapping):
        return data
    if "anyOf" in schema:
        matched = find_any_matching_schema(data, schema, "")
        if not isinstance(matched, RestError):
            if schema.get("type") is None:
                schema = {**schema, "type": matched.get("type")}
            data = reference(data, matched, context)
    if "oneOf" in schema:
        matched = find_one_matching_schema(data, schema, "", stop_after_first_match=True)
        if not isinstance(matched, RestError):
            if schema.get("type") is None:
                schema = {**schema, "type": matched.get("type")}
            data = reference(data, matched, context)
    if not php.is_php_array(data):
        return data
    type_name = schema.get("type")
    if type_name is None:
        if schema.get("properties") is None:
            return data
        type_name = "object"
    types = list(type_name) if isinstance(type_name, list | tuple) else [type_name]
    is_array_type = "array" in types
    is_object_type = "object" in types
    if is_array_type and is_object_type:
        if is_array(data):
            is_object_type = False
        else:
            is_array_type = False
    additional = schema.get("additionalProperties") if is_object_type else None
    result: dict[Any, Any] = {}
    for key, value in php.array_items(data):
        check: Any = None
        if is_array_type:
            check = schema.get("items")
        elif is_object_type:
            check = get_property_schema(schema.get("properties"), key)
            if check is None:
                check = find_matching_pattern_property_schema(key, schema)
            if check is None and isinstance(additional, Mapping):
                check = additional
        allowed = check.get("context") if isinstance(check, Mapping) else None
        if allowed is None:
            result[key] = value
            continue
        values = list(allowed.values()) if isinstance(allowed, dict) else list(allowed)
        if not (php.is_php_array(allowed) and context in values):
            if is_array_type:
                return []
            continue
        if php.is_php_array(value):
            result[key] = reference(value, check, context)
        else:
            result[key] = value
    if isinstance(data, dict):
        return result
    if list(result) == list(range(len(result))):
        return list(result.values())
    return result


#: Well-formed context lists and misuses of the keyword (a mapping, a string, ``None``).
CONTEXT_LISTS: tuple[object, ...] = (
    ["view", "edit"],
    ["edit"],
    ["embed", "view", "edit"],
    [],
    ("view",),
    {"a": "edit", "b": "view"},
    "view",
    None,
)


def with_contexts(schema: Any, rng: random.Random) -> Any:
    """``schema`` with a ``context`` entry added here and there, at every depth."""
    if isinstance(schema, list):
        return [with_contexts(item, rng) for item in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {key: with_contexts(value, rng) for key, value in schema.items()}
    if rng.random() < 0.6:
        copy["context"] = rng.choice(CONTEXT_LISTS)
    return copy


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.randoms(use_true_random=False), st.sampled_from(CONTEXTS))
def test_the_rewritten_filter_agrees_with_the_former_one(
    case: Any, rng: random.Random, context: str
) -> None:
    schema, values, _ = case
    schema = with_contexts(schema, rng)
    schema.pop("context", None)  # the top level is the route's schema, not a property
    for value in values:
        ours, our_notices = _filtered(filter_response_by_context, value, schema, context)
        theirs, their_notices = _filtered(reference, value, schema, context)
        assert (ours, our_notices) == (theirs, their_notices), (schema, value)


def _filtered(
    walk: Any, value: Any, schema: Any, context: str
) -> tuple[Any, list[tuple[str, str]]]:
    """``walk(value, schema, context)`` and the misuse notices it raised."""
    notices: list[tuple[str, str]] = []
    with report_misuse_to(lambda function, message: notices.append((function, message))):
        return walk(value, schema, context), notices


def test_an_item_of_a_collection_loses_what_its_context_hides() -> None:
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "context": ["view", "edit"]},
            "secret": {"type": "string", "context": ["edit"]},
            "meta": {
                "type": "object",
                "context": ["view"],
                "properties": {"inner": {"type": "string", "context": ["edit"]}},
            },
        },
    }
    item = {"id": 1, "secret": "s", "meta": {"inner": "x", "other": 2}, "_links": {}}
    assert filter_response_by_context(item, schema, "view") == {
        "id": 1,
        "meta": {"other": 2},
        "_links": {},
    }
    assert filter_response_by_context(item, schema, "edit") == {
        "id": 1,
        "secret": "s",
        "_links": {},
    }


def test_pattern_and_additional_properties_carry_contexts_too() -> None:
    schema = {
        "type": "object",
        "properties": {"id": {"type": "integer", "context": ["view"]}},
        "patternProperties": {"^x-": {"type": "string", "context": ["edit"]}},
        "additionalProperties": {"type": "string", "context": ["embed"]},
    }
    data = {"id": 1, "x-secret": "s", "other": "o", 0: "zero"}
    for context in CONTEXTS:
        assert filter_response_by_context(data, schema, context) == reference(data, schema, context)
    assert filter_response_by_context(data, schema, "view") == {"id": 1}
    assert filter_response_by_context(data, schema, "edit") == {"x-secret": "s"}
    listed = {"type": "array", "items": {"type": "string", "context": ("view",)}}
    assert filter_response_by_context(("a", "b"), listed, "view") == ["a", "b"]
    assert filter_response_by_context(["a"], listed, "edit") == []
