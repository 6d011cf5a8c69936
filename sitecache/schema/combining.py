"""Which error an ``anyOf``/``oneOf`` failure reports.

Mirrors ``rest_get_combining_operation_error``: a single failing branch is explained with its
reason; otherwise type errors of the value itself are dropped; if one error is left it is
explained; for object branches the branch sharing the most property names with the value wins;
then titles are listed, and failing all that a generic message is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sitecache.errors import RestError
from sitecache.schema import messages, php

__all__ = ["BranchFailure", "combining_error"]


@dataclass(frozen=True, slots=True)
class BranchFailure:
    """One ``anyOf``/``oneOf`` branch that rejected the value."""

    error: RestError
    schema: Mapping[str, Any]
    position: Any


def _explain(param: str, failure: BranchFailure) -> RestError:
    return messages.no_matching_schema_reason(
        param, failure.schema.get("title"), failure.error.message, failure.position
    )


def _is_own_type_error(failure: BranchFailure, param: str) -> bool:
    if failure.error.code != messages.INVALID_TYPE:
        return False
    data = failure.error.data
    if isinstance(data, Mapping) and data.get("param") is not None:
        return bool(data["param"] == param)
    return True


def _shared_property_count(schema: Mapping[str, Any], value: Any) -> int:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not php.is_php_array(value):
        return 0
    wanted = {php.normalize_key(key) for key in properties}
    return sum(1 for key, _ in php.array_items(value) if php.normalize_key(key) in wanted)


def combining_error(value: Any, param: str, failures: list[BranchFailure]) -> RestError:
    """The error reported when no branch accepted ``value``."""
    if len(failures) == 1:
        return _explain(param, failures[0])

    remaining = [failure for failure in failures if not _is_own_type_error(failure, param)]
    if len(remaining) == 1:
        return _explain(param, remaining[0])

    if len(remaining) > 1 and remaining[0].schema.get("type") == "object":
        best: BranchFailure | None = None
        best_count = 0
        for failure in remaining:
            count = _shared_property_count(failure.schema, value)
            if count > best_count:
                best, best_count = failure, count
        if best is not None:
            return _explain(param, best)

    titles = [
        failure.schema["title"] for failure in failures if failure.schema.get("title") is not None
    ]
    if len(titles) == len(failures):
        return messages.no_matching_titled_schema(param, titles)
    return messages.no_matching_schema(param)
