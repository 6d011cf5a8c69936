"""The published resource schemas of the ``site-cache/v1`` routes.

Each route publishes one schema (the ``schema`` key of OPTIONS and of the index). Fields a
client may send are writable; the fields of the answer are ``readonly``. A handler validates its
JSON body against the writable part (`validate_body`) and every answer validates against the
whole schema (the tests walk every route and check it).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from sitecache.cache.freshness import LIFETIME_RULES
from sitecache.cache.settings import SETTINGS_SCHEMA, titled_properties
from sitecache.errors import RestError
from sitecache.schema import sanitize_value_from_schema, validate_value_from_schema

__all__ = [
    "CACHE_SCHEMA",
    "PLUGINS_SCHEMA",
    "PRELOAD_SCHEMA",
    "PROGRESS_PROPERTIES",
    "ROUTE_SCHEMAS",
    "SETTINGS_ROUTE_SCHEMA",
    "STATS_SCHEMA",
    "STATUS_SCHEMA",
    "STATUS_WARNINGS",
    "TEST_SCHEMA",
    "invalid_params",
    "validate_body",
]

_DATE: Final[dict[str, Any]] = {"type": ["string", "null"], "format": "date-time"}
_COUNT: Final[dict[str, Any]] = {"type": "integer", "minimum": 0}
_COUNTS: Final[dict[str, Any]] = {"type": "object", "additionalProperties": _COUNT}


def _readonly(properties: Mapping[str, Any]) -> dict[str, Any]:
    return {name: {**value, "readonly": True} for name, value in properties.items()}


#: The preload progress object (``/preload`` and ``/status``).
PROGRESS_PROPERTIES: Final[dict[str, Any]] = {
    "running": {"type": "boolean", "description": "Whether a preload is under way."},
    "total": {**_COUNT, "description": "URLs this preload visits."},
    "done": {**_COUNT, "description": "URLs visited so far (failures included)."},
    "failed": {**_COUNT, "description": "URLs that did not answer 200 or were not stored."},
    "current": {"type": ["string", "null"], "description": "The URL being visited."},
    "started": {**_DATE, "description": "When this (or the last) preload started (UTC)."},
    "finished": {**_DATE, "description": "When the last preload ended (UTC)."},
    "next_run": {**_DATE, "description": "The next scheduled preload, if any (UTC)."},
}

_PROGRESS_OBJECT: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "properties": PROGRESS_PROPERTIES,
}

STATUS_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-cache-status",
    "type": "object",
    "additionalProperties": False,
    "properties": _readonly(
        {
            "enabled": {"type": "boolean", "description": "Whether caching is on."},
            "storage": {
                "type": "object",
                "additionalProperties": False,
                "description": "Where pages are kept.",
                "properties": {
                    "backend": {
                        "type": "string",
                        "enum": ["memory", "disk", "redis"],
                        "description": "The storage backend.",
                    },
                    "location": {
                        "type": "string",
                        "description": "Where it keeps pages (a directory, or the Redis server "
                        "and namespace).",
                    },
                    "writable": {
                        "type": "boolean",
                        "description": "Whether a probe entry could be written just now.",
                    },
                },
            },
            "compression": {
                "type": "object",
                "additionalProperties": False,
                "description": "Whether gzip copies can be made.",
                "properties": {
                    "available": {
                        "type": "boolean",
                        "description": "Whether gzip works here (the compression setting "
                        "needs it).",
                    }
                },
            },
            "disks": {
                "type": "array",
                "description": "The free space of the disks the site writes to (the data "
                "directory, the disk cache, the static root; each file system once), measured "
                "at most once a second.",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "path": {"type": "string", "description": "The directory measured."},
                        "free_bytes": {
                            **_COUNT,
                            "description": "Bytes the site may still write there.",
                        },
                        "total_bytes": {**_COUNT, "description": "The file system's size."},
                        "free_percent": {
                            "type": "number",
                            "description": "free_bytes as a percentage of total_bytes.",
                        },
                        "level": {
                            "type": "string",
                            "enum": ["ok", "low", "full"],
                            "description": "full under 1 MB free; low under disk_low_mb or "
                            "disk_low_percent; else ok.",
                        },
                    },
                },
            },
            "preload": {**_PROGRESS_OBJECT, "description": "The preload progress."},
            "gc": {
                "type": "object",
                "additionalProperties": False,
                "description": "Garbage collection of expired entries.",
                "properties": {
                    "last_run": {**_DATE, "description": "When GC last ran (UTC)."},
                    "next_run": {**_DATE, "description": "When it runs next (UTC)."},
                    "pending": {
                        "type": "object",
                        "additionalProperties": False,
                        "description": "What purges of everything, of the site or of the "
                        "expired entries invalidated at once and GC has not removed yet (in "
                        "slices, in the background): pages and the bytes of their bodies and "
                        "gzip copies.",
                        "properties": {
                            "entries": {**_COUNT, "description": "Pages left to remove."},
                            "bytes": {**_COUNT, "description": "Their bytes."},
                        },
                    },
                },
            },
            "warnings": {
                "type": "array",
                "description": "Problems an administrator should know about.",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "code": {
                            "type": "string",
                            "description": "What is wrong (a code of the warnings table).",
                        },
                        "message": {"type": "string", "description": "What to do, in words."},
                    },
                },
            },
        }
    ),
}

#: Every ``warnings[].code`` of ``GET /status`` and what it means to an administrator.
STATUS_WARNINGS: Final[dict[str, str]] = {
    "storage_error": "The cache storage failed: pages pass through uncached until it answers.",
    "loopback_only": "No site_url is configured: only loopback names (localhost, 127.0.0.1) "
    "are cached; set site_url to cache the public host.",
    "cache_disabled": "Caching is turned off (the enabled setting).",
    "purges_pending": "Purges owed to content changes wait for the storage; every page is "
    "served live (bypassed) until they are applied.",
    "nginx_rules_outdated": "Static-file mode: the settings nginx's block carries changed; run "
    "sitecache nginx-config again and reload nginx.",
    "compression_unavailable": "gzip does not work in this Python: no gzip copies are made.",
    "timers_not_running": "No process has run the cache's timers for 30 s: GC and scheduled "
    "preloads are stopped (is a server running?).",
    "gc_overdue": "Garbage collection is overdue by more than gc_interval: expired pages are "
    "not being removed.",
    "preload_overdue": "A scheduled preload is more than a minute late.",
    "cache_storage_unusable": "The cache storage cannot be used (a damaged index that cannot "
    "be moved aside, a directory that cannot be written): pages are served uncached "
    "(Cache-Status detail=storage) and it is tried again every second.",
    "cache_storage_rebuilt": "The disk cache index was found damaged and moved aside (the "
    "message names the copy); the cache started empty. Delete the copy once inspected.",
    "disk_low": "A disk the site writes to has less free space than disk_low_mb or "
    "disk_low_percent.",
    "disk_full": "A disk the site writes to is full: pages are served without being stored, "
    "and site changes are refused, until space is freed.",
}

STATS_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-cache-stats",
    "type": "object",
    "additionalProperties": False,
    "properties": _readonly(
        {
            "generated": {**_COUNT, "description": "When these figures were read (Unix time)."},
            "since": {
                "type": ["integer", "null"],
                "description": "When the counters started (Unix time).",
            },
            "entries": {
                "type": "object",
                "additionalProperties": False,
                "description": "Pages stored now (every host and variant), read from the index.",
                "properties": {
                    "total": {**_COUNT, "description": "Every stored page: fresh + expired."},
                    "fresh": {
                        **_COUNT,
                        "description": "Pages within their lifetime (max_age or s-maxage).",
                    },
                    "expired": {
                        **_COUNT,
                        "description": "Pages past their lifetime, not removed yet (served "
                        "stale during stale_while_revalidate, then removed by GC).",
                    },
                },
            },
            "bytes": {
                "type": "object",
                "additionalProperties": False,
                "description": "Storage used by the stored pages.",
                "properties": {
                    "total": {**_COUNT, "description": "Bytes of the stored bodies."},
                    "compressed": {**_COUNT, "description": "Bytes of their gzip copies."},
                },
            },
            "requests": {
                "type": "object",
                "additionalProperties": False,
                "description": "Visitors' requests since the counters started, by what the "
                "cache did (the Cache-Status of each answer); preload's visits and the site's "
                "own traffic are apart (preload, own).",
                "properties": {
                    "hit": {
                        **_COUNT,
                        "description": "Answered from a fresh stored page, or from the page "
                        "another request was rendering (collapsed).",
                    },
                    "stale": {
                        **_COUNT,
                        "description": "Answered from a stale page while one request "
                        "rendered it again.",
                    },
                    "miss": {
                        **_COUNT,
                        "description": "Looked up, not found (or stale and rendered by this "
                        "request): the site rendered the page and it was stored.",
                    },
                    "bypass": {
                        **_COUNT,
                        "description": "Not looked up, or rendered but not stored (a login "
                        "cookie, a query string, Set-Cookie, ...): bypass_reasons says why.",
                    },
                    "hit_ratio": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 1,
                        "description": "(hit + stale) / (hit + stale + miss), rounded to 4 "
                        "decimals; 0 before any lookup. Bypasses are left out: the cache was "
                        "not asked.",
                    },
                },
            },
            "preload": {
                "type": "object",
                "additionalProperties": False,
                "description": "Preload's own visits (not counted in requests).",
                "properties": {
                    name: {**_COUNT, "description": f"Preload visits whose outcome was {name}."}
                    for name in ("hit", "stale", "miss", "bypass")
                },
            },
            "bypass_reasons": {
                **_COUNTS,
                "additionalProperties": {
                    **_COUNT,
                    "description": "Bypasses whose Cache-Status detail was this reason "
                    "(see the Cache-Status reference).",
                },
                "description": "Bypasses by reason.",
            },
            "purges": {
                **_COUNTS,
                "additionalProperties": {
                    **_COUNT,
                    "description": "Purges of this scope: all, site, expired, url, urls, "
                    "post_id, tag, tags, test (the cache test's clean-up), ...",
                },
                "description": "Purges by scope.",
            },
            "own": {
                "type": "object",
                "additionalProperties": False,
                "description": "The site's own traffic, not counted in requests: the cache "
                "test's visits, and requests to the REST API, login and admin pages sent with "
                "a login cookie or credentials (the dashboard, administrators' and scripts' "
                "API calls).",
                "properties": {
                    name: {**_COUNT, "description": f"Own requests whose outcome was {name}."}
                    for name in ("hit", "stale", "miss", "bypass")
                },
            },
            "series": {
                "type": "object",
                "additionalProperties": False,
                "description": (
                    "Requests by outcome per minute over the last 24 hours, oldest first "
                    "(start: the first minute's Unix time)."
                ),
                "properties": {
                    "interval": {**_COUNT, "description": "Seconds per slot (60)."},
                    "start": {**_COUNT, "description": "The first slot's Unix time."},
                    **{
                        name: {
                            "type": "array",
                            "items": _COUNT,
                            "description": f"Visitors' {name} requests per slot (1,440 slots).",
                        }
                        for name in ("hit", "stale", "miss", "bypass")
                    },
                },
            },
        }
    ),
}

_STRINGS: Final[dict[str, Any]] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 2000},
    "maxItems": 1000,
}

#: Purge scopes of ``POST /cache`` (exactly one per request) and ``soft``.
PURGE_PROPERTIES: Final[dict[str, Any]] = {
    "all": {"type": "boolean", "enum": [True], "description": "Purge every host."},
    "expired": {"type": "boolean", "enum": [True], "description": "Purge expired entries."},
    "url": {
        "type": "string",
        "minLength": 1,
        "maxLength": 2000,
        "description": "An absolute URL of the site, or a /path (every host).",
    },
    "urls": {**_STRINGS, "description": "Several URLs or paths."},
    "post_id": {
        "type": "integer",
        "minimum": 1,
        "maximum": 2**63 - 1,
        "description": "A post and its related pages.",
    },
    "tag": {"type": "string", "minLength": 1, "maxLength": 200, "description": "A purge tag."},
    "tags": {
        **_STRINGS,
        "items": {"type": "string", "minLength": 1, "maxLength": 200},
        "description": "Request: several purge tags. Answer (a listed entry): its tags.",
    },
    "soft": {"type": "boolean", "description": "Mark entries stale instead of deleting them."},
}

CACHE_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-cache-entry",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        **_readonly(
            {
                "url": {"type": "string", "description": "The canonical URL of the page."},
                "variant": {"type": "string", "description": '"" or "mobile".'},
                "status": {"type": "string", "enum": ["fresh", "expired"]},
                "size": {**_COUNT, "description": "Bytes of the page."},
                "compressed_size": {**_COUNT, "description": "Bytes of its gzip copy."},
                "created": {**_DATE, "description": "When it was stored (UTC)."},
                "expires": {**_DATE, "description": "When it stops being fresh (UTC)."},
                "lifetime": {
                    "type": "string",
                    "enum": list(LIFETIME_RULES),
                    "description": "The rule that gave the page its lifetime: the max_age "
                    "setting, or the page's own CDN-Cache-Control, s-maxage, max-age, Expires "
                    "or Last-Modified (none: revalidated before each use).",
                },
                "deleted": {**_COUNT, "description": "Purge answer: entries removed."},
                "bytes": {**_COUNT, "description": "Purge answer: bytes removed."},
                "scope": {
                    "type": "string",
                    "enum": ["all", "site", "expired", "url", "urls", "post_id", "tag", "tags"],
                    "description": "Purge answer: what was purged.",
                },
                "urls": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": 100,
                    "description": "Purge answer: the purged URLs (at most 100).",
                },
            }
        ),
        **{name: value for name, value in PURGE_PROPERTIES.items() if name != "urls"},
    },
}
# ``urls`` is both a request field (what to purge) and an answer field (what went).
CACHE_SCHEMA["properties"]["urls"] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 2000},
    "maxItems": 1000,
    "description": "Request: URLs or paths to purge. Answer: the purged URLs (at most 100).",
}

PRELOAD_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-cache-preload",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "enable": {
            "type": "boolean",
            "description": "Required in a request: true starts a preload (no-op while one "
            "runs), false cancels it.",
        },
        **_readonly(PROGRESS_PROPERTIES),
    },
}

_ATTEMPT: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "status": {"type": "boolean"},
        "http_status": {"type": "integer"},
        "cache": {"type": "string", "description": "The Cache-Status header."},
        "generated": {**_DATE, "description": "When the page answering was generated."},
    },
}

TEST_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-cache-test",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "url": {
            "type": "string",
            "minLength": 1,
            "maxLength": 2000,
            "description": "The /path, or an absolute URL of the site, to test (default the "
            "home page).",
        },
        **_readonly(
            {
                "status": {"type": "boolean", "description": "Whether the page was cached."},
                "attempts": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"prime": _ATTEMPT, "first": _ATTEMPT, "second": _ATTEMPT},
                },
                "reason": {"type": ["string", "null"], "description": "Why the test failed."},
            }
        ),
    },
}

PLUGINS_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-cache-plugin",
    "type": "object",
    "description": "A companion plugin. POST an object of plugin keys to booleans to switch them.",
    "properties": _readonly(
        {
            "key": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "enabled": {"type": "boolean"},
        }
    ),
    "additionalProperties": {"type": "boolean"},
}

#: The settings resource plus ``reset`` (write-only: ``{"reset": true}`` alone).
SETTINGS_ROUTE_SCHEMA: Final[dict[str, Any]] = {
    **SETTINGS_SCHEMA,
    "properties": {
        **titled_properties(SETTINGS_SCHEMA["properties"]),
        "reset": {
            "type": "boolean",
            "enum": [True],
            "description": 'Send {"reset": true} alone to restore every default.',
        },
    },
}

#: route (under the namespace) -> its schema
ROUTE_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "/settings": SETTINGS_ROUTE_SCHEMA,
    "/status": STATUS_SCHEMA,
    "/stats": STATS_SCHEMA,
    "/cache": CACHE_SCHEMA,
    "/preload": PRELOAD_SCHEMA,
    "/cache/test": TEST_SCHEMA,
    "/plugins": PLUGINS_SCHEMA,
}


def invalid_params(details: Mapping[str, Mapping[str, Any]]) -> RestError:
    """The routes' one 400: ``rest_invalid_param`` with per-field ``details``."""
    names = ", ".join(sorted(details))
    return RestError(
        "rest_invalid_param",
        f"Invalid parameter(s): {names}",
        {
            "status": 400,
            "params": {key: detail["message"] for key, detail in details.items()},
            "details": {key: dict(detail) for key, detail in details.items()},
        },
    )


