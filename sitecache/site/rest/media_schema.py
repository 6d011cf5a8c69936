"""The JSON schema of a ``site/v2`` attachment (WordPress's attachments controller schema)."""

from __future__ import annotations

from typing import Any, Final

from sitecache.site.models import POST_STATUSES
from sitecache.site.rest.posts_schema import post_schema

__all__ = ["ATTACHMENT_STATUSES", "media_schema"]

_VIEW_EDIT: Final = ["view", "edit"]
_ALL: Final = ["view", "edit", "embed"]
ATTACHMENT_STATUSES: Final = ("inherit", "private", "trash")
"""The statuses a media listing may ask for (its ``status`` argument's items)."""

# What a page has and an attachment has not (its caption and description replace the
# excerpt and content; ``post`` replaces ``parent``).
_DROPPED: Final = ("password", "content", "excerpt", "parent", "menu_order")


def _text(description: str, noun: str, contexts: list[str]) -> dict[str, Any]:
    return {
        "description": f"The attachment {noun}.",
        "type": "object",
        "context": contexts,
        "arg_options": {"type": ["string", "object"], "properties": {"raw": {"type": "string"}}},
        "properties": {
            "raw": {
                "description": f"{description} for the attachment, as it exists in the database.",
                "type": "string",
                "context": ["edit"],
            },
            "rendered": {
                "description": f"HTML {noun} for the attachment, transformed for display.",
                "type": "string",
                "context": contexts,
                "readonly": True,
            },
        },
    }


def media_schema() -> dict[str, Any]:
    """The resource schema of an attachment.

    ``status`` also lists ``inherit``, the status every attachment has (WordPress's schema
    leaves it out of the enum although its answers carry it; ours validate against it).
    """
    schema = post_schema("page")
    properties: dict[str, Any] = {
        name: value for name, value in schema["properties"].items() if name not in _DROPPED
    }
    properties["status"] = {**properties["status"], "enum": ["inherit", *POST_STATUSES]}
    properties.update(
        {
            "alt_text": {
                "description": "Alternative text to display when attachment is not displayed.",
                "type": "string",
                "context": _ALL,
            },
            "caption": _text("Caption", "caption", _ALL),
            "description": _text("Description", "description", _VIEW_EDIT),
            "media_type": {
                "description": "Attachment type.",
                "type": "string",
                "enum": ["image", "file"],
                "context": _ALL,
                "readonly": True,
            },
            "mime_type": {
                "description": "The attachment MIME type.",
                "type": "string",
                "context": _ALL,
                "readonly": True,
            },
            "media_details": {
                "description": "Details about the media file, specific to its type.",
                "type": "object",
                "context": _ALL,
                "readonly": True,
            },
            "post": {
                "description": "The ID for the associated post of the attachment.",
                "type": "integer",
                "context": _VIEW_EDIT,
            },
            "source_url": {
                "description": "URL to the original attachment file.",
                "type": "string",
                "format": "uri",
                "context": _ALL,
                "readonly": True,
            },
            "missing_image_sizes": {
                "description": "List of the missing image sizes of the attachment.",
                "type": "array",
                "items": {"type": "string"},
                "context": ["edit"],
                "readonly": True,
            },
            "filename": {
                "description": "Original attachment file name.",
                "type": "string",
                "context": _VIEW_EDIT,
                "readonly": True,
            },
            "filesize": {
                "description": "Attachment file size in bytes.",
                "type": ["integer", "null"],
                "context": _VIEW_EDIT,
                "readonly": True,
            },
        }
    )
    return {**schema, "title": "attachment", "properties": properties}
