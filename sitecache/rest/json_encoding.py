"""JSON as PHP's ``json_encode`` writes it for the REST server, refusals in PHP's words.

`encode_json` lets the C encoder do the work; only when it refuses is the data walked again to
name the first problem the way PHP would (NaN or infinity, an unsupported type, nesting deeper
than 512).
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

__all__ = ["encode_json"]

_MAX_DEPTH: Final = 512
"""PHP's ``json_encode`` depth limit: deeper data is refused as it is there."""


class _EncodeError(Exception):
    pass


def _reject(value: Any) -> Any:
    raise _EncodeError("Type is not supported")


def _check_floats(value: Any, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        raise _EncodeError("Maximum stack depth exceeded")
    if isinstance(value, float) and not math.isfinite(value):
        raise _EncodeError("Inf and NaN cannot be JSON encoded")
    if isinstance(value, dict):
        for item in value.values():
            _check_floats(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_floats(item, depth + 1)


def encode_json(data: Any, pretty: bool = False) -> str:
    """``data`` as JSON (UTF-8 text, ``{}`` for empty objects); raises ``ValueError`` with a
    PHP-style message when it cannot be encoded (NaN, infinity, unsupported types, nesting
    deeper than 512).

    The C encoder does the work and rejects what it must (``allow_nan=False``, ``default``);
    only when it fails is the data walked in Python, to give the same message as before; and
    when the output has more than 512 brackets (so the data might nest too deep), its
    containers are.
    """
    try:
        if pretty:
            text = json.dumps(data, indent=4, ensure_ascii=False, allow_nan=False, default=_reject)
        else:
            text = json.dumps(
                data, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_reject
            )
    except (_EncodeError, TypeError, ValueError, RecursionError) as exc:
        raise ValueError(_encode_error_message(data, exc)) from exc
    # A value nested d deep sits inside d brackets, so few brackets prove a shallow value.
    # (The encoder succeeded, so there is no NaN or infinity: only the depth is left.)
    if text.count("[") + text.count("{") > _MAX_DEPTH and _too_deep(data):
        raise ValueError("Maximum stack depth exceeded")
    return text


def _too_deep(data: Any) -> bool:
    """Whether a value of ``data`` sits more than 512 containers deep (PHP refuses those);
    only containers are visited, without recursion."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        if depth >= _MAX_DEPTH:
            if children:
                return True
            continue
        for child in children:
            if isinstance(child, dict | list | tuple):
                stack.append((child, depth + 1))
    return False


def _encode_error_message(data: Any, exc: BaseException) -> str:
    """The message for data the encoder refused: a depth or NaN problem found by walking the
    data first (in the order the walk meets them), else what the encoder's error means."""
    try:
        _check_floats(data)
    except _EncodeError as found:
        return str(found)
    except RecursionError:
        return "Maximum stack depth exceeded"
    if isinstance(exc, _EncodeError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "Maximum stack depth exceeded"
    return "Type is not supported"
