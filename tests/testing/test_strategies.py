"""The testing kit's strategies agree with the schema engine (#20 point 4).

Over generated schemas (tests/testing/schemas.py): every value `from_schema` draws validates
(by the reference functions and by the compiled validators) and sanitizes without an error; every
value `invalid_from_schema` draws is refused, with exactly the code it announces. Both in the
JSON transport and in the query-string transport. Then a table of the coercions the valid values
must include, and of the codes of the invalid ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from sitecache.errors import RestError
from sitecache.schema import (
    compile_schema,
    sanitize_value_from_schema,
    validate_value_from_schema,
)
from sitecache.testing import Invalid, from_schema, invalid_from_schema
from tests.doc_pages import REPOSITORY
from tests.testing.schemas import schemas

EXAMPLES = int(os.environ.get("SITECACHE_TESTING_EXAMPLES", "60"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
TRANSPORTS = ["json", "query"]


def is_query_value(value: Any) -> bool:
    """A string, or a non-empty list or map of such values (what PHP's bracket syntax carries)."""
    if isinstance(value, str):
        return True
    if isinstance(value, list):
        return bool(value) and all(is_query_value(item) for item in value)
    if isinstance(value, dict):
        return bool(value) and all(is_query_value(item) for item in value.values())
    return False


@pytest.mark.parametrize("transport", TRANSPORTS)
@PROPERTY
@given(data=st.data())
def test_every_drawn_value_validates_and_sanitizes(transport: str, data: st.DataObject) -> None:
    schema = data.draw(schemas(), label="schema")
    compiled = compile_schema(schema)
    for _ in range(3):
        value = data.draw(from_schema(schema, transport=transport), label="value")  # type: ignore[arg-type]
        verdict = validate_value_from_schema(value, schema, "p")
        assert verdict is True, (value, verdict.message if isinstance(verdict, RestError) else "")
        assert compiled.validate(value, "p") is True
        assert not isinstance(sanitize_value_from_schema(value, schema, "p"), RestError)
        if transport == "query":
            assert is_query_value(value), value


@pytest.mark.parametrize("transport", TRANSPORTS)
@PROPERTY
@given(data=st.data())
def test_every_drawn_invalid_value_fails_with_its_code(transport: str, data: st.DataObject) -> None:
    schema = data.draw(schemas(), label="schema")
    compiled = compile_schema(schema)
    refused = invalid_from_schema(schema, transport=transport)  # type: ignore[arg-type]
    for _ in range(3):
        pair = data.draw(refused, label="invalid")
        assert isinstance(pair, Invalid)
        verdict = validate_value_from_schema(pair.value, schema, "p")
        assert isinstance(verdict, RestError), pair
        assert verdict.code == pair.code, (pair, verdict.code, verdict.message)
        again = compiled.validate(pair.value, "p")
        assert isinstance(again, RestError)
        assert again.code == pair.code
        if transport == "query":
            assert is_query_value(pair.value), pair


#: (schema, a coerced form the valid values must include)
COERCIONS = [
    ({"type": "integer", "minimum": 1, "maximum": 9}, lambda v: isinstance(v, str)),
    ({"type": "integer"}, lambda v: isinstance(v, float)),
    ({"type": "number"}, lambda v: isinstance(v, str) and v.strip() != v),
    ({"type": "boolean"}, lambda v: v in ("true", "false", "TRUE", "False", "tRuE")),
    ({"type": "boolean"}, lambda v: v in (0, 1) and not isinstance(v, bool)),
    (
        {"type": "array", "items": {"type": "integer"}, "minItems": 2},
        lambda v: isinstance(v, str) and "," in v,
    ),
    ({"type": "array", "items": {"type": "string"}, "minItems": 1}, lambda v: isinstance(v, dict)),
    ({"type": "object"}, lambda v: v == ""),
    ({"type": "string", "format": "hex-color"}, lambda v: v.endswith("\n")),
    ({"type": "string", "format": "date-time"}, lambda v: v[4:7] == "-00"),
    ({"type": "string", "format": "ip"}, lambda v: ":" in v),
    (
        {"type": ["integer", "string"], "minimum": 5},
        lambda v: isinstance(v, str) and not v.strip().isdigit(),
    ),
    ({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, lambda v: v in ("true", "false")),
]


@pytest.mark.parametrize(("schema", "wanted"), COERCIONS)
def test_the_valid_values_include_the_engines_coercions(schema: Any, wanted: Any) -> None:
    found = find(from_schema(schema), wanted, settings=settings(database=None, max_examples=2000))
    assert validate_value_from_schema(found, schema, "p") is True


#: (schema, a code its invalid values must include)
CODES = [
    ({"type": "integer"}, "rest_invalid_type"),
    ({"type": "integer", "minimum": 0, "maximum": 10}, "rest_invalid_param"),
    ({"type": "integer", "multipleOf": 0.5}, "rest_invalid_type"),
    ({"type": "string", "minLength": 2}, "rest_invalid_param"),
    ({"type": "string", "pattern": "^[a-z]+$"}, "rest_invalid_pattern"),
    ({"type": "string", "format": "hex-color"}, "rest_invalid_hex_color"),
    ({"type": "string", "format": "date-time"}, "rest_invalid_date"),
    ({"type": "string", "format": "email"}, "rest_invalid_email"),
    ({"type": "string", "format": "uuid"}, "rest_invalid_uuid"),
    ({"type": "string", "format": "ip"}, "rest_invalid_param"),
    ({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}},
     "rest_property_required"),
    ({"type": "array", "items": {"type": "string", "format": "uuid"}}, "rest_invalid_uuid"),
    ({"type": "string", "enum": ["a", "b"]}, "rest_invalid_param"),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "code"), CODES)
def test_the_invalid_values_include_each_rules_code(schema: Any, code: str) -> None:
    found = find(
        invalid_from_schema(schema),
        lambda pair: pair.code == code,
        settings=settings(database=None, max_examples=2000),
    )
    verdict = validate_value_from_schema(found.value, schema, "p")
    assert isinstance(verdict, RestError)
    assert verdict.code == code


def test_a_schema_with_no_valid_value_in_a_transport_draws_nothing() -> None:
    assert from_schema({"type": "null"}, transport="query").is_empty
    assert from_schema({"type": "string", "minLength": 3, "maxLength": 2}).is_empty


def test_sitecache_imports_without_hypothesis() -> None:
    """hypothesis is the testing kit's own dependency: the package works without it."""
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "import sitecache, sitecache.app, sitecache.schema, sitecache.cli\n"
        "try:\n    import sitecache.testing\nexcept ImportError:\n    print('refused')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "refused"
