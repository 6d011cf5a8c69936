"""The cache settings form, generated from the settings schema the REST API publishes.

`form_fields` turns the published JSON schema into the fields of one group of settings
(`SETTINGS_GROUPS`: basics, what is cached, exclusions, purging, preloading, advanced), each
labelled with the schema's ``title`` (its key shown beside it, never as the label) and one widget
per type: checkbox, number, select, textarea, a group of checkboxes. `body_from_form` turns a
submitted group back into the JSON body of ``POST /settings``: only the group's keys are sent.
Nothing is validated here: a value that does not parse is sent as the text typed, so the REST
API refuses it with its own message (and changes nothing).

``enabled`` is in no group: the overview's switch turns caching on and off (turning it off asks
first). A setting the groups do not name (a newer one) is shown under "Advanced".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "SETTINGS_GROUPS",
    "FormField",
    "SettingsGroup",
    "body_from_form",
    "form_fields",
    "group_named",
]


@dataclass(frozen=True, slots=True)
class SettingsGroup:
    """One group of the settings form: its name (in URLs), heading, introduction and keys."""

    name: str
    heading: str
    intro: str
    keys: tuple[str, ...]


#: The settings form's groups, in order; the last takes every key no other group names.
SETTINGS_GROUPS: Final[tuple[SettingsGroup, ...]] = (
    SettingsGroup(
        "basics",
        "Basics",
        "How long pages stay fresh and how they are sent.",
        ("max_age", "stale_while_revalidate", "compression", "use_304"),
    ),
    SettingsGroup(
        "cached",
        "What is cached",
        "Which visitors and which pages get cached copies.",
        (
            "known_users",
            "pages",
            "cache_query_strings",
            "ignored_query_params",
            "cache_404",
            "mobile",
            "mobile_user_agents",
        ),
    ),
    SettingsGroup(
        "exclusions",
        "Exclusions",
        "Paths, browsers and cookies that always get a freshly rendered page.",
        ("rejected_uris", "rejected_user_agents", "rejected_cookies"),
    ),
    SettingsGroup(
        "purging",
        "Purging behaviour",
        "What is removed from the cache when content changes.",
        ("lock_down", "clear_on_post_edit", "refresh_single_only_on_comments"),
    ),
    SettingsGroup(
        "preloading",
        "Preloading",
        "Visiting the site's pages ahead of the visitors, on a schedule.",
        ("preload_interval", "preload_posts", "preload_taxonomies"),
    ),
    SettingsGroup(
        "advanced",
        "Advanced",
        "Limits, clean-up, static files and where the cache lives.",
        ("gc_interval", "max_entries", "max_size_mb", "static_files", "storage", "cache_path"),
    ),
)
#: Keys no group shows: ``enabled`` (the overview's switch), ``reset`` (its own button),
#: ``debug`` (the diagnostics' switch).
UNGROUPED: Final = frozenset({"enabled", "reset", "debug"})
#: What the help of a group of page-type checkboxes says (ticking means "never cache").
NEVER_CACHE_HELP: Final = "Tick a page type to stop caching it; the unticked types are cached."


@dataclass(frozen=True)
class FormField:
    """One field of the form: its key, label, widget, help text, value and bounds."""

    name: str
    label: str
    widget: str  # checkbox | number | select | lines | checkboxes | text | readonly
    help: str
    value: Any
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    error: str = ""
    options: tuple[FormField, ...] = field(default_factory=tuple)


def group_named(name: str) -> SettingsGroup:
    """The group called ``name``; the first group for any other name."""
    return next((group for group in SETTINGS_GROUPS if group.name == name), SETTINGS_GROUPS[0])


def group_keys(group: SettingsGroup, schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The keys ``group`` shows, in its order, of those ``schema`` publishes (the last group
    adds every published key no group names)."""
    published = schema.get("properties") or {}
    keys = [key for key in group.keys if key in published]
    if group is SETTINGS_GROUPS[-1]:
        named = {key for each in SETTINGS_GROUPS for key in each.keys} | UNGROUPED
        keys += [key for key in published if key not in named]
    return tuple(keys)


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    return set(kind) if isinstance(kind, list) else {str(kind)}


