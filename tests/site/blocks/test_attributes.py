"""Block attributes are validated and sanitized by the schema engine, with its codes."""

from __future__ import annotations

from typing import Any

import pytest

from sitecache.errors import RestError
from sitecache.site.blocks import BlockType, BlockTypeError, BlockTypeRegistry, core_block_types

CORE = {block_type.name: block_type for block_type in core_block_types()}

# (block, attributes, code, message) for refused attributes.
REFUSED: list[tuple[str, Any, str, str]] = [
    ("core/latest-posts", {"postsToShow": "many"}, "rest_invalid_type",
     "attributes[postsToShow] is not of type integer."),
    ("core/latest-posts", {"postsToShow": 0}, "rest_invalid_param",
     "attributes[postsToShow] must be between 1 (inclusive) and 100 (inclusive)"),
    ("core/latest-posts", {"postsToShow": 2.5}, "rest_invalid_type",
     "attributes[postsToShow] is not of type integer."),
    ("core/latest-posts", {"order": "up"}, "rest_invalid_param",
     "attributes[order] is not one of asc and desc."),
    ("core/latest-posts", {"orderBy": "rand"}, "rest_invalid_param",
     "attributes[orderBy] is not one of date and title."),
    ("core/latest-posts", {"categories": [{"name": "x"}]}, "rest_property_required",
     "id is a required property of attributes[categories][0]."),
    ("core/latest-posts", {"displayPostDate": "maybe"}, "rest_invalid_type",
     "attributes[displayPostDate] is not of type boolean."),
    ("core/latest-posts", {"colour": "red"}, "rest_invalid_param",
     "colour is not a valid property of Object."),
    ("core/latest-posts", {"className": "a\"b"}, "rest_invalid_pattern",
     "attributes[className] does not match pattern ^[A-Za-z0-9_ -]*$."),
    ("core/latest-posts", 5, "rest_invalid_type", "attributes is not of type object."),
    ("core/archives", {"type": "weekly"}, "rest_invalid_param",
     "attributes[type] is not one of monthly and yearly."),
    ("core/categories", {"taxonomy": "nav_menu"}, "rest_invalid_param",
     "attributes[taxonomy] is not one of category and post_tag."),
    ("core/search", {"label": "x" * 201}, "rest_invalid_param",
     "attributes[label] must be at most 200 characters long."),
    ("core/search", {"buttonPosition": "left"}, "rest_invalid_param",
     "attributes[buttonPosition] is not one of button-outside, button-inside, and no-button."),
    ("core/tag-cloud", {"smallestFontSize": "1px;color:red"}, "rest_invalid_pattern",
     "attributes[smallestFontSize] does not match pattern ^(\\d+(?:\\.\\d+)?)(pt|px|em|rem|%)$."),
    ("core/tag-cloud", {"numberOfTags": 101}, "rest_invalid_param",
     "attributes[numberOfTags] must be between 1 (inclusive) and 100 (inclusive)"),
]  # fmt: skip


@pytest.mark.parametrize(("block", "attributes", "code", "message"), REFUSED)
def test_refused_attributes_name_the_engines_code_and_message(
    block: str, attributes: Any, code: str, message: str
) -> None:
    error = CORE[block].prepare_attributes(attributes)
    assert isinstance(error, RestError)
    assert (error.code, error.message) == (code, message)


# (block, attributes, expected subset of the prepared attributes)
ACCEPTED: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("core/latest-posts", {}, {"postsToShow": 5, "order": "desc", "orderBy": "date"}),
    ("core/latest-posts", {"postsToShow": "3"}, {"postsToShow": 3}),
    ("core/latest-posts", {"displayPostDate": "true"}, {"displayPostDate": True}),
    ("core/latest-posts", {"categories": [{"id": "4", "value": "News"}]},
     {"categories": [{"id": 4, "value": "News"}]}),
    ("core/archives", {"showPostCounts": 1}, {"showPostCounts": True, "type": "monthly"}),
    ("core/tag-cloud", {"largestFontSize": "2.5em"},
     {"largestFontSize": "2.5em", "smallestFontSize": "8pt", "numberOfTags": 45}),
    ("core/search", {"showLabel": "0"}, {"showLabel": False, "label": "Search"}),
]  # fmt: skip


@pytest.mark.parametrize(("block", "attributes", "expected"), ACCEPTED)
def test_accepted_attributes_are_sanitized_and_completed_with_defaults(
    block: str, attributes: dict[str, Any], expected: dict[str, Any]
) -> None:
    prepared = CORE[block].prepare_attributes(attributes)
    assert isinstance(prepared, dict)
    assert {key: prepared[key] for key in expected} == expected


def _render(attributes: dict[str, Any], inner: str, block: Any) -> str:
    return "x"


MISUSE: list[tuple[str, dict[str, Any], str]] = [
    ("NoNamespace", {}, "namespace/name"),
    ("core/Upper", {}, "namespace/name"),
    ("my/block", {"size": {"default": 3}}, "no valid type"),
    ("my/block", {"size": {"type": "integr"}}, "no valid type"),
    ("my/block", {"size": {"type": "integer", "default": "big"}}, "default of 'size'"),
    ("my/block", {"size": "integer"}, "not a schema"),
]


@pytest.mark.parametrize(("name", "attributes", "message"), MISUSE)
def test_registering_a_malformed_block_type_raises_at_registration(
    name: str, attributes: dict[str, Any], message: str
) -> None:
    registry = BlockTypeRegistry()
    with pytest.raises(BlockTypeError, match=message):
        registry.register(BlockType(name, attributes, _render))


def test_a_name_is_registered_once() -> None:
    registry = BlockTypeRegistry()
    registry.register(BlockType("my/block", {}, _render))
    with pytest.raises(BlockTypeError, match="already registered"):
        registry.register(BlockType("my/block", {}, _render))
    assert registry.unregister("my/block") is not None
    assert "my/block" not in registry
