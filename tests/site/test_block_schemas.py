"""The ``block-type`` schema's repeated pieces: built once, the same wherever they stand."""

from __future__ import annotations

from typing import Any

from sitecache.errors import RestError
from sitecache.schema import validate_value_from_schema
from sitecache.site.rest.block_schemas import BLOCK_TYPE_SCHEMA

PROPERTIES: dict[str, Any] = BLOCK_TYPE_SCHEMA["properties"]
VARIATION: dict[str, Any] = PROPERTIES["variations"]["items"]["properties"]


def test_a_variation_shares_the_block_types_example_category_icon_and_keywords() -> None:
    for name in ("example", "category", "icon", "keywords"):
        assert VARIATION[name] == PROPERTIES[name], name
        # Equal but not one object: changing one place's schema leaves the other alone.
        assert VARIATION[name] is not PROPERTIES[name], name
    assert VARIATION["innerBlocks"] == PROPERTIES["example"]["properties"]["innerBlocks"]


def test_an_examples_inner_blocks_are_named_blocks_with_inner_blocks() -> None:
    example = PROPERTIES["example"]
    nested = {
        "attributes": {"content": "x"},
        "innerBlocks": [
            {"name": "core/group", "innerBlocks": [{"name": "core/paragraph"}]},
        ],
    }
    assert validate_value_from_schema(nested, example, "example") is True
    assert validate_value_from_schema(None, example, "example") is True
    bad_name = validate_value_from_schema(
        {"innerBlocks": [{"name": "Paragraph"}]}, example, "example"
    )
    assert isinstance(bad_name, RestError)
    assert bad_name.code == "rest_invalid_pattern"
    nameless = validate_value_from_schema({"innerBlocks": [{"attributes": {}}]}, example, "example")
    assert isinstance(nameless, RestError)
    assert nameless.code == "rest_property_required"
