"""What each tab of the cache dashboard shows, read through ``site-cache/v1`` (`RestCall`).

Each function returns the template context of one tab: the overview (the switch, the status
in words, the visitors' hit ratio and traffic, storage, what to do next), the contents (search,
pages, purges), the preload, one group of settings, the diagnostics (cache test, debug log,
health) and the glossary of the numbers, built from the descriptions the ``/stats`` and
``/status`` schemas publish (one source for the API's documentation and the page's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlencode

from sitecache.site.dashboard_actions import RestCall, is_count
from sitecache.site.settings_form import (
    SETTINGS_GROUPS,
    body_from_form,
    form_fields,
    group_keys,
    group_named,
)
from sitecache.site.stats_chart import bar_chart, line_chart

__all__ = [
    "NEXT_STEPS",
    "PER_PAGE",
    "contents_tab",
    "diagnostics_tab",
    "glossary_tab",
    "overview_tab",
    "preload_tab",
    "settings_tab",
]

PER_PAGE: Final = 20
#: The visitors' outcomes, in the order the charts show them.
OUTCOMES: Final = ("hit", "stale", "miss", "bypass")
#: Bypass reasons shown on the overview (the most frequent first).
TOP_REASONS: Final = 5


def _data(rest: RestCall, method: str, route: str, **kwargs: Any) -> dict[str, Any]:
    answer = rest(method, route, **kwargs)
    return answer.data if answer.ok and isinstance(answer.data, dict) else {}


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) else 0


@dataclass(frozen=True)
class NextStep:
    """A suggestion of the overview: when it applies, what it says, the tab it leads to."""

    applies: Callable[[Mapping[str, Any]], bool]
    text: str
    tab: str


#: What the overview suggests doing next, in order (the facts: `_facts`).
NEXT_STEPS: Final[tuple[NextStep, ...]] = (
    NextStep(
        lambda f: not f["enabled"], "Caching is off: turn it on above when you are ready.", ""
    ),
    NextStep(
        lambda f: f["warnings"] > 0,
        "Read the warnings above: each says what is wrong and what to change.",
        "diagnostics",
    ),
    NextStep(
        lambda f: f["enabled"] and f["entries"] == 0,
        "The cache is empty: start a preload to fill it before visitors arrive.",
        "preload",
    ),
    NextStep(
        lambda f: f["served"] == 0,
        "No visitor has been counted yet: open the site logged out (a private window) to "
        "see the first pages cached. Your own visits as an administrator are not counted.",
        "",
    ),
    NextStep(
        lambda f: f["served"] >= 20 and f["ratio"] < 0.5,
        "Fewer than half of the visitors' pages came from the cache: the reasons below say "
        "why; a longer page lifetime helps most sites.",
        "settings",
    ),
    NextStep(
        lambda f: f["debug"],
        "The debug log is on: turn it off on the Diagnostics tab when you are done.",
        "diagnostics",
    ),
)


def _facts(
    status: Mapping[str, Any], stats: Mapping[str, Any], settings: Mapping[str, Any]
) -> dict[str, Any]:
    requests = stats.get("requests") or {}
    served = sum(_int(requests.get(name)) for name in ("hit", "stale", "miss"))
    return {
        "enabled": bool(status.get("enabled")),
        "warnings": len(status.get("warnings") or []),
        "entries": _int((stats.get("entries") or {}).get("total")),
        "served": served,
        "ratio": float(requests.get("hit_ratio") or 0),
        "debug": bool(settings.get("debug")),
    }


def overview_tab(rest: RestCall, explanations: Mapping[str, str]) -> dict[str, Any]:
    """The overview: switch, status and warnings, hit ratio, traffic, storage, next steps."""
    status = _data(rest, "GET", "/status")
    stats = _data(rest, "GET", "/stats")
    settings = _data(rest, "GET", "/settings")
    requests = stats.get("requests") or {}
    reasons = stats.get("bypass_reasons") or {}
    facts = _facts(status, stats, settings)
    steps = [step for step in NEXT_STEPS if step.applies(facts)]
    own = stats.get("own") or {}
    preload = stats.get("preload") or {}
    since = stats.get("since")
    return {
        "status": status,
        "stats": stats,
        "facts": facts,
        "visitors": {name: _int(requests.get(name)) for name in OUTCOMES},
        "chart": bar_chart([(name, _int(requests.get(name))) for name in OUTCOMES]),
        "history": line_chart(stats.get("series"), since=since if isinstance(since, int) else None),
        "reasons": [
            (reason, _int(count), explanations.get(reason, "No explanation recorded."))
            for reason, count in sorted(reasons.items(), key=lambda item: -_int(item[1]))
        ][:TOP_REASONS],
        "own_total": sum(_int(value) for value in own.values()),
        "preload_total": sum(_int(value) for value in preload.values()),
        "next_steps": steps,
    }


def contents_tab(rest: RestCall, args: Mapping[str, str]) -> dict[str, Any]:
    """A page of the cached pages (``s``: search, ``paged``: page number) and the purges."""
    search = args.get("s", "").strip()
    page_text = args.get("paged", "1")
    page = int(page_text) if is_count(page_text) and int(page_text) > 0 else 1
    query: dict[str, Any] = {"page": page, "per_page": PER_PAGE}
    if search:
        query["search"] = search
    answer = rest("GET", "/cache", query=query)
    pages = int(answer.headers.get("X-Site-TotalPages", "0") or 0)
    total = int(answer.headers.get("X-Site-Total", "0") or 0)
    entries = answer.data if answer.ok and isinstance(answer.data, list) else []
    links = {}
    for name, number in (("prev", page - 1), ("next", page + 1)):
        if 1 <= number <= pages:
            links[name] = "?" + urlencode(
                {"s": search, "paged": number} if search else {"paged": number}
            )
    return {
        "entries": entries,
        "search": search,
        "page": page,
        "pages": pages,
        "total": total,
        "links": links,
        "list_error": answer.error_message,
        "stats": _data(rest, "GET", "/stats"),
    }


def preload_tab(rest: RestCall) -> dict[str, Any]:
    """The preload's progress and settings, and its own counts."""
    status = _data(rest, "GET", "/status")
    progress = status.get("preload") or {}
    total = _int(progress.get("total"))
    done = _int(progress.get("done")) + _int(progress.get("failed"))
    return {
        "preload": progress,
        "percent": min(100, done * 100 // total) if total else 0,
        "settings": _data(rest, "GET", "/settings"),
        "counts": _data(rest, "GET", "/stats").get("preload") or {},
    }


def settings_tab(
    rest: RestCall,
    group_name: str,
    errors: Mapping[str, str] | None = None,
    submitted: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One group of the settings form (what was typed, with each refusal, after a refusal)."""
    group = group_named(group_name)
    schema = _data(rest, "OPTIONS", "/settings").get("schema") or {}
    values: dict[str, Any] = _data(rest, "GET", "/settings")
    keys = group_keys(group, schema)
    if submitted is not None:
        # Show what was typed (nothing was saved), with the API's message beside each field.
        values = {**values, **body_from_form(schema, submitted, keys)}
    return {
        "group": group,
        "groups": SETTINGS_GROUPS,
        "fields": form_fields(schema, values, errors, keys),
    }


def diagnostics_tab(rest: RestCall, result: Mapping[str, Any] | None) -> dict[str, Any]:
    """The cache test (and its last result), the debug log switch and the health figures."""
    return {
        "status": _data(rest, "GET", "/status"),
        "settings": _data(rest, "GET", "/settings"),
        "result": result,
    }


def _described(schema: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str, str]]:
    """``(anchor, field path, description)`` of every property of ``schema`` that has a
    description, nested properties as ``parent.child``, in the schema's order."""
    rows: list[tuple[str, str, str]] = []
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, Mapping):
            continue
        path = f"{prefix}{name}"
        description = prop.get("description")
        if isinstance(description, str) and description:
            rows.append((path.replace(".", "-"), path, description))
        rows.extend(_described(prop, path + "."))
    return rows


def glossary_tab(rest: RestCall) -> dict[str, Any]:
    """Every field of ``GET /stats`` and ``GET /status`` that its schema describes."""
    return {
        "sections": [
            (title, route, _described(_data(rest, "OPTIONS", route).get("schema") or {}))
            for title, route in (("Statistics", "/stats"), ("Status", "/status"))
        ],
    }
