"""Compiled schemas: validation and sanitization with the reference's exact results, faster.

`compile_schema` turns an argument definition (a schema as `validate_value_from_schema` and
`sanitize_value_from_schema` receive it) into a `CompiledSchema` whose `~CompiledSchema.validate`,
`~CompiledSchema.sanitize` and `~CompiledSchema.parse` give the same results as the reference
functions: the same ``True`` or `RestError` (code, message, data), the same sanitized value and
the same misuse notices. The reference functions stay the specification; this is a cache of work.

How it stays exact:

- A value the compiled check accepts is valid; a value it refuses is handed to the reference,
  which names the first error. So error codes, messages and data are the reference's own.
- A sanitized value comes from closures that mirror the reference step by step; where the
  reference would answer an error, they give way to it.
- A schema that could report misuse (a missing or unknown ``type``, an invalid pattern, a
  sub-schema that is not a mapping) is not compiled at all: the reference handles it, so its
  notices keep their ``param``. So is a schema the compiler cannot read (it contains itself).

A compiled schema reads its schema once, when first used: change the schema afterwards and the
compiled form does not follow (the REST server compiles route arguments, which are fixed once a
route is registered).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sitecache.errors import RestError
from sitecache.schema.compiled_checks import Check, compile_check
from sitecache.schema.compiled_nodes import may_report_misuse
from sitecache.schema.compiled_sanitizers import Sanitizer, compile_sanitizer
from sitecache.schema.sanitization import sanitize_value_from_schema
from sitecache.schema.validation import check_value

__all__ = ["CompiledSchema", "compile_schema"]


class CompiledSchema:
    """A schema compiled into a check and a sanitizer with the reference's exact results.

    The compilation happens on first use (or at once with `compile_schema`) and is kept.

    Args:
        schema: the argument definition; it must not change afterwards.
    """

    __slots__ = ("_built", "_check", "_sanitizer", "schema")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self._built = False
        self._check: Check | None = None
        self._sanitizer: Sanitizer | None = None

    def build(self) -> CompiledSchema:
        """Compile now (idempotent); returns ``self``.

        A schema that may report misuse, or that the compiler cannot read, is left to the
        reference: `is_compiled` is then false.
        """
        if self._built:
            return self
        check: Check | None = None
        sanitizer: Sanitizer | None = None
        try:
            if not may_report_misuse(self.schema):
                check = compile_check(self.schema)
                sanitizer = compile_sanitizer(self.schema)
        except Exception:  # a shape the compiler does not read (too deep, say): the reference's
            check = sanitizer = None
        self._check, self._sanitizer = check, sanitizer
        self._built = True
        return self

    @property
    def is_compiled(self) -> bool:
        """Whether a compiled form answers (else every call goes to the reference)."""
        return self.build()._check is not None

    @property
    def check(self) -> Check | None:
        """The compiled verdict (``True`` exactly when the value is valid), or ``None``."""
        return self.build()._check

    @property
    def sanitizer(self) -> Sanitizer | None:
        """The compiled sanitizer (raises where the reference errs), or ``None``."""
        return self.build()._sanitizer

    def error(self, value: Any, param: str = "") -> RestError | None:
        """The first rule ``value`` breaks, as `check_value` gives it, or ``None``."""
        check = self.build()._check
        if check is not None:
            try:
                accepted = check(value)
            except Exception:  # a value too deep to check here, say: the reference decides
                accepted = False
            if accepted:
                return None
        return check_value(value, self.schema, param)

    def validate(self, value: Any, param: str = "") -> bool | RestError:
        """`validate_value_from_schema` ``(value, schema, param)``: ``True`` or the error."""
        error = self.error(value, param)
        return True if error is None else error

    def sanitize(self, value: Any, param: str = "") -> Any:
        """`sanitize_value_from_schema` ``(value, schema, param)``: the value or the error."""
        sanitizer = self.build()._sanitizer
        if sanitizer is not None:
            try:
                return sanitizer(value)
            except Exception:  # Refused, or too deep: the reference answers exactly
                return sanitize_value_from_schema(value, self.schema, param)
        return sanitize_value_from_schema(value, self.schema, param)

    def parse(self, value: Any, param: str = "") -> Any:
        """``rest_parse_request_arg``: the validation error, else the sanitized value."""
        error = self.error(value, param)
        return error if error is not None else self.sanitize(value, param)

    def __repr__(self) -> str:
        state = "compiled" if self._check is not None else "reference" if self._built else "new"
        return f"<CompiledSchema {state} {self.schema!r}>"


def compile_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """``schema`` compiled now: a `CompiledSchema` with the reference functions' exact results.

    Example::

        >>> ids = compile_schema({"type": "array", "items": {"type": "integer", "minimum": 1}})
        >>> ids.sanitize("1, 2,3", "ids")
        [1, 2, 3]
        >>> ids.validate("1,0", "ids").message
        'ids[1] must be greater than or equal to 1'
    """
    return CompiledSchema(schema).build()
