"""The resource schemas of ``site/v2/block-types`` and ``site/v2/block-renderer``, as
WordPress 7.1 publishes them (``block-type``, ``rendered-block``; an empty PHP array written
as the JSON object its ``object`` type means)."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["BLOCK_TYPE_SCHEMA", "RENDERED_BLOCK_SCHEMA"]

BLOCK_TYPE_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "block-type",
    "type": "object",
    "properties": {
        "api_version": {
            "description": "Version of block API.",
            "type": "integer",
            "default": 1,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "title": {
            "description": "Title of block type.",
            "type": "string",
            "default": "",
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "name": {
            "description": "Unique name identifying the block type.",
            "type": "string",
            "pattern": "^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$",
            "required": True,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "description": {
            "description": "Description of block type.",
            "type": "string",
            "default": "",
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "icon": {
            "description": "Icon of block type.",
            "type": ["string", "null"],
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "attributes": {
            "description": "Block attributes.",
            "type": ["object", "null"],
            "properties": {},
            "default": None,
            "additionalProperties": {"type": "object"},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "provides_context": {
            "description": "Context provided by blocks of this type.",
            "type": "object",
            "properties": {},
            "additionalProperties": {"type": "string"},
            "default": {},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "uses_context": {
            "description": "Context values inherited by blocks of this type.",
            "type": "array",
            "default": [],
            "items": {"type": "string"},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "selectors": {
            "description": "Custom CSS selectors.",
            "type": "object",
            "default": {},
            "properties": {},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "supports": {
            "description": "Block supports.",
            "type": "object",
            "default": {},
            "properties": {},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "category": {
            "description": "Block category.",
            "type": ["string", "null"],
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "is_dynamic": {
            "description": "Is the block dynamically rendered.",
            "type": "boolean",
            "default": False,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "editor_script_handles": {
            "description": "Editor script handles.",
            "type": ["array"],
            "default": [],
            "items": {"type": "string"},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "script_handles": {
            "description": "Public facing and editor script handles.",
            "type": ["array"],
            "default": [],
            "items": {"type": "string"},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "view_script_handles": {
            "description": "Public facing script handles.",
            "type": ["array"],
            "default": [],
            "items": {"type": "string"},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "view_script_module_ids": {
            "description": "Public facing script module IDs.",
            "type": ["array"],
            "default": [],
            "items": {"type": "string"},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "editor_style_handles": {
            "description": "Editor style handles.",
            "type": ["array"],
            "default": [],
            "items": {"type": "string"},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "style_handles": {
            "description": "Public facing and editor style handles.",
            "type": ["array"],
            "default": [],
            "items": {"type": "string"},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "view_style_handles": {
            "description": "Public facing style handles.",
            "type": ["array"],
            "default": [],
            "items": {"type": "string"},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "styles": {
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
                        "description": "Inline CSS "
                        "code that "
                        "registers the "
                        "CSS class "
                        "required for "
                        "the style.",
                        "type": "string",
                    },
                    "style_handle": {
                        "description": "Contains the handle that defines the block style.",
                        "type": "string",
                    },
                },
            },
            "default": [],
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "variations": {
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
                    "category": {
                        "description": "Block category.",
                        "type": ["string", "null"],
                        "default": None,
                        "context": ["embed", "view", "edit"],
                        "readonly": True,
                    },
                    "icon": {
                        "description": "Icon of block type.",
                        "type": ["string", "null"],
                        "default": None,
                        "context": ["embed", "view", "edit"],
                        "readonly": True,
                    },
                    "isDefault": {
                        "description": "Indicates "
                        "whether the "
                        "current "
                        "variation is "
                        "the default "
                        "one.",
                        "type": "boolean",
                        "required": False,
                        "default": False,
                    },
                    "attributes": {
                        "description": "The initial values for attributes.",
                        "type": "object",
                    },
                    "innerBlocks": {
                        "description": "The list of inner blocks used in the example.",
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {
                                    "description": "The name of the inner block.",
                                    "type": "string",
                                    "pattern": "^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$",
                                    "required": True,
                                },
                                "attributes": {
                                    "description": "The attributes of the inner block.",
                                    "type": "object",
                                },
                                "innerBlocks": {
                                    "description": "A "
                                    "list "
                                    "of "
                                    "the "
                                    "inner "
                                    "block's "
                                    "own "
                                    "inner "
                                    "blocks. "
                                    "This "
                                    "is "
                                    "a "
                                    "recursive "
                                    "definition "
                                    "following "
                                    "the "
                                    "parent "
                                    "innerBlocks "
                                    "schema.",
                                    "type": "array",
                                },
                            },
                        },
                    },
                    "example": {
                        "description": "Block example.",
                        "type": ["object", "null"],
                        "default": None,
                        "properties": {
                            "attributes": {
                                "description": "The attributes used in the example.",
                                "type": "object",
                            },
                            "innerBlocks": {
                                "description": "The list of inner blocks used in the example.",
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "name": {
                                            "description": "The name of the inner block.",
                                            "type": "string",
                                            "pattern": "^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$",
                                            "required": True,
                                        },
                                        "attributes": {
                                            "description": "The attributes of the inner block.",
                                            "type": "object",
                                        },
                                        "innerBlocks": {
                                            "description": "A "
                                            "list "
                                            "of "
                                            "the "
                                            "inner "
                                            "block's "
                                            "own "
                                            "inner "
                                            "blocks. "
                                            "This "
                                            "is "
                                            "a "
                                            "recursive "
                                            "definition "
                                            "following "
                                            "the "
                                            "parent "
                                            "innerBlocks "
                                            "schema.",
                                            "type": "array",
                                        },
                                    },
                                },
                            },
                        },
                        "context": ["embed", "view", "edit"],
                        "readonly": True,
                    },
                    "scope": {
                        "description": "The list of "
                        "scopes where the "
                        "variation is "
                        "applicable. When "
                        "not provided, it "
                        "assumes all "
                        "available "
                        "scopes.",
                        "type": ["array", "null"],
                        "default": None,
                        "items": {"type": "string", "enum": ["block", "inserter", "transform"]},
                        "readonly": True,
                    },
                    "keywords": {
                        "description": "Block keywords.",
                        "type": "array",
                        "items": {"type": "string"},
                        "default": [],
                        "context": ["embed", "view", "edit"],
                        "readonly": True,
                    },
                },
            },
            "readonly": True,
            "context": ["embed", "view", "edit"],
            "default": None,
        },
        "textdomain": {
            "description": "Public text domain.",
            "type": ["string", "null"],
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "parent": {
            "description": "Parent blocks.",
            "type": ["array", "null"],
            "items": {"type": "string", "pattern": "^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$"},
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "ancestor": {
            "description": "Ancestor blocks.",
            "type": ["array", "null"],
            "items": {"type": "string", "pattern": "^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$"},
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "allowed_blocks": {
            "description": "Allowed child block types.",
            "type": ["array", "null"],
            "items": {"type": "string", "pattern": "^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$"},
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "keywords": {
            "description": "Block keywords.",
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "example": {
            "description": "Block example.",
            "type": ["object", "null"],
            "default": None,
            "properties": {
                "attributes": {
                    "description": "The attributes used in the example.",
                    "type": "object",
                },
                "innerBlocks": {
                    "description": "The list of inner blocks used in the example.",
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {
                                "description": "The name of the inner block.",
                                "type": "string",
                                "pattern": "^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$",
                                "required": True,
                            },
                            "attributes": {
                                "description": "The attributes of the inner block.",
                                "type": "object",
                            },
                            "innerBlocks": {
                                "description": "A "
                                "list "
                                "of "
                                "the "
                                "inner "
                                "block's "
                                "own "
                                "inner "
                                "blocks. "
                                "This "
                                "is "
                                "a "
                                "recursive "
                                "definition "
                                "following "
                                "the "
                                "parent "
                                "innerBlocks "
                                "schema.",
                                "type": "array",
                            },
                        },
                    },
                },
            },
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "block_hooks": {
            "description": "This block is automatically inserted near any "
            "occurrence of the block types used as keys of this "
            "map, into a relative position given by the "
            "corresponding value.",
            "type": "object",
            "patternProperties": {
                "^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$": {
                    "type": "string",
                    "enum": ["before", "after", "first_child", "last_child"],
                }
            },
            "default": {},
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "editor_script": {
            "description": "Editor script handle. DEPRECATED: Use `editor_script_handles` instead.",
            "type": ["string", "null"],
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "script": {
            "description": "Public facing and editor script handle. DEPRECATED: Use "
            "`script_handles` instead.",
            "type": ["string", "null"],
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "view_script": {
            "description": "Public facing script handle. DEPRECATED: Use "
            "`view_script_handles` instead.",
            "type": ["string", "null"],
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "editor_style": {
            "description": "Editor style handle. DEPRECATED: Use `editor_style_handles` instead.",
            "type": ["string", "null"],
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
        "style": {
            "description": "Public facing and editor style handle. DEPRECATED: Use "
            "`style_handles` instead.",
            "type": ["string", "null"],
            "default": None,
            "context": ["embed", "view", "edit"],
            "readonly": True,
        },
    },
}

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
