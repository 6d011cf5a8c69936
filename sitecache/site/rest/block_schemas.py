"""The resource schemas of ``site/v2/block-types`` and ``site/v2/block-renderer``, as
WordPress 7.1 publishes them (``block-type``, ``rendered-block``; an empty PHP array written
as the JSON object its ``object`` type means).

The pieces that WordPress's schema holds more than once (a block example, its recursive inner
blocks, the category, icon and keywords a block type shares with its variations) are each built
by one function here; every call returns new objects, so no two places share a mutable dict.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["BLOCK_TYPE_SCHEMA", "RENDERED_BLOCK_SCHEMA"]

_BLOCK_NAME: Final = "^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$"
"""The pattern of a block type's name, ``namespace/name``."""


def _shown(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as a read-only field shown in every context (its keys first, then
    ``context`` and ``readonly``)."""
    return {**schema, "context": ["embed", "view", "edit"], "readonly": True}


def _nullable_string(description: str) -> dict[str, Any]:
    """A read-only string field that is ``null`` by default."""
    return _shown({"description": description, "type": ["string", "null"], "default": None})


def _handles(description: str) -> dict[str, Any]:
    """A read-only list of script or style handles, empty by default."""
    return _shown(
        {"description": description, "type": ["array"], "default": [], "items": {"type": "string"}}
    )


def _block_names(description: str) -> dict[str, Any]:
    """A read-only list of block type names, ``null`` by default."""
    return _shown(
        {
            "description": description,
            "type": ["array", "null"],
            "items": {"type": "string", "pattern": _BLOCK_NAME},
            "default": None,
        }
    )


def _category() -> dict[str, Any]:
    """A block type's (or variation's) category."""
    return _nullable_string("Block category.")


def _icon() -> dict[str, Any]:
    """A block type's (or variation's) icon."""
    return _nullable_string("Icon of block type.")


def _keywords() -> dict[str, Any]:
    """A block type's (or variation's) search keywords."""
    return _shown(
        {
            "description": "Block keywords.",
            "type": "array",
            "items": {"type": "string"},
            "default": [],
        }
    )


def _inner_blocks() -> dict[str, Any]:
    """The inner blocks of an example or a variation: a list of named blocks with their
    attributes, each with inner blocks of its own (the recursion stops at ``array``, as in
    WordPress)."""
    return {
        "description": "The list of inner blocks used in the example.",
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": {
                    "description": "The name of the inner block.",
                    "type": "string",
                    "pattern": _BLOCK_NAME,
                    "required": True,
                },
                "attributes": {
                    "description": "The attributes of the inner block.",
                    "type": "object",
                },
                "innerBlocks": {
                    "description": "A list of the inner block's own inner blocks. This is a "
                    "recursive definition following the parent innerBlocks schema.",
                    "type": "array",
                },
            },
        },
    }


def _example() -> dict[str, Any]:
    """A block type's (or variation's) example: attributes and inner blocks."""
    return _shown(
        {
            "description": "Block example.",
            "type": ["object", "null"],
            "default": None,
            "properties": {
                "attributes": {
                    "description": "The attributes used in the example.",
                    "type": "object",
                },
                "innerBlocks": _inner_blocks(),
            },
        }
    )


def _styles() -> dict[str, Any]:
    """A block type's style variations."""
    return _shown(
        {
            "description": "Block style variations.",
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {
                        "description": "Unique name identifying the style.",
                        "type": "string",
                        "required": True,
                    },
                    "label": {
                        "description": "The human-readable label for the style.",
                        "type": "string",
                    },
                    "inline_style": {
                        "description": "Inline CSS code that registers the CSS class required "
                        "for the style.",
                        "type": "string",
                    },
                    "style_handle": {
                        "description": "Contains the handle that defines the block style.",
                        "type": "string",
                    },
                },
            },
            "default": [],
        }
    )


def _variations() -> dict[str, Any]:
    """A block type's variations (each with its own category, icon, example and keywords)."""
    return {
        "description": "Block variations.",
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": {
                    "description": "The unique and machine-readable name.",
                    "type": "string",
                    "required": True,
                },
                "title": {
                    "description": "A human-readable variation title.",
                    "type": "string",
                    "required": True,
                },
                "description": {
                    "description": "A detailed variation description.",
                    "type": "string",
                    "required": False,
                },
                "category": _category(),
                "icon": _icon(),
                "isDefault": {
                    "description": "Indicates whether the current variation is the default one.",
                    "type": "boolean",
                    "required": False,
                    "default": False,
                },
                "attributes": {
                    "description": "The initial values for attributes.",
                    "type": "object",
                },
                "innerBlocks": _inner_blocks(),
                "example": _example(),
                "scope": {
                    "description": "The list of scopes where the variation is applicable. When "
                    "not provided, it assumes all available scopes.",
                    "type": ["array", "null"],
                    "default": None,
                    "items": {"type": "string", "enum": ["block", "inserter", "transform"]},
                    "readonly": True,
                },
                "keywords": _keywords(),
            },
        },
        "readonly": True,
        "context": ["embed", "view", "edit"],
        "default": None,
    }