def validate_body(
    body: Any, schema: Mapping[str, Any], required: tuple[str, ...] = ()
) -> dict[str, Any] | RestError:
    """The body's fields, validated and sanitized against the schema's writable properties.

    Unknown and read-only fields are errors; every bad field is named in ``details``.
    """
    if body is None:
        body = {}
    if not isinstance(body, dict):
        return invalid_params(
            {"body": {"code": "rest_invalid_param", "message": "The body must be a JSON object."}}
        )
    properties = schema["properties"]
    details: dict[str, dict[str, Any]] = {}
    clean: dict[str, Any] = {}
    for key, value in body.items():
        field = properties.get(key)
        if field is None:
            message = f"{key} is not a valid property of Object."
        elif field.get("readonly"):
            message = f"{key} is read-only."
        elif field.get("enum") == [True] and value is not True:
            # A switch that exists only as true ({"all": true}): say so, not "is not 1".
            message = f'{key} can only be true: send {{"{key}": true}}, or leave {key} out.'
        else:
            checked = validate_value_from_schema(value, _strip(field), key)
            if not isinstance(checked, RestError):
                clean[key] = sanitize_value_from_schema(value, _strip(field), key)
                continue
            message = checked.message
        details[key] = {"code": "rest_invalid_param", "message": message}
    for key in required:
        if key not in body:
            details[key] = {"code": "rest_missing_callback_param", "message": f"{key} is required."}
    return invalid_params(details) if details else clean


def _strip(field: Mapping[str, Any]) -> dict[str, Any]:
    """The field without the keywords that describe rather than constrain it."""
    value = copy.deepcopy(dict(field))
    for keyword in ("required", "readonly", "description"):
        value.pop(keyword, None)
    return value
