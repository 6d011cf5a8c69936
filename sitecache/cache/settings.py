"""The page cache's settings: defaults, the published schema, and a compiled runtime view.

Settings are data: a flat JSON object kept in the cache's own storage,
validated with `sitecache.schema` against `SETTINGS_SCHEMA`, never code. `CacheSettings` is the
frozen view the middleware reads on every request, built once per change, with the regular
expressions and lower-cased lists it needs already compiled.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import regex

from sitecache.cache.rejected import MAX_TOTAL_LENGTH, RejectedUris, compile_rejected_uri
from sitecache.domain_errors import InvalidSettings, InvalidValueError
from sitecache.rest.refusals import check_value
from sitecache.schema import sanitize_value_from_schema

__all__ = [
    "DEFAULT_SETTINGS",
    "PAGE_TYPES",
    "PURGING_CHANGES",
    "READ_ONLY_SETTINGS",
    "SETTINGS_SCHEMA",
    "SETTING_TITLES",
    "CacheSettings",
    "compile_rejected_uri",
    "merge_settings",
    "purging_changes",
    "titled_properties",
    "validate_settings_update",
]

PAGE_TYPES: Final = (
    "search",
    "feed",
    "category",
    "home",
    "frontpage",
    "tag",
    "archives",
    "pages",
    "single",
    "author",
)

#: What each page type of ``pages`` covers (the site's ``X-Site-Page-Type`` values).
PAGE_TYPE_LABELS: Final = {
    "search": "search results",
    "feed": "feeds (RSS)",
    "category": "category archives",
    "home": "the home page (the latest posts) and its pagination",
    "frontpage": "the front page",
    "tag": "tag archives",
    "archives": "every archive (date, category, tag and author)",
    "pages": "pages",
    "single": "single posts",
    "author": "author archives",
}

#: Each setting's name in words: its ``title`` in the published schema (`titled_properties`),
#: the dashboard's labels.
SETTING_TITLES: Final[dict[str, str]] = {
    "enabled": "Caching",
    "max_age": "Page lifetime (seconds)",
    "stale_while_revalidate": "Serve stale pages while refreshing (seconds)",
    "gc_interval": "Clean-up interval (seconds)",
    "compression": "Compressed copies (brotli, gzip)",
    "known_users": "Visitors with a login or other cookie",
    "cache_query_strings": "Cache URLs with a query string",
    "ignored_query_params": "Query parameters to ignore",
    "rejected_uris": "Never cache these paths",
    "rejected_user_agents": "Never cache for these browsers (user agents)",
    "rejected_cookies": "Never cache for visitors with these cookies",
    "mobile": "Separate copies for mobile browsers",
    "mobile_user_agents": "Mobile browsers (user agents)",
    "cache_404": "Cache “page not found” (404) pages",
    "use_304": "Answer “not modified” (304) when a browser asks",
    "lock_down": "Lock down: no automatic purges",
    "clear_on_post_edit": "An edit purges the whole site",
    "refresh_single_only_on_comments": "A comment purges only its post's page",
    "pages": "Never cache these page types",
    "preload_interval": "Scheduled preload interval (minutes)",
    "preload_posts": "Posts each preload visits",
    "preload_taxonomies": "Preload category and tag archives",
    "static_files": "Static files for the front web server",
    "debug": "Debug log",
    "max_entries": "Most pages kept",
    "max_size_mb": "Most storage used (MB)",
    "storage": "Storage",
    "cache_path": "Storage location",
}

#: Tracking parameters stripped before the key is built (WP Super Cache's list, plus more).
TRACKING_PARAMS: Final = (
    "utm_*",
    "mtm_*",
    "fbclid",
    "gclid",
    "dclid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "fb_source",
    "ref",
    "_ga",
)

MOBILE_USER_AGENTS: Final = (
    "iphone",
    "ipod",
    "android",
    "mobile",
    "blackberry",
    "opera mini",
    "windows phone",
    "iemobile",
    "silk",
    "kindle",
)

DEFAULT_SETTINGS: Final[dict[str, Any]] = {
    "enabled": True,
    "max_age": 3600,
    "stale_while_revalidate": 10,
    "gc_interval": 600,
    "compression": True,
    "known_users": "bypass",
    "cache_query_strings": False,
    "ignored_query_params": list(TRACKING_PARAMS),
    "rejected_uris": [],
    "rejected_user_agents": [],
    "rejected_cookies": [],
    "mobile": False,
    "mobile_user_agents": list(MOBILE_USER_AGENTS),
    "cache_404": False,
    "use_304": True,
    "lock_down": False,
    "clear_on_post_edit": False,
    "refresh_single_only_on_comments": False,
    "pages": {name: False for name in PAGE_TYPES},
    "preload_interval": 0,
    "preload_posts": "all",
    "preload_taxonomies": True,
    "static_files": False,
    "debug": False,
    "max_entries": 50_000,
    "max_size_mb": 1024,
}

#: Settings that describe where the cache lives: shown, never writable over REST.
READ_ONLY_SETTINGS: Final = ("storage", "cache_path")

_STRING_LIST: Final[dict[str, Any]] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 500},
    "maxItems": 200,
}

#: The settings resource: one type per key, every key validated.
SETTINGS_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-cache-settings",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "enabled": {"type": "boolean", "description": "Caching on or off."},
        "max_age": {
            "type": "integer",
            "minimum": 0,
            "maximum": 315_360_000,
            "description": "Seconds a page stays fresh; 0 keeps it fresh until purged.",
        },
        "stale_while_revalidate": {
            "type": "integer",
            "minimum": 0,
            "maximum": 604_800,
            "description": "Seconds a stale page may be served while one request regenerates it.",
        },
        "gc_interval": {
            "type": "integer",
            "minimum": 60,
            "maximum": 604_800,
            "description": "Seconds between garbage-collection runs.",
        },
        "compression": {
            "type": "boolean",
            "description": "Keep brotli and gzip copies (each made by the first hit asking).",
        },
        "known_users": {
            "type": "string",
            "enum": ["bypass", "bypass_any_cookie", "anonymous"],
            "description": "How visitors with a login (or any) cookie are treated.",
        },
        "cache_query_strings": {
            "type": "boolean",
            "description": "Cache URLs with a query string, keyed by the sorted remaining query.",
        },
        "ignored_query_params": {
            **_STRING_LIST,
            "description": "Query parameters stripped before the key is built (`utm_*` prefix "
            "patterns end with `*`).",
        },
        "rejected_uris": {
            **_STRING_LIST,
            "description": "Regular expressions; matching paths are never cached.",
        },
        "rejected_user_agents": {
            **_STRING_LIST,
            "description": "Case-insensitive user-agent substrings that are never cached.",
        },
        "rejected_cookies": {
            **_STRING_LIST,
            "description": "Cookie-name prefixes that force a bypass: a request carrying such a "
            "cookie gets a live page, never stored.",
        },
        "mobile": {"type": "boolean", "description": "A separate variant for mobile browsers."},
        "mobile_user_agents": {
            **_STRING_LIST,
            "description": "Case-insensitive user-agent substrings that count as mobile (when "
            "`mobile` is on).",
        },
        "cache_404": {"type": "boolean", "description": "Store 404 pages."},
        "use_304": {
            "type": "boolean",
            "description": "Answer conditional GETs with 304 Not Modified.",
        },
        "lock_down": {
            "type": "boolean",
            "description": (
                "No automatic purges on edits or comments; manual purges still work. Content "
                "taken from the public is still purged, and turning it off purges the site."
            ),
        },
        "clear_on_post_edit": {
            "type": "boolean",
            "description": "An edit purges the whole site instead of the related pages.",
        },
        "refresh_single_only_on_comments": {
            "type": "boolean",
            "description": "A comment purges only its post's page.",
        },
        "pages": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                name: {"type": "boolean", "description": f"true: never cache {label}."}
                for name, label in PAGE_TYPE_LABELS.items()
            },
            "description": "Page types never cached: a type set to true is NEVER cached "
            '(`"feed": true` means "never cache feeds"); false, the default, caches it. An '
            "update names only the types it changes.",
        },
        "preload_interval": {
            "type": "integer",
            "minimum": 0,
            "maximum": 525_600,
            "description": "Minutes between scheduled full preloads (0 or at least 10).",
        },
        "preload_posts": {
            "type": ["integer", "string"],
            "description": "How many posts a preload visits: a number from 1, or `all`.",
        },
        "preload_taxonomies": {
            "type": "boolean",
            "description": "Preload category and tag archives too.",
        },
        "static_files": {
            "type": "boolean",
            "description": "Also write index.html and index.html.gz for a front web server.",
        },
        "debug": {"type": "boolean", "description": "Write a debug log (never secrets)."},
        "max_entries": {
            "type": "integer",
            "minimum": 0,
            "maximum": 100_000_000,
            "description": "Most entries kept (0: no cap); past it the entries soonest to "
            "expire (then the oldest) are evicted in the background.",
        },
        "max_size_mb": {
            "type": "integer",
            "minimum": 0,
            "maximum": 10_000_000,
            "description": "Most megabytes of stored bodies and gzip copies kept (0: no cap), "
            "evicted the same way.",
        },
        "storage": {
            "type": "string",
            "readonly": True,
            "description": "The storage backend.",
        },
        "cache_path": {
            "type": "string",
            "readonly": True,
            "description": "Where the backend keeps pages.",
        },
    },
}


def _extra_errors(values: Mapping[str, Any]) -> dict[str, str]:
    """The rules a JSON schema cannot say (compiling regexes, the preload interval's gap):
    field -> message."""
    errors: dict[str, str] = {}
    uris = values.get("rejected_uris") or []
    if sum(len(pattern) for pattern in uris if isinstance(pattern, str)) > MAX_TOTAL_LENGTH:
        errors["rejected_uris"] = (
            f"rejected_uris may hold at most {MAX_TOTAL_LENGTH} characters in all."
        )
    for index, pattern in enumerate([] if errors else uris):
        try:
            compile_rejected_uri(pattern)
        except (regex.error, ValueError, TypeError) as exc:
            errors["rejected_uris"] = (
                f"rejected_uris[{index}] is not a valid regular expression: {exc}."
            )
            break
    interval = values.get("preload_interval")
    if isinstance(interval, int) and 0 < interval < 10:
        errors["preload_interval"] = "preload_interval must be 0 or at least 10."
    posts = values.get("preload_posts")
    if posts is not None and not (
        posts == "all" or (type(posts) is int and 1 <= posts <= 10_000_000)
    ):
        errors["preload_posts"] = 'preload_posts must be "all" or an integer from 1 to 10000000.'
    return errors


def _unknown_fields(update: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The read-only and unknown keys of ``update``, as per-field details."""
    details: dict[str, dict[str, Any]] = {}
    properties = SETTINGS_SCHEMA["properties"]
    for key in update:
        if key in READ_ONLY_SETTINGS:
            details[key] = {"code": "rest_invalid_param", "message": f"{key} is read-only."}
        elif key not in properties:
            details[key] = {
                "code": "rest_invalid_param",
                "message": f"{key} is not a valid property of Object.",
            }
    return details


def validate_settings_update(update: object) -> dict[str, Any]:
    """The sanitized update.

    All-or-nothing: unknown and read-only keys are errors too, and nothing is
    returned for partial use when any field fails.

    Raises:
        InvalidSettings: ``update`` is not an object, or fields break rules (one 400
            ``rest_invalid_param`` whose ``details`` name every bad field).
    """
    if not isinstance(update, dict):
        raise InvalidSettings(
            "rest_invalid_param",
            "The settings must be a JSON object.",
            {"params": {"body": "not an object"}},
        )
    details = _unknown_fields(update)
    properties = SETTINGS_SCHEMA["properties"]
    clean: dict[str, Any] = {}
    for key, value in update.items():
        if key in details:
            continue
        schema = properties[key]
        if schema.get("type") == "array" and not isinstance(value, list):
            # Settings are typed: a string is not split into a list (a comma inside a
            # rejected_uris regex would silently make two live patterns of it).
            details[key] = {
                "code": "rest_invalid_type",
                "message": f"{key} is not of type array: send a JSON array of strings.",
            }
            continue
        try:
            check_value(value, schema, key, with_details=False)
        except InvalidValueError as refused:
            details[key] = {"code": refused.code, "message": refused.message}
            continue
        clean[key] = sanitize_value_from_schema(value, schema, key)
    if "pages" in clean and not isinstance(clean["pages"], dict):
        clean["pages"] = {}  # an empty list is an empty object, as WordPress reads it
    for key, message in _extra_errors(clean).items():
        details[key] = {"code": "rest_invalid_param", "message": message}
    if details:
        raise InvalidSettings.from_fields(details)
    return clean


def merge_settings(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """The defaults overlaid with the valid stored values (invalid stored keys are ignored)."""
    values: dict[str, Any] = json.loads(json.dumps(DEFAULT_SETTINGS))
    if not stored:
        return values
    for key, value in stored.items():
        if key not in DEFAULT_SETTINGS:
            continue
        try:
            checked = validate_settings_update({key: value})
        except InvalidSettings:
            continue
        if key == "pages":
            values["pages"].update(checked["pages"])
        else:
            values[key] = checked[key]
    return values


def _turned_off(old: Any, new: Any) -> bool:
    return bool(old) and not new


def _turned_on(old: Any, new: Any) -> bool:
    return not old and bool(new)


def _changed(old: Any, new: Any) -> bool:
    return bool(old != new)


def _gained(old: Any, new: Any) -> bool:
    """A list gained an item, or an object of booleans turned one on."""
    if isinstance(new, Mapping):
        old_on = {name for name, on in (old or {}).items() if on}
        return any(on and name not in old_on for name, on in new.items())
    return bool(set(new) - set(old or ()))


#: The setting changes that purge the site (`purging_changes`): each makes pages stored under
#: the old value wrong to serve under the new one, and the cache reads these settings when it
#: stores a page, not when it serves it (nor does a web server serving static copies). Changes
#: read at request time (rejected cookies and user agents, known users, query strings) need no
#: purge: the next request is decided under the new value.
PURGING_CHANGES: Final[Mapping[str, tuple[Callable[[Any, Any], bool], str]]] = {
    "enabled": (_turned_off, "no copy outlives caching turned off (nor do static copies)"),
    "lock_down": (_turned_off, "the edits lock down held back are seen at once"),
    "compression": (_changed, "compressed copies are kept or served by the new rule only"),
    "cache_404": (_turned_off, "stored 404 pages are no longer served"),
    "pages": (_gained, "a page type now never cached is no longer served from the cache"),
    "rejected_uris": (_gained, "static copies of newly rejected paths go"),
    "mobile": (_turned_on, "static copies of desktop pages are not handed to phones"),
    "static_files": (_turned_off, "the web server stops serving copies no purge would reach"),
}


def purging_changes(previous: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """The settings whose change from ``previous`` to ``current`` purges the site
    (`PURGING_CHANGES`), in its order."""
    return [
        name
        for name, (purges, _why) in PURGING_CHANGES.items()
        if purges(previous.get(name, DEFAULT_SETTINGS[name]), current.get(name))
    ]


def _ignored_matcher(names: list[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    exact = frozenset(name for name in names if not name.endswith("*"))
    prefixes = tuple(name[:-1] for name in names if name.endswith("*"))
    return exact, prefixes


@dataclass(frozen=True, slots=True)
class CacheSettings:
    """The settings as the cache reads them, compiled once per change: one typed field per
    setting read anywhere (``values`` keeps the JSON object they came from)."""

    values: Mapping[str, Any]
    enabled: bool
    max_age: int
    stale_while_revalidate: int
    compression: bool
    known_users: str
    cache_query_strings: bool
    ignored_exact: frozenset[str]
    ignored_prefixes: tuple[str, ...]
    rejected_uris: RejectedUris
    rejected_user_agents: tuple[str, ...]
    rejected_cookies: tuple[str, ...]
    mobile: bool
    mobile_user_agents: tuple[str, ...]
    cache_404: bool
    use_304: bool
    skipped_page_types: frozenset[str]
    debug: bool
    max_entries: int
    max_bytes: int
    gc_interval: int
    lock_down: bool
    clear_on_post_edit: bool
    refresh_single_only_on_comments: bool
    preload_interval: int
    #: how many posts a preload visits; ``None``: all of them
    preload_posts: int | None
    preload_taxonomies: bool
    static_files: bool

    @classmethod
    def from_values(cls, stored: Mapping[str, Any] | None = None) -> CacheSettings:
        """Compile ``stored`` (merged over the defaults) into a runtime view."""
        values = merge_settings(stored)
        exact, prefixes = _ignored_matcher(values["ignored_query_params"])
        uris = values["rejected_uris"]
        return cls(
            values=values,
            enabled=values["enabled"],
            max_age=values["max_age"],
            stale_while_revalidate=values["stale_while_revalidate"],
            compression=values["compression"],
            known_users=values["known_users"],
            cache_query_strings=values["cache_query_strings"],
            ignored_exact=exact,
            ignored_prefixes=prefixes,
            rejected_uris=RejectedUris(uris),
            rejected_user_agents=tuple(ua.lower() for ua in values["rejected_user_agents"]),
            rejected_cookies=tuple(values["rejected_cookies"]),
            mobile=values["mobile"],
            mobile_user_agents=tuple(ua.lower() for ua in values["mobile_user_agents"]),
            cache_404=values["cache_404"],
            use_304=values["use_304"],
            skipped_page_types=frozenset(k for k, v in values["pages"].items() if v),
            debug=values["debug"],
            max_entries=values["max_entries"],
            max_bytes=values["max_size_mb"] * 1024 * 1024,
            gc_interval=values["gc_interval"],
            lock_down=values["lock_down"],
            clear_on_post_edit=values["clear_on_post_edit"],
            refresh_single_only_on_comments=values["refresh_single_only_on_comments"],
            preload_interval=values["preload_interval"],
            preload_posts=None if values["preload_posts"] == "all" else values["preload_posts"],
            preload_taxonomies=values["preload_taxonomies"],
            static_files=values["static_files"],
        )

    def is_ignored_param(self, name: str) -> bool:
        """Whether the query parameter ``name`` is stripped before keying."""
        return name in self.ignored_exact or (
            bool(self.ignored_prefixes) and name.startswith(self.ignored_prefixes)
        )


def titled_properties(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The settings schema's ``properties`` with a ``title`` each (`SETTING_TITLES`; a page
    type's from `PAGE_TYPE_LABELS`), as ``OPTIONS /settings`` publishes them."""
    titled: dict[str, Any] = {}
    for name, value in properties.items():
        value = {"title": SETTING_TITLES[name], **value} if name in SETTING_TITLES else value
        if name == "pages":
            value = {
                **value,
                "properties": {
                    key: {"title": _sentence(PAGE_TYPE_LABELS[key]), **sub}
                    for key, sub in value["properties"].items()
                },
            }
        titled[name] = value
    return titled


def _sentence(text: str) -> str:
    """``text`` with a capital first letter (the rest kept: ``RSS`` stays)."""
    return text[:1].upper() + text[1:]
