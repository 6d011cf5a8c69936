"""The README's settings reference is the published schema's (#19 point 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitecache.cache.settings import (
    DEFAULT_SETTINGS,
    PAGE_TYPE_LABELS,
    PAGE_TYPES,
    SETTINGS_SCHEMA,
)
from sitecache.cache.settings_reference import (
    END_MARKER,
    START_MARKER,
    main,
    replace_section,
    settings_reference,
)

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_holds_the_generated_reference() -> None:
    text = README.read_text(encoding="utf-8")
    assert replace_section(text, settings_reference()) == text, (
        "README.md's settings reference is out of date: run "
        "`python -m sitecache.cache.settings_reference --write README.md`"
    )
    assert main([str(README)]) == 0


def test_every_setting_and_page_type_has_a_row_with_a_meaning() -> None:
    table = settings_reference()
    rows = {line.split(" | ")[0].strip("| `"): line for line in table.splitlines()[2:]}
    expected = set(SETTINGS_SCHEMA["properties"]) | {f"pages.{name}" for name in PAGE_TYPES}
    assert set(rows) == expected
    assert set(DEFAULT_SETTINGS) <= set(rows)
    assert {"rejected_cookies", "mobile_user_agents"} <= set(rows)
    for key, row in rows.items():
        assert not row.rstrip(" |").endswith("|"), f"{key} has no meaning"
    assert "never cache feeds" in rows["pages.feed"] + rows["pages"]
    assert "`3600`" in rows["max_age"]
    assert "0 to 315,360,000" in rows["max_age"]


def test_every_page_type_is_described() -> None:
    assert tuple(PAGE_TYPE_LABELS) == PAGE_TYPES


def test_a_stale_section_is_reported_and_rewritten(tmp_path: Path) -> None:
    copy = tmp_path / "README.md"
    copy.write_text(f"# x\n{START_MARKER}\n| old |\n{END_MARKER}\nrest\n", encoding="utf-8")
    assert main([str(copy)]) == 1
    assert main([str(copy), "--write"]) == 0
    assert main([str(copy)]) == 0
    text = copy.read_text(encoding="utf-8")
    assert "| old |" not in text
    assert text.endswith(f"{END_MARKER}\nrest\n")


def test_without_markers_nothing_is_replaced() -> None:
    with pytest.raises(ValueError, match="missing"):
        replace_section("no markers here", "table")
