"""Every warning ``GET /status`` can give is described in `STATUS_WARNINGS` (the status
reference of the documentation is written from it)."""

from __future__ import annotations

import ast
from pathlib import Path

import sitecache.cache.api as api
from sitecache.cache.api.schemas import STATUS_SCHEMA, STATUS_WARNINGS
from sitecache.cache.api.warnings import WARNING_RULES


def warning_codes_in_source() -> set[str]:
    """The ``code`` of every ``{"code": ..., "message": ...}`` the status modules build, and
    of every rule of `WARNING_RULES`."""
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
    # The cache's own warnings are a table of rules (`cache_warnings`).
    return found | {rule.code for rule in WARNING_RULES}


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


def test_the_warnings_of_the_storage_and_the_disks_are_described(tmp_path: Path) -> None:
    import os
    from typing import Any

    from sitecache.cache.storage import StorageUnusable
    from sitecache.cache.storage.disk_connections import IndexConnections
    from sitecache.disk_space import DiskSpace

    index = IndexConnections(tmp_path, tmp_path / "generation", lambda reason: None)
    index.unusable = StorageUnusable("unwritable", "read-only")
    (tmp_path / "index.sqlite3.corrupt-20260101T000000.000000Z").write_bytes(b"x")
    codes = {code for code, _ in index.warnings()}

    def disk(free: int) -> Any:
        return lambda path: os.statvfs_result((4096, 4096, 100_000, free, free, 0, 0, 0, 0, 255))

    for free in (0, 20_000):  # blocks of 4 kB: nothing (full), 80 MB of 400 MB (low)
        codes |= {code for code, _ in DiskSpace([tmp_path], statvfs=disk(free)).warnings()}
    assert codes == {"cache_storage_unusable", "cache_storage_rebuilt", "disk_full", "disk_low"}
    assert codes <= set(STATUS_WARNINGS), codes - set(STATUS_WARNINGS)
