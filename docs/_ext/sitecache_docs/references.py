"""The generated references that read a table or a schema of the package.

Each function answers a `Generated` section; every entry the code holds without a
description is a problem (a drift: the build fails).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Iterator, Mapping
from typing import Any

from sitecache_docs.errors import error_codes_reference
from sitecache_docs.generated import NONE, Generated, code, table

__all__ = [
    "cache_status_reference",
    "cli_reference",
    "config_reference",
    "error_codes_reference",
    "metrics_reference",
    "schema_fields",
    "settings_reference",
    "stats_reference",
    "status_reference",
]


# ---------------------------------------------------------------------- schemas
def _type_text(schema: Mapping[str, Any]) -> str:
    kinds = schema.get("type", "")
    words = " or ".join(kinds) if isinstance(kinds, list) else str(kinds)
    items = schema.get("items")
    if words == "array" and isinstance(items, Mapping) and items.get("type"):
        words = f"array of {items['type']}"
    if "enum" in schema:
        words += ": " + ", ".join(code(json.dumps(value)) for value in schema["enum"])
    return words


def schema_fields(
    schema: Mapping[str, Any], prefix: str = ""
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every property of ``schema``, nested ones as ``parent.child`` (an object of counts,
    ``additionalProperties``, as ``parent.<name>``), parents before their children."""
    for name, field in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        yield path, field
        if field.get("properties"):
            yield from schema_fields(field, path + ".")
        elif isinstance(field.get("additionalProperties"), Mapping):
            yield f"{path}.<name>", field["additionalProperties"]


def _described_table(schema: Mapping[str, Any], what: str, skip: tuple[str, ...] = ()) -> Generated:
    """The table of every field of ``schema`` (path, type, meaning)."""
    rows: list[tuple[str, str, str]] = []
    problems: list[str] = []
    for path, field in schema_fields(schema):
        if path.startswith(skip):
            continue
        description = str(field.get("description", "")).strip()
        if not description:
            problems.append(f"{what} field {path!r} has no description")
        rows.append((code(path), _type_text(field), description))
    return Generated(table(("field", "type", "meaning"), rows), problems)


def config_reference() -> Generated:
    """Every configuration key: type, default, environment variable, meaning
    (`sitecache.config.CONFIG_SCHEMA`, `Config`'s defaults)."""
    from sitecache import config

    defaults = {
        field.name: field.default
        for field in dataclasses.fields(config.Config)
        if field.default is not dataclasses.MISSING
    }
    defaults["plugins"] = ()
    variables = {key: name for name, key in config._ENVIRONMENT.items()}
    rows = []
    problems = []
    for key, field in config.CONFIG_SCHEMA["properties"].items():
        description = str(field.get("description", "")).strip()
        if not description:
            problems.append(f"configuration key {key!r} has no description")
        default = defaults.get(key)
        shown = NONE if default in (None, "") else code(json.dumps(default, default=str))
        variable = code(variables[key]) if key in variables else NONE
        rows.append((code(key), _type_text(field), shown, variable, description))
    missing = set(config.CONFIG_SCHEMA["properties"]) ^ {
        f.name for f in dataclasses.fields(config.Config)
    }
    problems += [
        f"configuration key {key!r} is in the schema or Config only" for key in sorted(missing)
    ]
    header = ("key", "type", "default", "environment", "meaning")
    return Generated(table(header, rows), problems)


def settings_reference() -> Generated:
    """Every cache setting (`sitecache.cache.settings_reference`, from the published schema)."""
    from sitecache.cache.settings import SETTINGS_SCHEMA
    from sitecache.cache.settings_reference import settings_reference as markdown

    problems = [
        f"setting {path!r} has no description"
        for path, field in schema_fields(SETTINGS_SCHEMA)
        if not str(field.get("description", "")).strip()
    ]
    return Generated(markdown(), problems)


def stats_reference() -> Generated:
    """Every field of ``GET /stats`` (`STATS_SCHEMA`)."""
    from sitecache.cache.api.schemas import STATS_SCHEMA

    return _described_table(STATS_SCHEMA, "GET /stats")


def status_reference() -> Generated:
    """Every field of ``GET /status`` (`STATUS_SCHEMA`) and every warning code."""
    from sitecache.cache.api.schemas import STATUS_SCHEMA
    from sitecache.cache.api.schemas import STATUS_WARNINGS as WARNINGS

    generated = _described_table(STATUS_SCHEMA, "GET /status")
    rows = []
    for warning, meaning in WARNINGS.items():
        if not meaning.strip():
            generated.problems.append(f"the /status warning {warning!r} has no description")
        rows.append((code(warning), meaning))
    generated.text += "\n**Warnings** (`warnings[].code`):\n\n" + table(("code", "meaning"), rows)
    return generated


