"""The cache settings form, generated from the settings schema the REST API publishes.

`form_fields` turns the published JSON schema into a list of fields a template renders
(one widget per type: checkbox, number, select, textarea, a group of checkboxes);
`body_from_form` turns a submitted form back into the JSON body of ``POST /settings``.
Nothing is validated here: numbers are sent as typed and a value that does not parse as the
text typed, so the REST API's schema engine decides (one rule for the form, REST and the
command line) and refuses with its own message (changing nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FormField", "body_from_form", "form_fields"]


@dataclass(frozen=True)
class FormField:
    """One field of the form: its name, widget, help text, value and bounds."""

    name: str
    widget: str  # checkbox | number | select | lines | checkboxes | text | readonly
    help: str
    value: Any
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    error: str = ""
    options: tuple[FormField, ...] = field(default_factory=tuple)


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


def form_fields(
    schema: Mapping[str, Any],
    values: Mapping[str, Any],
    errors: Mapping[str, str] | None = None,
) -> list[FormField]:
    """The form's fields in the schema's order, showing ``values`` and ``errors`` (by key)."""
    errors = errors or {}
    fields = []
    for name, prop in (schema.get("properties") or {}).items():
        if name == "reset":  # the reset action has its own button
            continue
        widget = _widget(prop)
        options: tuple[FormField, ...] = ()
        if widget == "checkboxes":
            current = values.get(name) or {}
            options = tuple(
                FormField(key, "checkbox", str(sub.get("description", "")), bool(current.get(key)))
                for key, sub in (prop.get("properties") or {}).items()
            )
        fields.append(
            FormField(
                name=name,
                widget=widget,
                help=str(prop.get("description", "")),
                value=_shown(values.get(name), widget),
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
                choices=tuple(str(choice) for choice in prop.get("enum") or ()),
                error=errors.get(name, ""),
                options=options,
            )
        )
    return fields


def body_from_form(schema: Mapping[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    """The ``POST /settings`` body of a submitted form (fields named ``f_<key>``).

    Checkboxes send ``false`` when unticked, so only the keys shown in the form are sent:
    a form posts every writable field, read-only ones never.
    """
    body: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        widget = _widget(prop)
        key = f"f_{name}"
        if name == "reset" or widget == "readonly":
            continue
        if widget == "checkbox":
            body[name] = key in form
        elif widget == "checkboxes":
            body[name] = {sub: f"{key}.{sub}" in form for sub in prop.get("properties") or {}}
        elif key not in form:
            continue
        elif widget == "number" or (widget == "text" and "integer" in _types(prop)):
            # As typed: the API's schema engine reads numbers (one rule for the form, REST and
            # the CLI: "300", "+300", "3e2" are 300; full-width digits and "1_000" are refused).
            body[name] = form[key].strip()
        elif widget == "lines":
            body[name] = [line.strip() for line in form[key].splitlines() if line.strip()]
        else:
            body[name] = form[key]
    return body
