"""Shaping response data: ``context`` filtering, ``_fields`` filtering and ``_embed`` parsing.

Rows follow WordPress's schema functions and §9 (``filter_response_fields``,
``is_field_included``) and WordPress's `_embed` parsing (``parse_embed_param``). One deliberate
product decision is tested as the product wants it: a redundant child in ``_fields`` (such as
``meta.key1`` after ``meta``) is skipped alone, where WordPress stops reading the whole list.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sitecache.schema import (
    filter_response_by_context,
    filter_response_fields,
    is_field_included,
    parse_embed_param,
)

VIEW_EDIT = ["view", "edit"]
EDIT = ["edit"]
VIEW = ["view"]

# ---------------------------------------------------------------------- context
OBJECT_VIEW_EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "first": {"type": "string", "context": VIEW_EDIT},
        "second": {"type": "string", "context": EDIT},
    },
}

CONTEXT_CASES = [
    pytest.param(
        {"first": "a", "second": "b"},
        OBJECT_VIEW_EDIT_SCHEMA,
        "view",
        {"first": "a"},
        id="property-outside-context-removed",
    ),
    pytest.param(
        {"first": "a", "second": "b"},
        OBJECT_VIEW_EDIT_SCHEMA,
        "edit",
        {"first": "a", "second": "b"},
        id="properties-in-context-kept",
    ),
    pytest.param(
        {"first": "a", "second": "b"},
        OBJECT_VIEW_EDIT_SCHEMA,
        "embed",
        {},
        id="object-with-no-matching-properties-is-empty",
    ),
    pytest.param(
        {"first": "a", "second": "b"},
        {
            "type": "object",
            "properties": {
                "first": {"type": "string", "context": VIEW_EDIT},
                "second": {"type": "string"},
            },
        },
        "view",
        {"first": "a", "second": "b"},
        id="property-without-context-kept",
    ),
    pytest.param(
        {"first": "a", "second": "b"},
        {
            "type": "object",
            "properties": {
                "first": {"type": "string", "context": VIEW_EDIT},
                "second": {"type": "string", "context": []},
            },
        },
        "edit",
        {"first": "a"},
        id="empty-context-list-hides-in-every-context",
    ),
    pytest.param(
        {"first": "a", "extra": "b"},
        OBJECT_VIEW_EDIT_SCHEMA,
        "view",
        {"first": "a", "extra": "b"},
        id="key-without-schema-kept",
    ),
    pytest.param(
        {"parent": {"child": 1, "hidden": 2}},
        {
            "type": "object",
            "properties": {
                "parent": {
                    "type": "object",
                    "context": VIEW_EDIT,
                    "properties": {
                        "child": {"type": "integer", "context": VIEW_EDIT},
                        "hidden": {"type": "integer", "context": EDIT},
                    },
                }
            },
        },
        "view",
        {"parent": {"child": 1}},
        id="nested-properties-filtered",
    ),
    pytest.param(
        {"parent": {"child": {"grand": 1, "hidden": 2}}},
        {
            "type": "object",
            "properties": {
                "parent": {
                    "type": "object",
                    "context": VIEW_EDIT,
                    "properties": {
                        "child": {
                            "type": "object",
                            "context": VIEW_EDIT,
                            "properties": {
                                "grand": {"type": "integer", "context": VIEW_EDIT},
                                "hidden": {"type": "integer", "context": EDIT},
                            },
                        }
                    },
                }
            },
        },
        "view",
        {"parent": {"child": {"grand": 1}}},
        id="grandchild-properties-filtered",
    ),
    pytest.param(
        {"parent": {"child": {"grand": 1, "hidden": 2}}},
        {
            "type": "object",
            "properties": {
                "parent": {
                    "type": "object",
                    "properties": {
                        "child": {
                            "type": "object",
                            "context": VIEW_EDIT,
                            "properties": {
                                "grand": {"type": "integer", "context": VIEW_EDIT},
                                "hidden": {"type": "integer", "context": EDIT},
                            },
                        }
                    },
                }
            },
        },
        "view",
        {"parent": {"child": {"grand": 1, "hidden": 2}}},
        id="entry-without-context-not-traversed",
    ),
    pytest.param(
        "value",
        {"type": "string", "context": EDIT},
        "view",
        "value",
        id="scalar-returned-unchanged",
    ),
    pytest.param(
        {"first": "a", "second": "b"},
        {"type": "object", "context": EDIT, "properties": OBJECT_VIEW_EDIT_SCHEMA["properties"]},
        "view",
        {"first": "a"},
        id="top-level-context-never-looked-at",
    ),
    pytest.param(
        [{"a": 1, "b": 2}, {"a": 3, "b": 4}],
        {
            "type": "array",
            "items": {
                "type": "object",
                "context": VIEW_EDIT,
                "properties": {
                    "a": {"type": "integer", "context": VIEW_EDIT},
                    "b": {"type": "integer", "context": EDIT},
                },
            },
        },
        "view",
        [{"a": 1}, {"a": 3}],
        id="array-items-filtered-recursively",
    ),
    pytest.param(
        [1, 2, 3],
        {"type": "array", "items": {"type": "integer", "context": EDIT}},
        "view",
        [],
        id="whole-array-emptied",
    ),
    pytest.param(
        {"tags": ["x", "y"], "title": "t"},
        {
            "type": "object",
            "properties": {
                "tags": {
                    "type": "array",
                    "context": VIEW_EDIT,
                    "items": {"type": "string", "context": EDIT},
                },
                "title": {"type": "string", "context": VIEW_EDIT},
            },
        },
        "view",
        {"tags": [], "title": "t"},
        id="nested-array-emptied",
    ),
    pytest.param(
        [1, 2, 3],
        {"type": "array", "items": {"type": "integer"}},
        "view",
        [1, 2, 3],
        id="array-items-without-context-kept",
    ),
    pytest.param(
        {"1": "a", "b": "c"},
        {
            "type": "object",
            "patternProperties": {
                "^[0-9]+$": {"type": "string", "context": VIEW_EDIT},
                "^[a-z]+$": {"type": "string", "context": EDIT},
            },
        },
        "view",
        {"1": "a"},
        id="pattern-properties",
    ),
    pytest.param(
        {"ab": 1, "ba": 2},
        {
            "type": "object",
            "patternProperties": {
                "^a": {"type": "integer", "context": EDIT},
                "a": {"type": "integer", "context": VIEW},
            },
        },
        "view",
        {"ba": 2},
        id="first-matching-pattern-decides",
    ),
    pytest.param(
        {"a1": 1, "a2": 2},
        {
            "type": "object",
            "properties": {"a1": {"type": "integer", "context": VIEW}},
            "patternProperties": {"^a": {"type": "integer", "context": EDIT}},
        },
        "view",
        {"a1": 1},
        id="properties-before-pattern-properties",
    ),
    pytest.param(
        {"a": 1, "b": 2, "c": 3},
        {
            "type": "object",
            "properties": {"a": {"type": "integer", "context": VIEW}},
            "additionalProperties": {"type": "integer", "context": EDIT},
        },
        "view",
        {"a": 1},
        id="additional-properties-schema",
    ),
    pytest.param(
        {"a": 1, "b": {"x": 1, "y": 2}},
        {
            "type": "object",
            "properties": {"a": {"type": "integer", "context": VIEW}},
            "additionalProperties": {
                "type": "object",
                "context": VIEW_EDIT,
                "properties": {
                    "x": {"type": "integer", "context": VIEW},
                    "y": {"type": "integer", "context": EDIT},
                },
            },
        },
        "view",
        {"a": 1, "b": {"x": 1}},
        id="additional-properties-schema-traversed",
    ),
    pytest.param(
        {"a": 1, "b": 2},
        {
            "type": "object",
            "properties": {"a": {"type": "integer", "context": EDIT}},
            "additionalProperties": False,
        },
        "view",
        {"b": 2},
        id="additional-properties-false-keeps-extra-keys",
    ),
    pytest.param(
        {"a": 1, "b": 2},
        {
            "anyOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "context": VIEW},
                        "b": {"type": "integer", "context": EDIT},
                    },
                },
            ]
        },
        "view",
        {"a": 1},
        id="any-of-matching-branch",
    ),
    pytest.param(
        {"a": "x", "b": 2},
        {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "context": VIEW},
                        "b": {"type": "integer", "context": EDIT},
                    },
                }
            ]
        },
        "view",
        {"a": "x", "b": 2},
        id="any-of-without-match-ignored",
    ),
    pytest.param(
        {"a": 1, "b": 2},
        {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "context": VIEW},
                        "b": {"type": "integer", "context": EDIT},
                    },
                },
                {
                    "type": "object",
                    "properties": {"a": {"type": "integer", "context": EDIT}},
                },
            ]
        },
        "view",
        {"a": 1},
        id="one-of-first-match-without-uniqueness-check",
    ),
    pytest.param(
        {"a": 1, "b": 2},
        {
            "oneOf": [
                {"type": "array"},
                {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "context": EDIT},
                        "b": {"type": "integer", "context": VIEW},
                    },
                },
            ]
        },
        "view",
        {"b": 2},
        id="one-of-second-branch",
    ),
    pytest.param(
        [1, 2],
        {
            "type": ["array", "object"],
            "items": {"type": "integer", "context": EDIT},
            "properties": {
                "a": {"type": "integer", "context": VIEW},
                "b": {"type": "integer", "context": EDIT},
            },
        },
        "view",
        [],
        id="type-list-list-treated-as-array",
    ),
    pytest.param(
        {"a": 1, "b": 2},
        {
            "type": ["array", "object"],
            "items": {"type": "integer", "context": EDIT},
            "properties": {
                "a": {"type": "integer", "context": VIEW},
                "b": {"type": "integer", "context": EDIT},
            },
        },
        "view",
        {"a": 1},
        id="type-list-map-treated-as-object",
    ),
    pytest.param(
        {"a": 1, "b": 2},
        {
            "type": ["object", "null"],
            "properties": {
                "a": {"type": "integer", "context": VIEW},
                "b": {"type": "integer", "context": EDIT},
            },
        },
        "view",
        {"a": 1},
        id="type-list-with-object",
    ),
    pytest.param(
        {"a": 1, "b": 2},
        {
            "properties": {
                "a": {"type": "integer", "context": VIEW},
                "b": {"type": "integer", "context": EDIT},
            }
        },
        "view",
        {"a": 1},
        id="properties-without-type-treated-as-object",
    ),
    pytest.param(
        [1, 2],
        {"items": {"type": "integer", "context": EDIT}},
        "view",
        [1, 2],
        id="no-type-and-no-properties-unchanged",
    ),
]


@pytest.mark.parametrize(("data", "schema", "context", "expected"), CONTEXT_CASES)
def test_filter_response_by_context_removes_what_the_context_excludes(
    data: Any, schema: dict[str, Any], context: str, expected: Any
) -> None:
    assert filter_response_by_context(data, schema, context) == expected


def test_filter_response_by_context_does_not_modify_its_input() -> None:
    data = {"first": "a", "second": "b", "nested": [{"a": 1}]}
    original = copy.deepcopy(data)
    filter_response_by_context(data, OBJECT_VIEW_EDIT_SCHEMA, "view")
    assert data == original


# ---------------------------------------------------------------------- _fields
FIELDS_DATA: dict[str, Any] = {
    "a": 0,
    "b": {"1": 1, "2": 2},
    "c": 3,
    "d": {"4": 4, "5": 5},
    "e": 6,
}

META_DATA: dict[str, Any] = {
    "id": 7,
    "title": "t",
    "meta": {"key1": 1, "key2": 2, "key3": 3},
}


@pytest.mark.parametrize(
    ("data", "fields", "expected"),
    [
        pytest.param(FIELDS_DATA, "a", {"a": 0}, id="single-field"),
        pytest.param(FIELDS_DATA, "b,c", {"b": {"1": 1, "2": 2}, "c": 3}, id="two-fields"),
        pytest.param(FIELDS_DATA, "c,a", {"a": 0, "c": 3}, id="data-order-kept"),
        pytest.param(FIELDS_DATA, "a b", {"a": 0, "b": {"1": 1, "2": 2}}, id="space-separated"),
        pytest.param(FIELDS_DATA, " a , c ", {"a": 0, "c": 3}, id="surrounding-whitespace-trimmed"),
        pytest.param(
            FIELDS_DATA,
            "b.1,c,d.5",
            {"b": {"1": 1}, "c": 3, "d": {"5": 5}},
            id="numeric-string-keys",
        ),
        pytest.param(FIELDS_DATA, "a.x", {"a": 0}, id="child-of-scalar-keeps-scalar"),
        pytest.param(FIELDS_DATA, "b.9", {"b": {}}, id="parent-with-absent-children-empty"),
        pytest.param(FIELDS_DATA, "missing", {}, id="unknown-field-only"),
        pytest.param(FIELDS_DATA, ",,", FIELDS_DATA, id="only-commas-means-no-filtering"),
        pytest.param(FIELDS_DATA, "", FIELDS_DATA, id="empty-string-means-no-filtering"),
        pytest.param(FIELDS_DATA, [], FIELDS_DATA, id="empty-list-means-no-filtering"),
        pytest.param(FIELDS_DATA, ["a", "c"], {"a": 0, "c": 3}, id="list-form"),
        pytest.param(
            FIELDS_DATA, ["b.2", "e"], {"b": {"2": 2}, "e": 6}, id="list-form-with-nested"
        ),
        pytest.param(META_DATA, "meta.key1", {"meta": {"key1": 1}}, id="nested-child"),
        pytest.param(
            META_DATA,
            "meta,meta.key1",
            {"meta": {"key1": 1, "key2": 2, "key3": 3}},
            id="parent-before-child-keeps-all",
        ),
        pytest.param(
            META_DATA,
            "meta.key1,meta",
            {"meta": {"key1": 1, "key2": 2, "key3": 3}},
            id="parent-after-child-keeps-all",
        ),
        pytest.param(
            META_DATA,
            "meta.key1,meta.key2",
            {"meta": {"key1": 1, "key2": 2}},
            id="siblings-accumulate",
        ),
        pytest.param(
            META_DATA,
            "meta,meta.key1,id",
            {"id": 7, "meta": {"key1": 1, "key2": 2, "key3": 3}},
            id="product-redundant-child-skipped-alone",
        ),
        pytest.param(
            {"a": {"b": {"c": 1, "d": 2}, "e": 3}},
            "a.b.c",
            {"a": {"b": {"c": 1}}},
            id="two-levels-deep",
        ),
        pytest.param(
            [{"a": 1, "b": 2}, {"a": 3, "b": 4}],
            "a",
            [{"a": 1}, {"a": 3}],
            id="list-filtered-item-by-item",
        ),
        pytest.param(
            [{"m": {"x": 1, "y": 2}}, {"m": "scalar"}],
            "m.x",
            [{"m": {"x": 1}}, {"m": "scalar"}],
            id="list-items-nested",
        ),
        pytest.param([], "a", [], id="empty-list-unchanged"),
    ],
)
def test_filter_response_fields_keeps_only_the_requested_fields(
    data: Any, fields: Any, expected: Any
) -> None:
    assert filter_response_fields(data, fields) == expected


def test_filter_response_fields_does_not_modify_its_input() -> None:
    data = copy.deepcopy(META_DATA)
    filter_response_fields(data, "meta.key1")
    assert data == META_DATA


@pytest.mark.parametrize(
    ("field", "fields", "expected"),
    [
        pytest.param("title", ["title"], True, id="exact-match"),
        pytest.param("title", ["id", "title"], True, id="exact-match-among-others"),
        pytest.param("title", ["title.raw"], True, id="parent-of-requested"),
        pytest.param("meta", ["meta.a.b"], True, id="grandparent-of-requested"),
        pytest.param("title.rendered", ["title"], True, id="child-of-requested"),
        pytest.param("meta.a.b", ["meta"], True, id="grandchild-of-requested"),
        pytest.param("content.rendered", ["content.raw"], False, id="siblings-not-matched"),
        pytest.param("tit", ["title"], False, id="tit-is-not-a-parent-of-title"),
        pytest.param("title", ["tit"], False, id="title-is-not-a-child-of-tit"),
        pytest.param("title.raw", ["tit"], False, id="prefix-without-dot"),
        pytest.param("title", ["id", "author"], False, id="not-requested"),
        pytest.param("title", [], False, id="nothing-requested"),
    ],
)
def test_is_field_included_matches_exact_parent_and_child_fields(
    field: str, fields: list[str], expected: bool
) -> None:
    assert is_field_included(field, fields) is expected


# ---------------------------------------------------------------------- _embed
@pytest.mark.parametrize(
    ("embed", "expected"),
    [
        pytest.param(None, True, id="absent"),
        pytest.param("", True, id="empty"),
        pytest.param(False, True, id="false"),
        pytest.param("0", True, id="string-0-is-falsy"),
        pytest.param([], True, id="empty-list"),
        pytest.param("true", True, id="string-true"),
        pytest.param("1", True, id="string-1"),
        pytest.param(" , ", True, id="only-separators"),
        pytest.param("false", ["false"], id="string-false-is-a-relation"),
        pytest.param("author", ["author"], id="one-relation"),
        pytest.param("author,replies", ["author", "replies"], id="two-relations"),
        pytest.param("author, replies up", ["author", "replies", "up"], id="commas-and-spaces"),
        pytest.param(["author", "wp:term"], ["author", "wp:term"], id="list"),
    ],
)
def test_parse_embed_param_gives_true_for_all_or_the_relation_names(
    embed: Any, expected: bool | list[str]
) -> None:
    assert parse_embed_param(embed) == expected
    assert type(parse_embed_param(embed)) is type(expected)
