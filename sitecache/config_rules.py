"""The configuration's rules in words, and every problem of a configuration found at once.

A refused configuration is reported whole: each unknown key with the closest known one
(``site_ulr is not a setting: did you mean `site_url`?``, by `difflib.get_close_matches`), and
each bad value with its rule said in words (`CONFIG_RULES`) rather than in the schema's language
(a regular expression, ``is not a valid property of Object``). The schema engine still decides
what is valid (`sitecache.config.CONFIG_SCHEMA`); this module only says why. The values of
secret keys (`SECRET_KEYS`) are never repeated.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sitecache.dotted_paths import dotted_path_problem, is_dotted_path
from sitecache.errors import RestError
from sitecache.schema import validate_value_from_schema

__all__ = ["CONFIG_RULES", "SECRET_KEYS", "config_problems"]

_PATH: Final = "a directory path (text, not empty)"
_BOOLEAN: Final = "true or false"

#: Each configuration key's rule, as the end of "``<key>`` must be ...".
CONFIG_RULES: Final[dict[str, str]] = {
    "data_dir": _PATH,
    "site_url": (
        "an http:// or https:// address without spaces, query or fragment "
        "(https://example.org), or unset to follow each request's host"
    ),
    "rest_prefix": (
        "one or more path segments of letters, digits and . _ ~ - joined by / (site-json)"
    ),
    "permalink_structure": (
        "a URL path of letters, digits, %tags% and - . _ ~ ! $ & ' ( ) * + , ; = : @ / "
        "(/%postname%/), or empty for plain permalinks"
    ),
    "debug": _BOOLEAN,
    "api_root_rel": "a link relation (text, not empty)",
    "force_ssl_admin": _BOOLEAN,
    "site_name": "text",
    "site_description": "text",
    "timezone_string": "a timezone name such as Europe/Paris, or empty",
    "gmt_offset": "a number of hours from -14 to 14",
    "help_url": "text (an address)",
    "plugins": "a list of module:function or path/to/file.py:function entries",
    "application_passwords": "one of auto, on or off",
    "password_hash_cost": "a whole number from 1024 to 1048576 (scrypt's cost N)",
    "proxy_count": "a whole number from 0 to 5 (the trusted reverse proxies in front)",
    "cache_backend": (
        "one of disk, memory or redis, or package.module:factory (a third-party storage)"
    ),
    "redis_url": "an address starting with redis://, rediss:// or unix://",
    "cache_namespace": "up to 64 letters, digits and . _ -",
    "static_root": _PATH,
    "uploads_root": _PATH,
    "cache_timers": _BOOLEAN,
    "database_url": (
        "empty (SQLite in the data directory), sqlite:///path or "
        "postgresql://user:password@host/name, without spaces"
    ),
    "database_connect_timeout": "a number of seconds from 1 to 60 (PostgreSQL)",
    "database_pool_timeout": "a number of seconds from 0.1 to 60 (PostgreSQL)",
    "database_busy_timeout": "a number of seconds from 0.05 to 60 (SQLite)",
    "database_retry_after": "a whole number of seconds from 1 to 3600",
    "metrics_token": "empty (no token) or 16 to 512 printable ASCII characters without spaces",
    "comment_flood_interval": (
        "a whole number of seconds from 0 (no flood control) to 86400 (15: WordPress's)"
    ),
    "disk_low_mb": "a whole number of free megabytes from 0 to 10000000",
    "disk_low_percent": "a number (a percentage of the disk) from 0 to 100",
}

#: Keys whose values are never repeated in a message (they may hold a password or a token).
SECRET_KEYS: Final = frozenset({"database_url", "metrics_token", "redis_url"})

#: What a plugins entry is (an entry that is text but no spec is refused in these words).
PLUGIN_ENTRY_RULE: Final = "plugins entries are module:function or path/to/file.py:function"
_SHOWN: Final = 60


def config_problems(
    values: Mapping[str, Any], schema: Mapping[str, Any], plugin_spec: str
) -> list[str]:
    """Every problem of ``values`` under ``schema`` (an object schema of the known keys), one
    sentence each, in the order of the keys; ``[]`` when there is none.

    ``plugin_spec`` is the pattern of one ``plugins`` entry (said as `PLUGIN_ENTRY_RULE`).
    """
    known: Mapping[str, Any] = schema.get("properties", {})
    problems: list[str] = []
    for key, value in values.items():
        if key not in known:
            problems.append(_unknown(key, known))
        elif key == "plugins" and isinstance(value, list):
            problems.extend(_plugin_problems(value, known[key], plugin_spec))
        elif isinstance(validate_value_from_schema(value, known[key], key), RestError):
            problems.append(f"{key} must be {CONFIG_RULES.get(key, 'valid')} ({_got(key, value)})")
        elif key == "timezone_string" and value and not _known_zone(str(value)):
            problems.append(f"timezone_string {value!r} is not a known timezone")
        elif key == "cache_backend" and is_dotted_path(str(value)):
            # A third-party storage is looked up now: a name that does not import is a
            # configuration error, not a failure of the first request.
            problem = dotted_path_problem(str(value))
            if problem is not None:
                problems.append(f"cache_backend {value!r} cannot be used: {problem}")
    return problems


def _unknown(key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    if close:
        return f"{key} is not a setting: did you mean `{close[0]}`?"
    return f"{key} is not a setting"


def _plugin_problems(entries: list[Any], schema: Mapping[str, Any], spec: str) -> list[str]:
    problems = []
    for entry in entries:
        if isinstance(entry, str) and not re.match(spec, entry):
            problems.append(f"{PLUGIN_ENTRY_RULE} (got {entry!r})")
        elif not isinstance(entry, str):
            problems.append(f"plugins must be {CONFIG_RULES['plugins']} (got {_shown(entry)})")
    if not problems and isinstance(
        validate_value_from_schema(entries, schema, "plugins"), RestError
    ):
        problems.append(f"plugins must be {CONFIG_RULES['plugins']}")
    return problems


def _got(key: str, value: Any) -> str:
    if key in SECRET_KEYS:
        return "its value is not shown"
    return f"got {_shown(value)}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _known_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True
