"""Every row of the rule-by-rule tables, through a compiled schema: the same answers (#18).

The validation and sanitization tables pin WordPress's rules one edge case at a time; here each
row's value and schema go through `compile_schema` as well, and the compiled schema must give
the reference's validation error or ``True``, sanitized value, ``parse`` result and misuse
notices (`compiled_agreement.assert_agree`). The rows whose schema reports misuse check that the
compiled form leaves those schemas to the reference, notices and all.
"""

from __future__ import annotations

from typing import Any

import pytest

from sitecache.schema import compile_schema
from tests.schema import test_sanitization_rules as sanitization
from tests.schema import test_validation_rules as validation
from tests.schema.compiled_agreement import assert_agree


def _rows(module: Any, prefix: str) -> list[Any]:
    """``(value, schema, param)`` for every row of every ``*_ROWS`` table of ``module``."""
    rows: list[Any] = []
    for name in sorted(vars(module)):
        if not name.endswith("_ROWS"):
            continue
        for row in getattr(module, name):
            values = row.values
            value, schema = values[0], values[1]
            param = values[2] if len(values) == 4 else "p"
            rows.append(pytest.param(value, schema, param, id=f"{prefix}-{name}-{row.id}"))
    return rows


ROWS = _rows(validation, "validate") + _rows(sanitization, "sanitize")


def test_the_tables_are_all_here() -> None:
    assert len(ROWS) > 500


@pytest.mark.parametrize(("value", "schema", "param"), ROWS)
def test_a_compiled_schema_answers_each_table_row_as_the_reference(
    value: Any, schema: dict[str, Any], param: str
) -> None:
    assert_agree(value, compile_schema(schema), param)


def test_most_table_schemas_compile() -> None:
    compiled = [compile_schema(values[1]).is_compiled for values in (row.values for row in ROWS)]
    assert sum(compiled) > 0.8 * len(compiled)


def test_a_schema_that_reports_misuse_is_left_to_the_reference() -> None:
    for schema in ({}, {"type": "strnig"}, {"type": ["object", "type"]}, {"pattern": "("}):
        assert not compile_schema(schema).is_compiled
    assert not compile_schema({"type": "string", "pattern": "("}).is_compiled
    assert not compile_schema({"type": "array", "items": "x"}).is_compiled
    assert not compile_schema({"anyOf": [{"type": "string"}, {}]}).is_compiled
