"""The cache's warnings: one function, `cache_warnings`, over one set of inputs.

``GET /status``, ``sitecache cache status``, the dashboard (through ``GET /status``) and
``/healthz`` all show what `cache_warnings` derives from the `WarningInputs` that
`sitecache.cache.api.CacheApi.warning_inputs` gathers, so no two of them can disagree on the
same site. The one input a command-line process cannot see for itself, the address the server
caches pages for (``sitecache serve`` derives it from ``--bind`` when ``site_url`` is unset), is
published by the server in the cache's storage (`SERVED_SITE_URL`) and read from there.

The rules are data (`WARNING_RULES`): a code, whether it applies, and what it says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = ["SERVED_SITE_URL", "WARNING_RULES", "WarningInputs", "WarningRule", "cache_warnings"]

#: The named value where a serving application records the site URL it caches pages for
#: (``""``: none, loopback hosts only), for the command line's `cache_warnings`.
SERVED_SITE_URL: Final = "served_site_url"


@dataclass(frozen=True, slots=True)
class WarningInputs:
    """Everything the warnings depend on.

    Attributes:
        storage_error: why the storage refused a probe write (``None``: it is writable).
        site_url: the site URL pages are cached for (``None``: loopback hosts only).
        enabled: the ``enabled`` setting.
        purges_pending: why owed purges are held (``None``: none are).
        scheduled: the scheduled work's warnings (`CacheTimers.warnings`), already worded.
        nginx_outdated: why the nginx rules are outdated (``None``: they are not, or unused).
        compression_unavailable: compression is on but zlib does not work here.
        storage_warnings: the storage's and the disks' own warnings (`Storage.warnings`:
            ``cache_storage_unusable``, ``cache_storage_rebuilt``; `DiskSpace.warnings`:
            ``disk_full``, ``disk_low``), already worded.
    """

    storage_error: str | None
    site_url: str | None
    enabled: bool
    purges_pending: str | None
    scheduled: tuple[tuple[str, str], ...] = ()
    nginx_outdated: str | None = None
    compression_unavailable: bool = False
    storage_warnings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class WarningRule:
    """One row of `WARNING_RULES`: its code, and its message for some inputs (``None``: the
    warning does not apply)."""

    code: str
    message: Callable[[WarningInputs], str | None]


_PENDING_DEFAULT: Final = (
    "Purges owed to content changes are not applied yet; pages are served uncached until they are."
)

#: The warnings in the order they are shown (the scheduled work's come where they stand).
WARNING_RULES: Final[tuple[WarningRule, ...]] = (
    WarningRule(
        "storage_error",
        lambda i: (
            None if i.storage_error is None else f"The cache storage failed: {i.storage_error}"
        ),
    ),
    WarningRule(
        "loopback_only",
        lambda i: (
            None
            if i.site_url
            else "site_url is not set: pages are cached only for requests to localhost, 127.0.0.1 "
            "and [::1]. Set site_url to cache the public site (`sitecache serve` uses its bind "
            "address as site_url when none is set, and then caches that host only)."
        ),
    ),
    WarningRule("cache_disabled", lambda i: None if i.enabled else "Caching is turned off."),
    WarningRule(
        "purges_pending",
        lambda i: None if i.purges_pending is None else i.purges_pending or _PENDING_DEFAULT,
    ),
    WarningRule("nginx_rules_outdated", lambda i: i.nginx_outdated),
    WarningRule(
        "compression_unavailable",
        lambda i: "zlib does not work here." if i.compression_unavailable else None,
    ),
)

#: The rule after which the scheduled work's warnings are listed.
_SCHEDULED_AFTER: Final = "purges_pending"
#: The rule after which the storage's and the disks' own warnings are listed.
_STORAGE_AFTER: Final = "storage_error"


def cache_warnings(inputs: WarningInputs) -> list[dict[str, str]]:
    """The warnings ``inputs`` call for, as ``{code, message}`` objects in a fixed order."""
    found: list[dict[str, str]] = []
    for rule in WARNING_RULES:
        message = rule.message(inputs)
        if message is not None:
            found.append({"code": rule.code, "message": message})
        if rule.code == _STORAGE_AFTER:
            found.extend({"code": code, "message": text} for code, text in inputs.storage_warnings)
        if rule.code == _SCHEDULED_AFTER:
            found.extend({"code": code, "message": text} for code, text in inputs.scheduled)
    return found
