"""Validations per second of `sitecache.schema` beside the `jsonschema` library, same run.

Three workloads: a 10-property settings-like object, a nested array of objects and an object
whose strings carry ``pattern``s (PCRE, as WordPress reads them; plain ones go to `re`, others to
`regex`). For each, the
same valid document is validated by ``validate_value_from_schema`` and by a ``jsonschema``
Draft 4 validator (compiled once, format checking on) on the equivalent JSON Schema. Timings
are interleaved and the best of several repeats is kept, so a noisy machine slows both sides
alike; the figure that matters is the ratio.

Run: ``make bench`` (installs the ``bench`` extra) or ``python bench/schema_bench.py``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

try:
    import jsonschema
except ImportError:  # pragma: no cover - the bench extra is missing
    sys.exit("jsonschema is not installed: run `make bench` (it installs the bench extra).")

from sitecache.schema import validate_value_from_schema

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


def best_rate(
    function: Callable[[], object], target_seconds: float = 0.2, repeats: int = 5
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


def compare(name: str, schema: dict[str, Any], document: dict[str, Any]) -> float:
    """Print both rates and their ratio for one workload; return the ratio."""
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    assert validate_value_from_schema(document, schema, "doc") is True
    assert validator.is_valid(document)

    def ours() -> object:
        return validate_value_from_schema(document, schema, "doc")

    def theirs() -> object:
        return validator.is_valid(document)

    ours_rates: list[float] = []
    theirs_rates: list[float] = []
    for _ in range(3):  # interleave so drift in machine speed hits both sides
        ours_rates.append(best_rate(ours))
        theirs_rates.append(best_rate(theirs))
    ours_rate, theirs_rate = max(ours_rates), max(theirs_rates)
    ratio = ours_rate / theirs_rate
    print(
        f"{name:<34} sitecache {ours_rate:>10,.0f}/s   jsonschema {jsonschema_version()} "
        f"{theirs_rate:>10,.0f}/s   ratio {ratio:5.2f}x"
    )
    return ratio


def jsonschema_version() -> str:
    from importlib.metadata import version

    return version("jsonschema")


def main() -> int:
    """Run the workloads and say whether each meets the 3x goal."""
    print(f"Python {sys.version.split()[0]}; validations per second of a valid document")
    ratios = [
        compare("settings object (10 properties)", SETTINGS_SCHEMA, SETTINGS_DOCUMENT),
        compare("nested array of 20 objects", NESTED_SCHEMA, NESTED_DOCUMENT),
        compare("object with string patterns", PATTERNED_SCHEMA, PATTERNED_DOCUMENT),
    ]
    goal = 3.0
    verdict = "meets" if min(ratios) >= goal else "MISSES"
    print(f"goal >= {goal:.0f}x jsonschema: {verdict} (lowest ratio {min(ratios):.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