def _block_type_schema() -> dict[str, Any]:
    """WordPress's ``block-type`` schema."""
    return {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "title": "block-type",
        "type": "object",
        "properties": {
            "api_version": _shown(
                {"description": "Version of block API.", "type": "integer", "default": 1}
            ),
            "title": _shown(
                {"description": "Title of block type.", "type": "string", "default": ""}
            ),
            "name": _shown(
                {
                    "description": "Unique name identifying the block type.",
                    "type": "string",
                    "pattern": _BLOCK_NAME,
                    "required": True,
                }
            ),
            "description": _shown(
                {"description": "Description of block type.", "type": "string", "default": ""}
            ),
            "icon": _icon(),
            "attributes": _shown(
                {
                    "description": "Block attributes.",
                    "type": ["object", "null"],
                    "properties": {},
                    "default": None,
                    "additionalProperties": {"type": "object"},
                }
            ),
            "provides_context": _shown(
                {
                    "description": "Context provided by blocks of this type.",
                    "type": "object",
                    "properties": {},
                    "additionalProperties": {"type": "string"},
                    "default": {},
                }
            ),
            "uses_context": _shown(
                {
                    "description": "Context values inherited by blocks of this type.",
                    "type": "array",
                    "default": [],
                    "items": {"type": "string"},
                }
            ),
            "selectors": _shown(
                {
                    "description": "Custom CSS selectors.",
                    "type": "object",
                    "default": {},
                    "properties": {},
                }
            ),
            "supports": _shown(
                {
                    "description": "Block supports.",
                    "type": "object",
                    "default": {},
                    "properties": {},
                }
            ),
            "category": _category(),
            "is_dynamic": _shown(
                {
                    "description": "Is the block dynamically rendered.",
                    "type": "boolean",
                    "default": False,
                }
            ),
            "editor_script_handles": _handles("Editor script handles."),
            "script_handles": _handles("Public facing and editor script handles."),
            "view_script_handles": _handles("Public facing script handles."),
            "view_script_module_ids": _handles("Public facing script module IDs."),
            "editor_style_handles": _handles("Editor style handles."),
            "style_handles": _handles("Public facing and editor style handles."),
            "view_style_handles": _handles("Public facing style handles."),
            "styles": _styles(),
            "variations": _variations(),
            "textdomain": _nullable_string("Public text domain."),
            "parent": _block_names("Parent blocks."),
            "ancestor": _block_names("Ancestor blocks."),
            "allowed_blocks": _block_names("Allowed child block types."),
            "keywords": _keywords(),
            "example": _example(),
            "block_hooks": _shown(
                {
                    "description": "This block is automatically inserted near any occurrence of "
                    "the block types used as keys of this map, into a relative position given "
                    "by the corresponding value.",
                    "type": "object",
                    "patternProperties": {
                        _BLOCK_NAME: {
                            "type": "string",
                            "enum": ["before", "after", "first_child", "last_child"],
                        }
                    },
                    "default": {},
                }
            ),
            "editor_script": _nullable_string(
                "Editor script handle. DEPRECATED: Use `editor_script_handles` instead."
            ),
            "script": _nullable_string(
                "Public facing and editor script handle. DEPRECATED: Use `script_handles` instead."
            ),
            "view_script": _nullable_string(
                "Public facing script handle. DEPRECATED: Use `view_script_handles` instead."
            ),
            "editor_style": _nullable_string(
                "Editor style handle. DEPRECATED: Use `editor_style_handles` instead."
            ),
            "style": _nullable_string(
                "Public facing and editor style handle. DEPRECATED: Use `style_handles` instead."
            ),
        },
    }


BLOCK_TYPE_SCHEMA: Final[dict[str, Any]] = _block_type_schema()

RENDERED_BLOCK_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/schema#",
    "title": "rendered-block",
    "type": "object",
    "properties": {
        "rendered": {
            "description": "The rendered block.",
            "type": "string",
            "required": True,
            "context": ["edit"],
        }
    },
}
