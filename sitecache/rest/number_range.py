"""Naming the argument behind a store's refusal of an integer past 64 bits.

The schema engine never clamps integers (README "The schema engine"), so a request may carry
``{"author": 1e30}`` through validation; the store refuses it when a statement binds it
(`sitecache.domain_errors.NumberOutOfRange`), without knowing which argument it was. At the
REST boundary the request is known: this module finds its arguments holding such integers and
answers as argument validation answers, a 400 ``rest_invalid_param`` with ``params`` and
``details`` naming each, in WordPress's words for a bound (``<param> must be between <min>
(inclusive) and <max> (inclusive)``, without a full stop, as the schema engine says it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from sitecache.errors import RestError
from sitecache.rest.request import RestRequest

__all__ = ["INT64_MAX", "INT64_MIN", "name_out_of_range_arguments", "out_of_range_paths"]

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

#: How deep into arrays and objects the search goes (arguments are shallow; bodies may not be).
_MAX_DEPTH: Final = 8


def out_of_range_paths(name: str, value: Any, depth: int = 0) -> Iterator[str]:
    """Where ``value`` (the argument ``name``) holds an integer outside 64 bits: ``name``
    itself, or ``name[index]`` / ``name[key]`` inside arrays and objects, as the schema engine names
    items and properties."""
    if value.__class__ is int:
        if not INT64_MIN <= value <= INT64_MAX:
            yield name
        return
    if depth >= _MAX_DEPTH:
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from out_of_range_paths(f"{name}[{index}]", item, depth + 1)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from out_of_range_paths(f"{name}[{key}]", item, depth + 1)


def name_out_of_range_arguments(request: RestRequest, refusal: RestError) -> RestError:
    """The 400 ``rest_invalid_param`` naming every argument of ``request`` that holds an
    integer past 64 bits; ``refusal`` (the store's unnamed one) when none does."""
    params: dict[str, str] = {}
    details: dict[str, Any] = {}
    for name, value in request.get_params().items():
        paths = list(out_of_range_paths(str(name), value))
        if not paths:
            continue
        message = f"{paths[0]} must be between {INT64_MIN} (inclusive) and {INT64_MAX} (inclusive)"
        params[str(name)] = message
        details[str(name)] = {"code": "rest_invalid_param", "message": message, "data": None}
    if not params:
        return refusal
    return RestError(
        "rest_invalid_param",
        f"Invalid parameter(s): {', '.join(params)}",
        {"status": 400, "params": params, "details": details},
    )
