"""The JSON schemas of the ``site/v2`` routes describing the site: types, statuses,
taxonomies, search results and settings."""

from __future__ import annotations

from typing import Any, Final

from sitecache.site.options import OPTION_SCHEMAS

__all__ = ["SEARCH_SCHEMA", "SETTINGS_SCHEMA", "STATUS_SCHEMA", "TAXONOMY_SCHEMA", "TYPE_SCHEMA"]

_ALL: Final = ["view", "edit", "embed"]
_VIEW_EDIT: Final = ["view", "edit"]
_EDIT: Final = ["edit"]


def _prop(kind: Any, description: str, context: list[str], **extra: Any) -> dict[str, Any]:
    return {"description": description, "type": kind, "context": context, "readonly": True, **extra}


TYPE_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "type",
    "type": "object",
    "properties": {
        "capabilities": _prop("object", "All capabilities used by the post type.", _EDIT),
        "description": _prop(
            "string", "A human-readable description of the post type.", _VIEW_EDIT
        ),
        "hierarchical": _prop(
            "boolean", "Whether or not the post type should have children.", _VIEW_EDIT
        ),
        "viewable": _prop("boolean", "Whether or not the post type can be viewed.", _EDIT),
        "labels": _prop(
            "object", "Human-readable labels for the post type for various contexts.", _EDIT
        ),
        "name": _prop("string", "The title for the post type.", _ALL),
        "slug": _prop("string", "An alphanumeric identifier for the post type.", _ALL),
        "supports": _prop("object", "All features, supported by the post type.", _EDIT),
        "has_archive": _prop(
            ["string", "boolean"],
            "If the value is a string, the value will be used as the archive slug.",
            _VIEW_EDIT,
        ),
        "taxonomies": _prop(
            "array", "Taxonomies associated with post type.", _VIEW_EDIT, items={"type": "string"}
        ),
        "rest_base": _prop("string", "REST base route for the post type.", _ALL),
        "rest_namespace": _prop("string", "REST route's namespace for the post type.", _ALL),
    },
}
STATUS_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "status",
    "type": "object",
    "properties": {
        "name": _prop("string", "The title for the status.", _ALL),
        "private": _prop("boolean", "Whether posts with this status should be private.", _EDIT),
        "protected": _prop("boolean", "Whether posts with this status should be protected.", _EDIT),
        "public": _prop(
            "boolean",
            "Whether posts of this status should be shown in the front end of the site.",
            _VIEW_EDIT,
        ),
        "queryable": _prop(
            "boolean", "Whether posts with this status should be publicly-queryable.", _VIEW_EDIT
        ),
        "show_in_list": _prop(
            "boolean", "Whether to include posts in the edit listing for their post type.", _EDIT
        ),
        "slug": _prop("string", "An alphanumeric identifier for the status.", _ALL),
        "date_floating": _prop(
            "boolean", "Whether posts of this status may have floating published dates.", _VIEW_EDIT
        ),
    },
}
TAXONOMY_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "taxonomy",
    "type": "object",
    "properties": {
        "capabilities": _prop("object", "All capabilities used by the taxonomy.", _EDIT),
        "description": _prop("string", "A human-readable description of the taxonomy.", _VIEW_EDIT),
        "hierarchical": _prop(
            "boolean", "Whether or not the taxonomy should have children.", _VIEW_EDIT
        ),
        "labels": _prop(
            "object", "Human-readable labels for the taxonomy for various contexts.", _EDIT
        ),
        "name": _prop("string", "The title for the taxonomy.", _ALL),
        "slug": _prop("string", "An alphanumeric identifier for the taxonomy.", _ALL),
        "show_cloud": _prop("boolean", "Whether or not the term cloud should be displayed.", _EDIT),
        "types": _prop(
            "array", "Types associated with the taxonomy.", _VIEW_EDIT, items={"type": "string"}
        ),
        "rest_base": _prop("string", "REST base route for the taxonomy.", _ALL),
        "rest_namespace": _prop("string", "REST namespace route for the taxonomy.", _ALL),
    },
}
SEARCH_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "search-result",
    "type": "object",
    "properties": {
        "id": _prop(["integer", "string"], "Unique identifier for the object.", ["view", "embed"]),
        "title": _prop("string", "The title for the object.", ["view", "embed"]),
        "url": _prop("string", "URL to the object.", ["view", "embed"], format="uri"),
        "type": _prop("string", "Object type.", ["view", "embed"], enum=["post", "term"]),
        "subtype": _prop(
            "string",
            "Object subtype.",
            ["view", "embed"],
            enum=["post", "page", "category", "post_tag"],
        ),
    },
}
SETTINGS_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "settings",
    "type": "object",
    "properties": {
        name: {key: value for key, value in schema.items() if key != "default"}
        for name, schema in OPTION_SCHEMAS.items()
    },
}
