"""The JSON schema of a ``site/v2`` post or page (WordPress's ``get_item_schema``)."""

from __future__ import annotations

from typing import Any, Final

from sitecache.site.models import POST_STATUSES

__all__ = ["post_schema"]

_VIEW_EDIT: Final = ["view", "edit"]
_ALL: Final = ["view", "edit", "embed"]
_TEXT_ARG: Final = {
    "type": ["string", "object"],
    "properties": {"raw": {"type": "string"}},
}


def _rendered(description: str, *, protected: bool = False, embed: bool = True) -> dict[str, Any]:
    contexts = _ALL if embed else _VIEW_EDIT
    properties: dict[str, Any] = {
        "raw": {
            "description": f"{description}, as it exists in the database.",
            "type": "string",
            "context": ["edit"],
        },
        "rendered": {
            "description": f"HTML {description.lower()}, transformed for display.",
            "type": "string",
            "context": contexts,
            "readonly": True,
        },
    }
    if protected:
        properties["protected"] = {
            "description": f"Whether the {description.lower()} is protected with a password.",
            "type": "boolean",
            "context": contexts,
            "readonly": True,
        }
    return {
        "description": description,
        "type": "object",
        "context": contexts,
        "arg_options": dict(_TEXT_ARG),
        "properties": properties,
    }


def post_schema(post_type: str) -> dict[str, Any]:
    """The resource schema of a post type (``post`` or ``page``)."""
    properties: dict[str, Any] = {
        **_identity_properties(),
        **_state_properties(),
        **_content_properties(),
        **_type_properties(post_type),
    }
    return {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "title": post_type,
        "type": "object",
        "properties": properties,
    }


def _identity_properties() -> dict[str, Any]:
    """``date`` to ``link``: when it was published, its ids and where it lives."""
    return {
        "date": {
            "description": "The date the post was published, in the site's timezone.",
            "type": ["string", "null"],
            "format": "date-time",
            "context": _ALL,
        },
        "date_gmt": {
            "description": "The date the post was published, as GMT.",
            "type": ["string", "null"],
            "format": "date-time",
            "context": _VIEW_EDIT,
        },
        "guid": {
            "description": "The globally unique identifier for the post.",
            "type": "object",
            "context": _VIEW_EDIT,
            "readonly": True,
            "properties": {
                "raw": {
                    "description": "GUID for the post, as it exists in the database.",
                    "type": "string",
                    "context": ["edit"],
                    "readonly": True,
                },
                "rendered": {
                    "description": "GUID for the post, transformed for display.",
                    "type": "string",
                    "context": _VIEW_EDIT,
                    "readonly": True,
                },
            },
        },
        "id": {
            "description": "Unique identifier for the post.",
            "type": "integer",
            "context": _ALL,
            "readonly": True,
        },
        "link": {
            "description": "URL to the post.",
            "type": "string",
            "format": "uri",
            "context": _ALL,
            "readonly": True,
        },
    }


def _state_properties() -> dict[str, Any]:
    """``modified`` to ``type``: when it last changed, its slug, status and type."""
    return {
        "modified": {
            "description": "The date the post was last modified, in the site's timezone.",
            "type": "string",
            "format": "date-time",
            "context": _VIEW_EDIT,
            "readonly": True,
        },
        "modified_gmt": {
            "description": "The date the post was last modified, as GMT.",
            "type": "string",
            "format": "date-time",
            "context": _VIEW_EDIT,
            "readonly": True,
        },
        "slug": {
            "description": "An alphanumeric identifier for the post unique to its type.",
            "type": "string",
            "context": _ALL,
        },
        "status": {
            "description": "A named status for the post.",
            "type": "string",
            "enum": list(POST_STATUSES),
            "context": _VIEW_EDIT,
        },
        "type": {
            "description": "Type of post.",
            "type": "string",
            "context": _ALL,
            "readonly": True,
        },
    }


def _content_properties() -> dict[str, Any]:
    """``password`` to ``meta``: what the post says and who may comment."""
    return {
        "password": {
            "description": "A password to protect access to the content and excerpt.",
            "type": "string",
            "context": ["edit"],
        },
        "title": _rendered(
            "The title for the post."[:-1].replace("The title for the post", "Title")
        ),
        "content": _rendered("Content", protected=True, embed=False),
        "author": {
            "description": "The ID for the author of the post.",
            "type": "integer",
            "context": _ALL,
        },
        "excerpt": _rendered("Excerpt", protected=True),
        "featured_media": {
            "description": "The ID of the featured media for the post.",
            "type": "integer",
            "context": _ALL,
        },
        "comment_status": {
            "description": "Whether or not comments are open on the post.",
            "type": "string",
            "enum": ["open", "closed"],
            "context": _VIEW_EDIT,
        },
        "ping_status": {
            "description": "Whether or not the post can be pinged.",
            "type": "string",
            "enum": ["open", "closed"],
            "context": _VIEW_EDIT,
        },
        "template": {
            "description": "The theme file to use to display the post.",
            "type": "string",
            "context": _VIEW_EDIT,
        },
        "meta": {
            "description": "Meta fields.",
            "type": "object",
            "context": _VIEW_EDIT,
            "properties": {},
        },
    }


def _type_properties(post_type: str) -> dict[str, Any]:
    """A post's format, stickiness and terms; a page's parent and menu order."""
    properties: dict[str, Any] = {}
    if post_type == "post":
        properties["format"] = {
            "description": "The format for the post.",
            "type": "string",
            "enum": ["standard"],
            "context": _VIEW_EDIT,
        }
        properties["sticky"] = {
            "description": "Whether or not the post should be treated as sticky.",
            "type": "boolean",
            "context": _VIEW_EDIT,
        }
        for name, label in (("categories", "category"), ("tags", "post_tag")):
            properties[name] = {
                "description": f"The terms assigned to the post in the {label} taxonomy.",
                "type": "array",
                "items": {"type": "integer"},
                "context": _VIEW_EDIT,
            }
    else:
        properties["parent"] = {
            "description": "The ID for the parent of the post.",
            "type": "integer",
            "context": _VIEW_EDIT,
        }
        properties["menu_order"] = {
            "description": "The order of the post in relation to other posts.",
            "type": "integer",
            "context": _VIEW_EDIT,
        }
    return properties
