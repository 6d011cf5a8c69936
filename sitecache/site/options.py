"""Site options: the table of known options, their types and defaults, and their storage.

Values live JSON-encoded in the ``options`` table of the site database. An option never set
reads as its default; the defaults of ``title``, ``description``, ``timezone`` and
``permalink_structure`` come from the application's configuration.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from sitecache.auth.store import SiteStore
from sitecache.domain_errors import InvalidValueError
from sitecache.rest.http_request import MAX_BODY_BYTES
from sitecache.rest.refusals import check_value
from sitecache.rest.urls import PERMALINK_PATTERN
from sitecache.site.upload_types import DEFAULT_UPLOAD_TYPES, FILE_TYPES

__all__ = ["OPTION_SCHEMAS", "PAGE_OPTIONS", "UNSHOWN_OPTIONS", "OptionStore"]

MAX_ID: Final = 2**63 - 1
"""The largest integer the store holds: the bound of every id option (a value above it names
nothing a row can have) and of ``revisions_to_keep``."""

OPTION_SCHEMAS: Final[Mapping[str, Mapping[str, Any]]] = {
    "title": {"type": "string", "description": "Site title.", "default": "sitecache"},
    "description": {"type": "string", "description": "Site tagline.", "default": ""},
    "timezone": {
        "type": "string",
        "description": "A city in the same timezone as you (an IANA name; empty for UTC).",
        "default": "",
    },
    "date_format": {
        "type": "string",
        "description": "A date format for all date strings (PHP date letters).",
        "default": "F j, Y",
    },
    "time_format": {
        "type": "string",
        "description": "A time format for all time strings (PHP date letters).",
        "default": "g:i a",
    },
    "start_of_week": {
        "type": "integer",
        "description": "A day number of the week that the week should start on.",
        "default": 1,
        "minimum": 0,
        "maximum": 6,
    },
    "posts_per_page": {
        "type": "integer",
        "description": "Blog pages show at most.",
        "default": 10,
        "minimum": 1,
        "maximum": 100,
    },
    "permalink_structure": {
        "type": "string",
        "description": "The permalink structure ('' for plain /?p=ID links).",
        "default": "/%postname%/",
        # What a URL path may hold (RFC 3986 path characters, "%" for the tags): every post's
        # link is made from it, so no control character, space or quote reaches a link.
        "pattern": PERMALINK_PATTERN,
    },
    "default_category": {
        "type": "integer",
        "description": "Default post category.",
        "default": 1,
        "minimum": 0,
        "maximum": MAX_ID,
    },
    "default_comment_status": {
        "type": "string",
        "enum": ["open", "closed"],
        "description": "Allow people to submit comments on new posts.",
        "default": "open",
    },
    "comment_moderation": {
        "type": "boolean",
        "description": "Hold every new comment for moderation.",
        "default": False,
    },
    "comment_previously_approved": {
        "type": "boolean",
        "description": "Approve a comment when its author has an approved comment already.",
        "default": True,
    },
    "stylesheet": {
        "type": "string",
        "description": "The active theme's stylesheet (an unknown one renders the built-in theme).",
        "default": "sitecache",
        "minLength": 1,
        "maxLength": 100,
    },
    "show_on_front": {
        "type": "string",
        "enum": ["posts", "page"],
        "description": "What to show on the front page",
        "default": "posts",
    },
    "page_on_front": {
        "type": "integer",
        "description": "The ID of the page that should be displayed on the front page",
        "default": 0,
        "minimum": 0,
        "maximum": MAX_ID,
    },
    "page_for_posts": {
        "type": "integer",
        "description": "The ID of the page that should display the latest posts",
        "default": 0,
        "minimum": 0,
        "maximum": MAX_ID,
    },
    "posts_per_rss": {
        "type": "integer",
        "description": "Syndication feeds show the most recent.",
        "default": 10,
        "minimum": 1,
        "maximum": 100,
    },
    "upload_max_bytes": {
        "type": "integer",
        "description": "The largest file an upload may carry, in bytes.",
        "default": 8 * 1024 * 1024,
        "minimum": 1,
        "maximum": MAX_BODY_BYTES,
    },
    "upload_mime_types": {
        "type": "array",
        "description": "The file types uploads may have (SVG and HTML may run scripts: off by"
        " default).",
        "items": {"type": "string", "enum": list(FILE_TYPES)},
        "uniqueItems": True,
        "default": list(DEFAULT_UPLOAD_TYPES),
    },
    "revisions_to_keep": {
        "type": "integer",
        "description": "Revisions kept per post or page (-1: every one, 0: none).",
        "default": 25,
        "minimum": -1,
        "maximum": MAX_ID,
    },
}
"""Every option the site knows: its JSON schema (``default`` is the value when unset)."""
UNSHOWN_OPTIONS: Final = frozenset({"revisions_to_keep"})
"""Options no page shows: changing one purges nothing from the page cache."""
PAGE_OPTIONS: Final = frozenset({"page_on_front", "page_for_posts"})
"""Options naming a page: each must be 0 or a published page's id (WordPress's front-page
settings)."""


@dataclass
class OptionStore:
    """Reads and writes options (no hooks: `ContentService.update_option` fires them)."""

    store: SiteStore
    defaults: Mapping[str, Any]

    def default(self, name: str) -> Any:
        """The value of ``name`` when it was never set."""
        if name in self.defaults:
            return self.defaults[name]
        return OPTION_SCHEMAS[name].get("default")

    def get(self, name: str) -> Any:
        """The value of a known option.

        Raises:
            KeyError: ``name`` is not in `OPTION_SCHEMAS`.
        """
        if name not in OPTION_SCHEMAS:
            raise KeyError(name)
        row = (
            self.store.connection()
            .execute("SELECT value FROM options WHERE name = ?", ("site:" + name,))
            .fetchone()
        )
        return self.default(name) if row is None else self._usable(name, json.loads(str(row[0])))

    def all(self) -> dict[str, Any]:
        """Every known option with its value."""
        rows = self.store.connection().execute(
            "SELECT name, value FROM options WHERE name LIKE 'site:%'"
        )
        stored = {str(row[0])[5:]: json.loads(str(row[1])) for row in rows}
        return {
            name: self._usable(name, stored[name]) if name in stored else self.default(name)
            for name in OPTION_SCHEMAS
        }

    def _usable(self, name: str, value: Any) -> Any:
        """``value`` as stored, unless ``name`` is an integer option and ``value`` is not an
        integer within its bounds (stored before the bound existed, or by hand): then the
        option's default, so no reader (a new post's default category, the revisions kept)
        meets an integer the store cannot bind."""
        schema = OPTION_SCHEMAS.get(name)
        if schema is None or schema.get("type") != "integer":
            return value
        low, high = schema.get("minimum", -MAX_ID - 1), schema.get("maximum", MAX_ID)
        if value.__class__ is int and low <= value <= high:
            return value
        return self.default(name)

    def validate(self, name: str, value: Any) -> None:
        """Refuse a value that does not suit option ``name``.

        Raises:
            InvalidValueError: ``invalid_option`` for an unknown name; the schema engine's error
                (code and message only) for a value its schema refuses.
        """
        schema = OPTION_SCHEMAS.get(name)
        if schema is None:
            raise InvalidValueError("invalid_option", f"{name} is not a site option.")
        check_value(value, schema, name, with_details=False)

    def write(self, name: str, value: Any) -> None:
        """Store ``value`` (already validated) inside the caller's transaction."""
        self.store.connection().execute(
            "INSERT INTO options (name, value) VALUES (?, ?)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            ("site:" + name, json.dumps(value)),
        )
