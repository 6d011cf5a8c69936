"""The collection arguments every WordPress-style controller shares (``get_context_param``,
``get_collection_params``), for the core routes of any layer above the REST framework."""

from __future__ import annotations

from typing import Any

__all__ = ["collection_params", "context_param", "id_list_param"]


def context_param(
    default: str = "view", contexts: tuple[str, ...] = ("view", "embed", "edit")
) -> dict[str, Any]:
    """The ``context`` argument (``get_context_param``)."""
    return {
        "description": "Scope under which the request is made; determines fields present in "
        "response.",
        "type": "string",
        "enum": list(contexts),
        "default": default,
    }


def collection_params(*, offset: bool = True, search: bool = True) -> dict[str, Any]:
    """``context``, ``page``, ``per_page`` (1 to 100), ``search`` and ``offset``."""
    params: dict[str, Any] = {
        "context": context_param(),
        "page": {
            "description": "Current page of the collection.",
            "type": "integer",
            "default": 1,
            "minimum": 1,
        },
        "per_page": {
            "description": "Maximum number of items to be returned in result set.",
            "type": "integer",
            "default": 10,
            "minimum": 1,
            "maximum": 100,
        },
    }
    if search:
        params["search"] = {
            "description": "Limit results to those matching a string.",
            "type": "string",
        }
    if offset:
        params["offset"] = {
            "description": "Offset the result set by a specific number of items.",
            "type": "integer",
            "minimum": 0,
        }
    return params


def id_list_param(description: str) -> dict[str, Any]:
    """An array-of-integers argument (``include``, ``exclude``, ``author``…)."""
    return {
        "description": description,
        "type": "array",
        "items": {"type": "integer"},
        "default": [],
    }
