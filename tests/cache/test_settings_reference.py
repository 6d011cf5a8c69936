"""The settings reference (the documentation's cache settings page) is the published schema's."""

from __future__ import annotations

from pathlib import Path

from sitecache.cache.settings import (
    DEFAULT_SETTINGS,
    PAGE_TYPE_LABELS,
    PAGE_TYPES,
    SETTINGS_SCHEMA,
)
from sitecache.cache.settings_reference import settings_reference

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "cache-settings.md"


def test_the_documentation_page_is_the_generated_reference() -> None:
    # The page holds the directive that writes this table when the site is built.
    assert "```{sitecache-settings}" in PAGE.read_text(encoding="utf-8")


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
