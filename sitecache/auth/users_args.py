"""The arguments of the users routes: the collection's query, deleting with ``reassign``.

A subset of WordPress's users controller arguments (see the README); ``reassign`` is read as
``check_reassign`` reads it (a user id, or ``false``, ``0`` or empty for "reassign nothing").
"""

from __future__ import annotations

from typing import Any, Final

from sitecache.errors import RestError
from sitecache.rest.collection_args import collection_params, id_list_param

__all__ = ["ID_ARG", "check_reassign", "collection_args", "delete_args", "invalid_reassign"]

ID_ARG: Final = {"description": "Unique identifier for the user.", "type": "integer"}


def collection_args() -> dict[str, Any]:
    """The arguments of ``GET /users`` (a subset of WordPress's; see the README)."""
    common = collection_params()
    offset = common.pop("offset")
    return {
        **common,
        "exclude": id_list_param("Ensure result set excludes specific IDs."),
        "include": id_list_param("Limit result set to specific IDs."),
        "offset": offset,
        "order": {
            "description": "Order sort attribute ascending or descending.",
            "type": "string",
            "enum": ["asc", "desc"],
            "default": "asc",
        },
        "orderby": {
            "description": "Sort collection by user attribute.",
            "type": "string",
            "enum": [
                "id",
                "include",
                "name",
                "registered_date",
                "slug",
                "include_slugs",
                "email",
                "url",
            ],
            "default": "name",
        },
        "slug": {
            "description": "Limit result set to users with one or more specific slugs.",
            "type": "array",
            "items": {"type": "string"},
        },
        "roles": {
            "description": "Limit result set to users matching at least one specific role "
            "provided. Accepts csv list or single role.",
            "type": "array",
            "items": {"type": "string"},
        },
        "who": {
            "description": "Limit result set to users who are considered authors.",
            "type": "string",
            "enum": ["authors"],
        },
    }


def delete_args(with_id: bool) -> dict[str, Any]:
    """The arguments of ``DELETE /users/<id>`` (``with_id``) and ``DELETE /users/me``."""
    args: dict[str, Any] = {"id": dict(ID_ARG)} if with_id else {}
    args["force"] = {
        "type": "boolean",
        "default": False,
        "description": "Required to be true, as users do not support trashing.",
    }
    args["reassign"] = {
        "type": "integer",
        "description": "Reassign the deleted user's posts and links to this user ID.",
        "required": True,
        "sanitize_callback": check_reassign,
    }
    return args


def check_reassign(value: Any, request: Any, param: str) -> Any:
    """``check_reassign``: a user id, or ``false``, ``0`` or empty for "reassign nothing"
    (``None``)."""
    if isinstance(value, bool):
        return None if value is False else invalid_reassign()
    text = str(value).strip()
    if text in ("", "false"):
        return None
    if text.isascii() and text.isdigit() and len(text) <= 19:
        return int(text) or None
    return invalid_reassign()


def invalid_reassign() -> RestError:
    """400 ``rest_invalid_param`` for a ``reassign`` that names no user id."""
    return RestError("rest_invalid_param", "Invalid user parameter(s).", {"status": 400})