def _widget(schema: Mapping[str, Any]) -> str:
    types = _types(schema)
    if schema.get("readonly"):
        return "readonly"
    if schema.get("enum") and types == {"string"}:
        return "select"
    if types == {"boolean"}:
        return "checkbox"
    if types == {"integer"}:
        return "number"
    if types == {"array"}:
        return "lines"
    if types == {"object"}:
        return "checkboxes"
    return "text"


def _shown(value: Any, widget: str) -> Any:
    if widget == "lines":
        return "\n".join(str(item) for item in value or ())
    if value is None:
        return ""
    return value


def _label(name: str, prop: Mapping[str, Any]) -> str:
    """The schema's title, else the key in words (``max_age``: "Max age")."""
    title = prop.get("title")
    if isinstance(title, str) and title:
        return title
    words = name.replace("_", " ")
    return words[:1].upper() + words[1:]


def form_fields(
    schema: Mapping[str, Any],
    values: Mapping[str, Any],
    errors: Mapping[str, str] | None = None,
    keys: tuple[str, ...] | None = None,
) -> list[FormField]:
    """The fields of ``keys`` (default: every published key but `UNGROUPED`), showing
    ``values`` and ``errors`` (by key)."""
    errors = errors or {}
    properties = schema.get("properties") or {}
    chosen = keys if keys is not None else tuple(k for k in properties if k not in UNGROUPED)
    fields = []
    for name in chosen:
        prop = properties.get(name)
        if not isinstance(prop, Mapping):
            continue
        widget = _widget(prop)
        options: tuple[FormField, ...] = ()
        help_text = str(prop.get("description", ""))
        if widget == "checkboxes":
            current = values.get(name) or {}
            options = tuple(
                FormField(key, _label(key, sub), "checkbox", "", bool(current.get(key)))
                for key, sub in (prop.get("properties") or {}).items()
            )
            if name == "pages":
                help_text = NEVER_CACHE_HELP
        fields.append(
            FormField(
                name=name,
                label=_label(name, prop),
                widget=widget,
                help=help_text,
                value=_shown(values.get(name), widget),
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
                choices=tuple(str(choice) for choice in prop.get("enum") or ()),
                error=errors.get(name, ""),
                options=options,
            )
        )
    return fields


def _number(text: str) -> int | str:
    stripped = text.strip()
    try:
        return int(stripped)
    except ValueError:
        return stripped  # refused by the API with its own message


def body_from_form(
    schema: Mapping[str, Any], form: Mapping[str, str], keys: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """The ``POST /settings`` body of a submitted form (fields named ``f_<key>``) showing
    ``keys`` (default: every published key).

    Checkboxes send ``false`` when unticked, so only the keys the form showed are sent:
    a form posts each writable field of its group, read-only ones never.
    """
    body: dict[str, Any] = {}
    properties = schema.get("properties") or {}
    for name, prop in properties.items():
        if keys is not None and name not in keys:
            continue
        widget = _widget(prop)
        key = f"f_{name}"
        if name in ("reset", "enabled") or widget == "readonly":
            continue
        if widget == "checkbox":
            body[name] = key in form
        elif widget == "checkboxes":
            body[name] = {sub: f"{key}.{sub}" in form for sub in prop.get("properties") or {}}
        elif key not in form:
            continue
        elif widget == "number":
            body[name] = _number(form[key])
        elif widget == "lines":
            body[name] = [line.strip() for line in form[key].splitlines() if line.strip()]
        elif widget == "text" and "integer" in _types(prop):
            body[name] = _number(form[key]) if form[key].strip().isdigit() else form[key].strip()
        else:
            body[name] = form[key]
    return body
