"""The schema engine's refusals as domain exceptions, for code outside the REST boundary.

By specification the schema engine and the argument checks answer ``True`` or a `RestError`
(WordPress's ``WP_Error``). Domain code (options, the configuration, the command line's checks)
does not read HTTP-shaped errors: it calls these, which raise
`sitecache.domain_errors.InvalidValueError` with the engine's code and message, and its data
(``params``, ``details``...) other than a status as the exception's details.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sitecache.domain_errors import InvalidValueError
from sitecache.errors import RestError
from sitecache.schema import validate_value_from_schema

__all__ = ["check_value", "raise_refusal"]


def raise_refusal(result: bool | RestError, *, with_details: bool = True) -> None:
    """Raise the `InvalidValueError` of a refusal; ``True`` (and ``False``) pass.

    Args:
        result: what the schema engine or an argument check answered.
        with_details: keep the error's data (other than ``status``) as the exception's details.

    Raises:
        InvalidValueError: ``result`` is a `RestError`.
    """
    if not isinstance(result, RestError):
        return
    details: dict[str, Any] = {}
    if with_details and isinstance(result.data, dict):
        details = {key: value for key, value in result.data.items() if key != "status"}
    raise InvalidValueError(result.code, result.message, details)


def check_value(
    value: Any, schema: Mapping[str, Any], param: str = "", *, with_details: bool = True
) -> None:
    """Raise unless ``value`` satisfies ``schema`` (`validate_value_from_schema`'s rules).

    Raises:
        InvalidValueError: the engine's first error (``param`` names the value in its message).
    """
    raise_refusal(validate_value_from_schema(value, schema, param), with_details=with_details)