# ---------------------------------------------------------------------- metrics
def metrics_reference() -> Generated:
    """Every metric family of ``GET /site-admin/metrics``, from a real exposition (a memory
    storage that counted one request of each outcome, a bypass and a purge)."""
    from sitecache.cache.api.metrics import metrics_text
    from sitecache.cache.engine import CacheEngine
    from sitecache.cache.policy import CacheRules
    from sitecache.cache.storage.memory import MemoryStorage

    engine = CacheEngine(MemoryStorage(), CacheRules())
    for name in ("hit", "stale", "miss", "bypass", "bypass:query_string", "preload:hit",
                 "purge:url", "purged_entries:url"):  # fmt: skip
        engine.count(name)
    text = metrics_text(engine, {"running": False, "total": 0, "done": 0, "failed": 0})
    engine.close()
    families: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            families.setdefault(name, {"labels": set()})["help"] = help_text
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            families.setdefault(name, {"labels": set()})["type"] = kind
        elif line and "{" in line:
            sample = line.split("{", 1)[0]
            family = next((f for f in families if sample.startswith(f)), sample)
            labels = line.split("{", 1)[1].split("}", 1)[0]
            names = {part.split("=", 1)[0] for part in labels.split(",") if part}
            families.setdefault(family, {"labels": set()})["labels"] |= names - {"le"}
    rows: list[tuple[str, str, str, str]] = []
    problems: list[str] = []
    for name, entry in families.items():
        help_text = str(entry.get("help", "")).strip()
        if not help_text:
            problems.append(f"metric {name!r} has no HELP text")
        labels = ", ".join(code(label) for label in sorted(entry["labels"])) or NONE
        rows.append((code(name), str(entry.get("type", "")), labels, help_text))
    return Generated(table(("metric", "type", "labels", "meaning"), rows), problems)


# ---------------------------------------------------------------------- Cache-Status
def cache_status_reference() -> Generated:
    """Every shape of ``Cache-Status`` value (`CACHE_STATUS_VALUES`), the lifetime rules a
    ``detail`` may name (`LIFETIME_RULES`) and every reason with its explanation (the guard
    tables and `OUTCOME_REASONS`)."""
    from sitecache.cache.freshness import LIFETIME_RULES
    from sitecache.cache.outcome import CACHE_STATUS_VALUES, OUTCOME_REASONS
    from sitecache.cache.policy import REQUEST_GUARDS, RESPONSE_GUARDS

    problems = []
    rows = []
    for value in CACHE_STATUS_VALUES:
        if not value.meaning.strip():
            problems.append(f"the Cache-Status value {value.header!r} has no meaning")
        rows.append((code(value.header), code(value.outcome.counter), value.meaning))
    text = table(("`Cache-Status`", "counted as", "meaning"), rows)
    # (The max_age setting's rule is the default: no detail names it.)
    rules = [
        (code(f"detail={rule}"), meaning)
        for rule, meaning in LIFETIME_RULES.items()
        if rule != "max_age"
    ]
    text += (
        "\n**Lifetime rules**: an answer from a stored page, or one just stored, whose "
        "lifetime the page gave says where it came from in `detail` when it has no other "
        "(none for the `max_age` setting):\n\n"
        + table(("detail", "where the lifetime came from"), rules)
    )
    sections: list[tuple[str, list[tuple[str, str]]]] = [
        ("Reasons a request is not looked up (`fwd=bypass`), checked in this order",
         [(g.reason, g.explanation) for g in REQUEST_GUARDS]),
        ("Reasons a response is not stored (`fwd=uri-miss`), checked in this order",
         [(g.reason, g.explanation) for g in RESPONSE_GUARDS]),
        ("Reasons the cache could not take part", list(OUTCOME_REASONS.items())),
    ]  # fmt: skip
    for title, reasons in sections:
        for reason, explanation in reasons:
            if not explanation.strip():
                problems.append(f"the reason {reason!r} has no explanation")
        lines = [(code(f"detail={reason}"), explanation) for reason, explanation in reasons]
        text += f"\n**{title}:**\n\n" + table(("detail", "meaning"), lines)
    return Generated(text, problems)


# ---------------------------------------------------------------------- command line
def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """Every command below ``parser``: its path, its parser and the help its parent gives."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, child in action.choices.items():
                yield (*path, name), child, helps.get(name, "")
                yield from _commands(child, (*path, name))


def cli_reference() -> Generated:
    """Every command and option of ``sitecache``, from `sitecache.cli.build_parser`."""
    from sitecache.cli import build_parser

    parser = build_parser()
    problems: list[str] = []
    parts = ["Every command takes the global options before its name:\n",
             _options_table(parser, (), problems)]  # fmt: skip
    for path, child, help_text in _commands(parser):
        name = "sitecache " + " ".join(path)
        summary = (child.description or help_text).strip()
        if not summary:
            problems.append(f"`{name}` has no help")
        parts.append(f"\n**`{name}`**: {summary}\n")
        if any(isinstance(a, argparse._SubParsersAction) for a in child._actions):
            continue
        usage = " ".join(child.format_usage().split())
        parts.append(f"\n```text\n{usage}\n```\n")
        options = _options_table(child, path, problems)
        if options:
            parts.append("\n" + options)
    return Generated("".join(parts), problems)


def _options_table(
    parser: argparse.ArgumentParser, path: tuple[str, ...], problems: list[str]
) -> str:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        names = ", ".join(action.option_strings) or (action.metavar or action.dest)
        help_text = (action.help or "").strip()
        if not help_text and not isinstance(action, argparse._VersionAction):
            problems.append(f"`sitecache {' '.join(path)} {names}` has no help")
        if isinstance(action, argparse._VersionAction):
            help_text = "print the version and exit"
        shown = action.default
        default = NONE if shown in (None, False, argparse.SUPPRESS, "") else code(shown)
        rows.append((code(names), default, help_text))
    return table(("argument", "default", "meaning"), rows) if rows else ""
