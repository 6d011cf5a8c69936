"""Property test: compiled schemas agree with the reference on generated schemas and values (#18).

`generated_schemas.cases` draws a schema with every keyword the engine knows, nested a few
levels, now and then one that reports misuse, and a batch of values aimed at the edges of its
rules (conforming values and near misses). Every (schema, value) pair must get the same answers
from `compile_schema` as from the reference functions (`compiled_agreement.assert_agree`:
validation result, sanitized value, ``parse`` result, misuse notices, and the raw compiled
check and sanitizer). The run covers at least `PAIRS` pairs.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from sitecache.schema import compile_schema
from tests.schema.compiled_agreement import assert_agree
from tests.schema.generated_schemas import VALUES_PER_SCHEMA, Case, cases

PAIRS = 10_000
EXAMPLES = 650
assert EXAMPLES * VALUES_PER_SCHEMA[0] >= PAIRS


# ---------------------------------------------------------------------- the property
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=cases())
def _check_generated_pairs(counts: dict[str, int], case: Case) -> None:
    schema, values, param = case
    compiled = compile_schema(schema)
    for value in values:
        assert_agree(value, compiled, param)
    counts["pairs"] += len(values)
    counts["compiled"] += compiled.is_compiled
    counts["schemas"] += 1


def test_compiled_schemas_agree_with_the_reference_on_generated_pairs() -> None:
    counts = {"pairs": 0, "compiled": 0, "schemas": 0}
    _check_generated_pairs(counts)
    assert counts["pairs"] >= PAIRS, counts
    # Most generated schemas compile, so the compiled paths are what is being compared.
    assert counts["compiled"] >= 0.7 * counts["schemas"], counts
