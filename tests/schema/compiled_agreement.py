"""The check shared by the compiled-schema tests: a compiled schema agrees with the reference.

`assert_agree` runs one value through the reference functions and through a `CompiledSchema`
and asserts the same validation result (``True`` or an error with the same code, message, data
and additional errors), the same sanitized value (types included: ``1`` is not ``1.0`` nor
``True``), the same ``parse`` result and the same misuse notices. When the schema compiled, the
raw compiled parts are held to the same answers too, so a compiled path that silently gave way
to the reference could not pass unnoticed.
"""

from __future__ import annotations

import math
from typing import Any

from sitecache.errors import RestError
from sitecache.schema import (
    CompiledSchema,
    report_misuse_to,
    sanitize_value_from_schema,
    validate_value_from_schema,
)
from sitecache.schema.compiled_sanitizers import Refused

Notices = list[tuple[str, str]]


def typed(value: Any) -> Any:
    """``value`` with every scalar's type spelled out (NaN equal to itself, -0.0 not 0.0);
    a `RestError` as its whole JSON body."""
    if isinstance(value, RestError):
        return ("error", value.to_dict())
    if isinstance(value, dict):
        return ("object", [(typed(key), typed(item)) for key, item in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(item) for item in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    return (type(value).__name__, value)


def _reference(value: Any, schema: Any, param: str) -> tuple[Any, Any, Any, Notices]:
    notices: Notices = []
    with report_misuse_to(lambda function, message: notices.append((function, message))):
        valid = validate_value_from_schema(value, schema, param)
        sanitized = sanitize_value_from_schema(value, schema, param)
        parsed = valid if isinstance(valid, RestError) else sanitized
    return typed(valid), typed(sanitized), typed(parsed), notices


def _compiled(value: Any, compiled: CompiledSchema, param: str) -> tuple[Any, Any, Any, Notices]:
    notices: Notices = []
    with report_misuse_to(lambda function, message: notices.append((function, message))):
        valid = compiled.validate(value, param)
        sanitized = compiled.sanitize(value, param)
    with report_misuse_to(lambda function, message: None):
        parsed = compiled.parse(value, param)
    return typed(valid), typed(sanitized), typed(parsed), notices


def assert_agree(value: Any, compiled: CompiledSchema, param: str = "p") -> None:
    """Assert that ``compiled`` answers for ``value`` exactly as the reference does."""
    expected = _reference(value, compiled.schema, param)
    actual = _compiled(value, compiled, param)
    names = ("validate", "sanitize", "parse", "notices")
    for name, want, got in zip(names, expected, actual, strict=True):
        assert got == want, f"{name} differs for {value!r} by {compiled.schema!r}"
    check, sanitizer = compiled.check, compiled.sanitizer
    if check is None or sanitizer is None:
        return
    valid = expected[0] == typed(True)
    assert check(value) is valid, f"compiled check says {not valid} for {value!r}"
    try:
        raw = sanitizer(value)
    except Refused:
        assert expected[1][0] == "error", f"compiled sanitizer refused {value!r}"
    else:
        assert typed(raw) == expected[1], f"compiled sanitizer gave {raw!r} for {value!r}"
