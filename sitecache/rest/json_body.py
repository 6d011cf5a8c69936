"""Decoding a JSON request body as PHP's ``json_decode`` would, refusals in its words.

`decode_json_body` gives the decoded value, or the ``rest_invalid_json`` error WordPress answers:
a syntax error (NaN and infinities included), malformed UTF-8, nesting deeper than
`MAX_JSON_DEPTH`, or a lone UTF-16 surrogate.

Numbers decode as Python's ``json`` decodes them, except an integer literal longer than Python
converts (``sys.get_int_max_str_digits()``, 4300 digits by default): PHP's ``json_decode``
turns an integer it cannot hold into a float, so does this (`_parse_int`), which gives ``inf``
or ``-inf`` for such a length, exactly as a float literal past the double range (``1e999``)
already decodes. The schema then judges it like any infinite number, never a syntax error.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from sitecache.errors import RestError

__all__ = ["MAX_JSON_DEPTH", "decode_json_body"]

MAX_JSON_DEPTH: Final = 128
"""Deeper JSON bodies are refused (PHP's json_decode refuses past 512)."""
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def decode_json_body(body: bytes) -> tuple[Any, RestError | None]:
    """The decoded value of a non-empty JSON body and ``None``, or ``None`` and the
    ``rest_invalid_json`` error (with ``json_error_code`` and ``json_error_message``)."""
    try:
        text, malformed = body.decode("utf-8"), False
    except UnicodeDecodeError:
        # Bad bytes outside a string are a syntax error below; inside one, PHP's error 5.
        text, malformed = body.decode("utf-8", "surrogateescape"), True
    try:
        decoded = json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int)
    except (ValueError, RecursionError) as exc:
        error = _invalid_json(4, "Syntax error")
        error.__cause__ = exc
        return None, error
    if malformed:
        return None, _invalid_json(5, "Malformed UTF-8 characters, possibly incorrectly encoded")
    if _too_deep(decoded):
        return None, _invalid_json(1, "Maximum stack depth exceeded")
    # SECURITY: decided once, here: a lone surrogate (``"\ud800"``) cannot be encoded as
    # UTF-8, stored or answered, so such a body is invalid JSON, as PHP's json_decode says
    # (JSON_ERROR_UTF16). Only an escape can produce one, so most bodies skip the walk.
    if b"\\u" in body and _has_lone_surrogate(decoded):
        return None, _invalid_json(10, "Single unpaired UTF-16 surrogate in unicode escape")
    return decoded, None


def _parse_int(literal: str) -> int | float:
    """A JSON integer literal as an ``int``; one too long for Python's integer conversion
    (its only refusal of a literal the JSON grammar matched) as ``float(literal)``, as PHP
    holds an integer it cannot represent: ``inf`` or ``-inf`` past the double range."""
    try:
        return int(literal)
    except ValueError:
        return float(literal)


def _reject_constant(name: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity`` are not JSON: refuse them as a syntax error."""
    raise ValueError(f"{name} is not valid JSON")


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests arrays and objects deeper than `MAX_JSON_DEPTH` (no recursion)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        current, depth = pending.pop()
        if isinstance(current, dict | list):
            if depth > MAX_JSON_DEPTH:
                return True
            children = current.values() if isinstance(current, dict) else current
            pending.extend((child, depth + 1) for child in children)
    return False


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string of decoded JSON (a value or a key, at any depth) holds a lone UTF-16
    surrogate (no recursion: the depth is bounded by `_too_deep` already, but stay safe)."""
    pending: list[Any] = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, str):
            if not current.isascii() and _SURROGATE.search(current):
                return True
        elif isinstance(current, dict):
            pending.extend(current.keys())
            pending.extend(current.values())
        elif isinstance(current, list):
            pending.extend(current)
    return False


def _invalid_json(code: int, message: str) -> RestError:
    return RestError(
        "rest_invalid_json",
        "Invalid JSON body passed.",
        {"status": 400, "json_error_code": code, "json_error_message": message},
    )
