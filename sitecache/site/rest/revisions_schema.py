"""The JSON schemas of a post's or page's revisions and autosaves (WordPress's
``WP_REST_Revisions_Controller::get_item_schema`` and the autosaves controller's), and the
arguments of their routes."""

from __future__ import annotations

import copy
from typing import Any, Final

from sitecache.rest.collection_args import collection_params, id_list_param

__all__ = [
    "REVISION_ITEM_ARGS",
    "autosave_schema",
    "revision_collection_params",
    "revision_schema",
]

_VIEW_EDIT: Final = ["view", "edit"]
_ALL: Final = ["view", "edit", "embed"]
_FROM_PARENT: Final = ("guid", "title", "content", "excerpt", "meta")
"""The properties a revision's schema copies from its post type's schema (as WordPress does)."""

REVISION_ITEM_ARGS: Final[dict[str, Any]] = {
    "parent": {"description": "The ID for the parent of the revision.", "type": "integer"},
    "id": {"description": "Unique identifier for the revision.", "type": "integer"},
}
"""The placeholders of ``/<base>/<parent>/revisions/<id>``."""


def _without_arg_options(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a property schema without ``arg_options`` (a revision is never written)."""
    found = copy.deepcopy(schema)
    found.pop("arg_options", None)
    return found


def revision_schema(post_type: str, parent_schema: dict[str, Any]) -> dict[str, Any]:
    """The ``<post_type>-revision`` schema: the revision's own fields, then the guid, title,
    content, excerpt and meta of ``parent_schema`` (the post type's schema)."""
    properties: dict[str, Any] = {
        "author": {
            "description": "The ID for the author of the revision.",
            "type": "integer",
            "context": _ALL,
        },
        "date": {
            "description": "The date the revision was published, in the site's timezone.",
            "type": "string",
            "format": "date-time",
            "context": _ALL,
        },
        "date_gmt": {
            "description": "The date the revision was published, as GMT.",
            "type": "string",
            "format": "date-time",
            "context": _VIEW_EDIT,
        },
        "guid": {},
        "id": {
            "description": "Unique identifier for the revision.",
            "type": "integer",
            "context": _ALL,
        },
        "modified": {
            "description": "The date the revision was last modified, in the site's timezone.",
            "type": "string",
            "format": "date-time",
            "context": _VIEW_EDIT,
        },
        "modified_gmt": {
            "description": "The date the revision was last modified, as GMT.",
            "type": "string",
            "format": "date-time",
            "context": _VIEW_EDIT,
        },
        "parent": {
            "description": "The ID for the parent of the revision.",
            "type": "integer",
            "context": _ALL,
        },
        "slug": {
            "description": "An alphanumeric identifier for the revision unique to its type.",
            "type": "string",
            "context": _ALL,
        },
    }
    for name in _FROM_PARENT:
        properties[name] = _without_arg_options(parent_schema["properties"][name])
    return {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "title": f"{post_type}-revision",
        "type": "object",
        "properties": properties,
    }


def autosave_schema(post_type: str, parent_schema: dict[str, Any]) -> dict[str, Any]:
    """The revision schema plus ``preview_link`` (edit context), as WordPress's autosaves."""
    schema = revision_schema(post_type, parent_schema)
    schema["properties"]["preview_link"] = {
        "description": "Preview link for the post.",
        "type": "string",
        "format": "uri",
        "context": ["edit"],
        "readonly": True,
    }
    return schema


def revision_collection_params() -> dict[str, Any]:
    """The query arguments of ``GET /<base>/<parent>/revisions``: WordPress's, where
    ``per_page`` has no default (every revision) and ``offset`` no minimum."""
    params = collection_params()
    del params["per_page"]["default"]
    params["offset"] = {
        "description": "Offset the result set by a specific number of items.",
        "type": "integer",
    }
    params["exclude"] = id_list_param("Ensure result set excludes specific IDs.")
    params["include"] = id_list_param("Limit result set to specific IDs.")
    params["order"] = {
        "description": "Order sort attribute ascending or descending.",
        "type": "string",
        "default": "desc",
        "enum": ["asc", "desc"],
    }
    params["orderby"] = {
        "description": "Sort collection by object attribute.",
        "type": "string",
        "default": "date",
        "enum": ["date", "id", "include", "relevance", "slug", "include_slugs", "title"],
    }
    return params
