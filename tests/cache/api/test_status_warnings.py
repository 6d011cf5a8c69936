"""Every warning ``GET /status`` can give is described in `STATUS_WARNINGS` (the status
reference of the documentation is written from it)."""

from __future__ import annotations

import ast
from pathlib import Path

import sitecache.cache.api as api
from sitecache.cache.api.schemas import STATUS_SCHEMA, STATUS_WARNINGS


def warning_codes_in_source() -> set[str]:
    """The ``code`` of every ``{"code": ..., "message": ...}`` the status modules build."""
    found: set[str] = set()
    directory = Path(api.__file__).parent
    for name in ("__init__.py", "timers.py"):
        tree = ast.parse((directory / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
                if "code" in keys and "message" in keys:
                    value = node.values[keys.index("code")]
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        found.add(value.value)
    return found


def test_every_status_warning_is_described() -> None:
    codes = warning_codes_in_source()
    assert {"timers_not_running", "purges_pending", "nginx_rules_outdated"} <= codes
    assert codes <= set(STATUS_WARNINGS), codes - set(STATUS_WARNINGS)
    assert all(meaning.strip() for meaning in STATUS_WARNINGS.values())


def test_every_status_and_stats_field_says_what_it_means() -> None:
    from sitecache.cache.api.schemas import STATS_SCHEMA

    def undescribed(schema: dict[str, object], prefix: str = "") -> list[str]:
        missing = []
        properties = schema.get("properties", {})
        assert isinstance(properties, dict)
        for name, field in properties.items():
            if not str(field.get("description", "")).strip():
                missing.append(prefix + name)
            missing += undescribed(field, f"{prefix}{name}.")
        return missing

    assert undescribed(STATUS_SCHEMA) == []
    assert undescribed(STATS_SCHEMA) == []
    ratio = STATS_SCHEMA["properties"]["requests"]["properties"]["hit_ratio"]["description"]
    assert "(hit + stale) / (hit + stale + miss)" in ratio
