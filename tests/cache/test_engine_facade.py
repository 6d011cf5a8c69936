"""`CacheEngine` is the one door to the storage: no code of the package, the examples or the
documentation reaches ``engine.storage`` past it (the engine's own module and the parts it
composes hold the storage themselves). Tests and benchmarks may look behind the door (to fill
a store directly, or to break it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Where the storage may be reached through an engine: the engine itself.
ENGINE_MODULES = frozenset({ROOT / "sitecache" / "cache" / "engine.py"})
#: The code that must go through the engine's methods.
CHECKED = ("sitecache", "examples", "docs")


def _is_engine(node: ast.expr) -> bool:
    """Whether ``node`` reads as an engine: ``engine``, ``self.engine``, ``app.cache.engine``,
    ``cache_engine``, ..."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return isinstance(name, str) and name.endswith("engine")


def _reaches_storage(node: ast.AST) -> bool:
    """Whether ``node`` reads an engine's ``storage``: ``engine.storage`` or
    ``getattr(engine, "storage")``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "storage" and _is_engine(node.value)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and _is_engine(node.args[0])
        and isinstance(node.args[1], ast.Constant)
        and node.args[1].value == "storage"
    )


def storage_reaches(source: str) -> list[int]:
    """The lines of ``source`` that read an engine's ``storage``."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.expr) and _reaches_storage(node)
    )


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("counters = engine.storage.counters()", [1]),
        ("x = 1\nstorage = self.cache.engine.storage", [2]),
        ("backend = getattr(app.engine, 'storage')", [1]),
        ("counters = engine.stored_counters()", []),
        ("self.storage = storage\nvalue = self.storage.get_value(name)", []),
    ],
)
def test_the_check_finds_an_engine_storage_and_nothing_else(source: str, found: list[int]) -> None:
    assert storage_reaches(source) == found


def test_nothing_outside_the_engine_reaches_its_storage() -> None:
    reaches = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in CHECKED
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path not in ENGINE_MODULES
        for line in storage_reaches(path.read_text(encoding="utf-8"))
    ]
    assert reaches == [], "give CacheEngine a method for what these need"
