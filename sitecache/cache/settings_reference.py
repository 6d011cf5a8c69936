"""The settings reference, written from the published settings schema.

Every row comes from `SETTINGS_SCHEMA` (type, bounds, meaning) and `DEFAULT_SETTINGS` (the
default), so the documentation cannot drift from what ``GET /settings`` publishes: the
documentation site's cache settings page is this table, written when the site is built.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from sitecache.cache.settings import DEFAULT_SETTINGS, SETTINGS_SCHEMA

__all__ = ["settings_reference"]

#: what a cell without a value shows
NONE: Final = "\N{EN DASH}"

_TYPE_WORDS: Final[dict[str, str]] = {
    "boolean": "boolean",
    "integer": "integer",
    "string": "string",
    "array": "list",
    "object": "object",
}


def _type_text(schema: Mapping[str, Any]) -> str:
    kinds = schema.get("type", "")
    listed: list[str] = kinds if isinstance(kinds, list) else [kinds]
    words = [_TYPE_WORDS.get(kind, kind) for kind in listed]
    text = " or ".join(words)
    items = schema.get("items")
    if text == "list" and isinstance(items, Mapping):
        text = f"list of {_TYPE_WORDS.get(items.get('type', ''), 'values')}s"
    if "enum" in schema:
        text += ": " + ", ".join(f"`{value}`" for value in schema["enum"])
    if schema.get("readonly"):
        text += " (read-only)"
    return text


def _bounds_text(schema: Mapping[str, Any]) -> str:
    parts = []
    if "minimum" in schema and "maximum" in schema:
        parts.append(f"{schema['minimum']:,} to {schema['maximum']:,}")
    elif "minimum" in schema:
        parts.append(f"at least {schema['minimum']:,}")
    if "maxItems" in schema:
        parts.append(f"at most {schema['maxItems']} items")
    items = schema.get("items")
    if isinstance(items, Mapping) and "maxLength" in items:
        parts.append(f"each 1 to {items['maxLength']} characters")
    return "; ".join(parts) or NONE


def _default_text(key: str, value: Any) -> str:
    if value is None:
        return NONE
    return f"`{json.dumps(value)}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def settings_reference() -> str:
    """The Markdown table of every setting: key, type, default, bounds, meaning (the keys of
    ``pages`` each on a row of their own)."""
    lines = [
        "| key | type | default | bounds | meaning |",
        "|---|---|---|---|---|",
    ]
    for key, schema in SETTINGS_SCHEMA["properties"].items():
        row = [
            f"`{key}`",
            _type_text(schema),
            _default_text(key, DEFAULT_SETTINGS.get(key)),
            _bounds_text(schema),
            str(schema.get("description", "")),
        ]
        lines.append("| " + " | ".join(_cell(cell) for cell in row) + " |")
        if key == "pages":
            for name, field in schema["properties"].items():
                sub = [
                    f"`pages.{name}`",
                    _type_text(field),
                    _default_text(name, DEFAULT_SETTINGS["pages"][name]),
                    NONE,
                    str(field.get("description", "")),
                ]
                lines.append("| " + " | ".join(_cell(cell) for cell in sub) + " |")
    return "\n".join(lines) + "\n"
