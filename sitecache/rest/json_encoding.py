"""JSON as PHP's ``json_encode`` writes it for the REST server, refusals in PHP's words.

`encode_json` lets the C encoder do the work; only when it refuses is the data walked again to
name the first problem the way PHP would (NaN or infinity, an unsupported type, nesting deeper
than 512).

PHP refuses data whose non-empty arrays and objects nest more than 512 deep. The encoder knows
the nesting of what it assembles itself: a compact collection (an array of several items) is
written item by item (the C encoder writes each item; the commas are ours), and an item nests at
most as deep as its text has opening brackets, at most half its length. So an answer is walked
only where one piece has more than 511 brackets, and then only that piece (`_too_deep`): short
answers are never counted, long ones counted, and only a piece that might be too deep walked.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from itertools import chain, compress
from json.encoder import encode_basestring
from typing import Any, Final

__all__ = ["encode_json", "unsupported_type"]

_MAX_DEPTH: Final = 512
"""PHP's ``json_encode`` depth limit: deeper data is refused as it is there."""


class _EncodeError(Exception):
    def __init__(self, message: str, kind: type | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        """The Python type the encoder could not write (``Type is not supported``)."""


def _reject(value: Any) -> Any:
    raise _EncodeError("Type is not supported", type(value))


def unsupported_type(error: ValueError) -> str | None:
    """The Python type (``module.Name``) behind an `encode_json` failure, or the encoder's
    own words (a dict key it refused); ``None`` for NaN, infinity or depth failures."""
    cause = error.__cause__
    kind = getattr(cause, "kind", None)
    if isinstance(kind, type):
        return f"{kind.__module__}.{kind.__qualname__}"
    if isinstance(cause, TypeError):
        return str(cause)
    return None


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


def _python_compact(value: Any) -> str:
    return json.dumps(
        value, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_reject
    )


def _c_compact() -> Callable[[Any], str]:
    """Compact JSON by the C encoder, made once: what ``json.dumps`` runs, without building an
    encoder per call and without its cycle bookkeeping (a cycle still fails, as nesting too
    deep, which is what it was reported as)."""
    make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_encoder is None:  # pragma: no cover - CPython always has the accelerator
        return _python_compact
    encoder = make_encoder(None, _reject, encode_basestring, None, ":", ",", False, False, False)

    def compact(value: Any) -> str:
        return "".join(encoder(value, 0))

    return compact


_compact: Final = _c_compact()


def encode_json(data: Any, pretty: bool = False) -> str:
    """``data`` as JSON (UTF-8 text, ``{}`` for empty objects); raises ``ValueError`` with a
    PHP-style message when it cannot be encoded (NaN, infinity, unsupported types, nesting
    deeper than 512).

    The C encoder does the work and rejects what it must (``allow_nan=False``, ``default``);
    only when it fails is the data walked in Python, to give the same message as before. The
    depth limit costs nothing for short answers and a count of brackets for long ones (see the
    module's docstring).
    """
    try:
        if pretty:
            text = json.dumps(data, indent=4, ensure_ascii=False, allow_nan=False, default=_reject)
            deep = _may_nest_deeper(text, _MAX_DEPTH) and _too_deep(data, _MAX_DEPTH)
        else:
            text, deep = _encode_compact(data)
    except (_EncodeError, TypeError, ValueError, RecursionError) as exc:
        raise ValueError(_encode_error_message(data, exc)) from exc
    # (The encoder succeeded, so there is no NaN or infinity: only the depth is left.)
    if deep:
        raise ValueError("Maximum stack depth exceeded")
    return text


def _encode_compact(data: Any) -> tuple[str, bool]:
    """Compact JSON of ``data`` and whether it nests deeper than PHP allows.

    A list or tuple of several items (a collection) is written item by item, each one level
    down (the very bytes ``json.dumps`` writes); anything else in one piece.
    """
    kind = type(data)
    if (kind is list or kind is tuple) and len(data) > 1:
        pieces = [_compact(item) for item in data]
        limit = _MAX_DEPTH - 1
        deep = any(
            _may_nest_deeper(piece, limit) and _too_deep(item, limit)
            for item, piece in zip(data, pieces, strict=True)
        )
        return f"[{','.join(pieces)}]", deep
    text = _compact(data)
    return text, _may_nest_deeper(text, _MAX_DEPTH) and _too_deep(data, _MAX_DEPTH)


def _may_nest_deeper(text: str, limit: int) -> bool:
    """Whether the value written as ``text`` may hold a non-empty container ``limit`` levels
    down: that takes ``limit`` + 1 nested containers, each an opening bracket in the text and
    two characters at least."""
    return len(text) > 2 * limit + 1 and text.count("[") + text.count("{") > limit


def _too_deep(data: Any, limit: int) -> bool:
    """Whether a value of ``data`` sits more than ``limit`` containers deep (PHP refuses those
    past 512), walked level by level without recursion; the per-value work is done by the
    interpreter's own iteration (``map``, ``compress``), not by Python code."""
    is_container = _Kinds((dict, list, tuple)).__getitem__
    level = [data] if isinstance(data, dict | list | tuple) else []
    for _depth in range(limit + 1):
        dicts = [value for value in level if isinstance(value, dict)]
        children = [*chain.from_iterable(map(dict.values, dicts))]
        if len(dicts) != len(level):
            children += chain.from_iterable(value for value in level if not isinstance(value, dict))
        if not children:
            return False
        level = [*compress(children, map(is_container, map(type, children)))]
    # The containers now in ``level`` are ``limit`` + 1 deep; one of their parents had children.
    return True


class _Kinds(dict[type, bool]):
    """Type → whether it is a subclass of ``bases``, worked out once per type met."""

    def __init__(self, bases: tuple[type, ...]) -> None:
        super().__init__()
        self.bases = bases

    def __missing__(self, kind: type) -> bool:
        found = self[kind] = issubclass(kind, self.bases)
        return found


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
