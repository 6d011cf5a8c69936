"""Validations per second of `sitecache.schema` beside `fastjsonschema` and `jsonschema`, same run.

Three workloads: a 10-property settings-like object, a nested array of objects and an object
whose strings carry ``pattern``s (PCRE, as WordPress reads them; plain ones go to `re`, others to
`regex`). For each, the same valid document is validated four ways:

- ``compiled``: `sitecache.schema.compile_schema` (WordPress's rules, compiled once, #18);
- ``reference``: `validate_value_from_schema`, the rule-for-rule mirror;
- ``fastjsonschema``: its compiled validator of the equivalent JSON Schema;
- ``jsonschema``: a Draft 4 validator (compiled once, format checking on).

A fourth workload, the arguments of a collection request as they arrive in a query string
(strings to coerce), compares what the REST server does per request: validate then sanitize,
compiled against the reference (the JSON Schema libraries do not coerce, so they sit it out).

Timings are interleaved round by round and the best of several repeats is kept, so a noisy
machine slows every side alike; the figures that matter are the ratios.

Run: ``make bench`` (installs the ``bench`` extra) or ``python bench/schema_bench.py``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

try:
    import fastjsonschema
    import jsonschema
except ImportError:  # pragma: no cover - the bench extra is missing
    sys.exit("fastjsonschema or jsonschema is missing: run `make bench` (it installs the extra).")

from sitecache.schema import (
    compile_schema,
    sanitize_value_from_schema,
    validate_value_from_schema,
)

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "enabled": {"type": "boolean"},
        "max_age": {"type": "integer", "minimum": 0},
        "stale_while_revalidate": {"type": "integer", "minimum": 0},
        "gc_interval": {"type": "integer", "minimum": 60},
        "compression": {"type": "boolean"},
        "known_users": {"type": "string", "enum": ["bypass", "bypass_any_cookie", "anonymous"]},
        "cache_query_strings": {"type": "boolean"},
        "ignored_query_params": {
            "type": "array",
            "items": {"type": "string", "maxLength": 100},
            "uniqueItems": True,
        },
        "rejected_user_agents": {"type": "array", "items": {"type": "string"}},
        "preload_interval": {"type": "integer", "minimum": 0, "maximum": 100000},
    },
}
SETTINGS_DOCUMENT: dict[str, Any] = {
    "enabled": True,
    "max_age": 3600,
    "stale_while_revalidate": 10,
    "gc_interval": 600,
    "compression": True,
    "known_users": "bypass",
    "cache_query_strings": False,
    "ignored_query_params": ["utm_source", "utm_medium", "utm_campaign", "fbclid", "gclid"],
    "rejected_user_agents": ["bot", "crawler"],
    "preload_interval": 0,
}

ENTRY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["url", "status", "size"],
    "properties": {
        "url": {"type": "string", "minLength": 1},
        "status": {"type": "string", "enum": ["fresh", "expired"]},
        "size": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
        "times": {
            "type": "object",
            "properties": {
                "created": {"type": "integer", "minimum": 0},
                "expires": {"type": "integer", "minimum": 0},
            },
        },
    },
}
NESTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "page": {"type": "integer", "minimum": 1},
        "entries": {"type": "array", "maxItems": 100, "items": ENTRY_SCHEMA},
    },
}
NESTED_DOCUMENT: dict[str, Any] = {
    "page": 1,
    "entries": [
        {
            "url": f"https://example.org/{index}/",
            "status": "fresh" if index % 3 else "expired",
            "size": 1000 + index,
            "tags": ["post:1", f"term:{index}", "author:2"],
            "times": {"created": 1_700_000_000 + index, "expires": 1_700_003_600 + index},
        }
        for index in range(20)
    ],
}


PATTERNED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "slug": {"type": "string", "pattern": "^[a-z0-9-]+$"},
        "title": {"type": "string", "pattern": "^\\S"},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+:[0-9]+$"}},
        "color": {"type": "string", "pattern": "^#[0-9a-f]{6}$"},
    },
    "patternProperties": {"^x-": {"type": "string"}},
}
"""Patterns that read the same in PCRE and in Python, so both libraries check the same thing."""
PATTERNED_DOCUMENT: dict[str, Any] = {
    "slug": "hello-world",
    "title": "Hello",
    "tags": ["post:1", "term:2", "author:3"],
    "color": "#a0b1c2",
    "x-extra": "y",
}


QUERY_ARGS: dict[str, dict[str, Any]] = {
    "context": {"type": "string", "enum": ["view", "embed", "edit"], "default": "view"},
    "page": {"type": "integer", "default": 1, "minimum": 1},
    "per_page": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100},
    "search": {"type": "string"},
    "include": {"type": "array", "items": {"type": "integer"}, "default": []},
    "orderby": {"type": "string", "enum": ["date", "id", "title", "slug"], "default": "date"},
    "sticky": {"type": "boolean"},
    "after": {"type": "string", "format": "date-time"},
}
QUERY_VALUES: dict[str, Any] = {
    "context": "view",
    "page": "2",
    "per_page": "20",
    "search": "cache",
    "include": "12,15,17",
    "orderby": "title",
    "sticky": "false",
    "after": "2024-01-01T00:00:00",
}


def best_rate(
    function: Callable[[], object], target_seconds: float = 0.1, repeats: int = 5
) -> float:
    """Calls per second of ``function``: the best of ``repeats`` timed rounds."""
    rounds = 1
    while True:
        start = time.perf_counter()
        for _ in range(rounds):
            function()
        elapsed = time.perf_counter() - start
        if elapsed >= target_seconds / 4:
            break
        rounds *= 2
    rounds = max(1, int(rounds * target_seconds / max(elapsed, 1e-9)))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(rounds):
            function()
        best = min(best, time.perf_counter() - start)
    return rounds / best


def interleaved(sides: dict[str, Callable[[], object]], rounds: int = 3) -> dict[str, float]:
    """The best rate of each side over ``rounds`` rounds, the sides taking turns in each."""
    rates: dict[str, float] = dict.fromkeys(sides, 0.0)
    for _ in range(rounds):
        for name, function in sides.items():
            rates[name] = max(rates[name], best_rate(function))
    return rates


def compare(name: str, schema: dict[str, Any], document: dict[str, Any]) -> dict[str, float]:
    """Print the four rates and the ratios for one workload; return the ratios."""
    compiled = compile_schema(schema)
    fast = fastjsonschema.compile(schema)
    draft4 = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    assert compiled.is_compiled
    assert compiled.validate(document, "doc") is True
    assert validate_value_from_schema(document, schema, "doc") is True
    assert fast(document) == document
    assert draft4.is_valid(document)
    rates = interleaved(
        {
            "compiled": lambda: compiled.validate(document, "doc"),
            "reference": lambda: validate_value_from_schema(document, schema, "doc"),
            "fastjsonschema": lambda: fast(document),
            "jsonschema": lambda: draft4.is_valid(document),
        }
    )
    print(f"{name}")
    for side, rate in rates.items():
        print(f"    {side:<16}{rate:>12,.0f}/s")
    ratios = {
        "compiled/fastjsonschema": rates["compiled"] / rates["fastjsonschema"],
        "compiled/jsonschema": rates["compiled"] / rates["jsonschema"],
        "reference/fastjsonschema": rates["reference"] / rates["fastjsonschema"],
        "reference/jsonschema": rates["reference"] / rates["jsonschema"],
    }
    print("    " + "   ".join(f"{label} {ratio:5.2f}x" for label, ratio in ratios.items()))
    return ratios


def compare_request_arguments() -> float:
    """Validate then sanitize every argument of a query, compiled against the reference."""
    compiled = {name: compile_schema(definition) for name, definition in QUERY_ARGS.items()}

    def with_compiled() -> object:
        return [compiled[name].parse(value, name) for name, value in QUERY_VALUES.items()]

    def with_reference() -> object:
        parsed = []
        for name, value in QUERY_VALUES.items():
            definition = QUERY_ARGS[name]
            valid = validate_value_from_schema(value, definition, name)
            parsed.append(
                valid if valid is not True else sanitize_value_from_schema(value, definition, name)
            )
        return parsed

    assert with_compiled() == with_reference()
    rates = interleaved({"compiled": with_compiled, "reference": with_reference})
    ratio = rates["compiled"] / rates["reference"]
    print("query arguments of a collection request (8 strings: validate, then sanitize)")
    for side, rate in rates.items():
        print(f"    {side:<16}{rate:>12,.0f}/s")
    print(f"    compiled/reference {ratio:5.2f}x")
    return ratio


def main() -> int:
    """Run the workloads and say whether each meets the goals of #18 (>= 1x fastjsonschema)
    and of the first draft (>= 3x jsonschema)."""
    print(
        f"Python {sys.version.split()[0]}, fastjsonschema {version('fastjsonschema')}, "
        f"jsonschema {version('jsonschema')}; validations per second of a valid document"
    )
    results = [
        compare("settings object (10 properties)", SETTINGS_SCHEMA, SETTINGS_DOCUMENT),
        compare("nested array of 20 objects", NESTED_SCHEMA, NESTED_DOCUMENT),
        compare("object with string patterns", PATTERNED_SCHEMA, PATTERNED_DOCUMENT),
    ]
    compare_request_arguments()
    for key, goal in (("compiled/fastjsonschema", 1.0), ("compiled/jsonschema", 3.0)):
        lowest = min(result[key] for result in results)
        verdict = "meets" if lowest >= goal else "MISSES"
        print(f"goal {key} >= {goal:.0f}x: {verdict} (lowest ratio {lowest:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
