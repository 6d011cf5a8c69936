"""The generated references fail the build when they drift from the code: an entry the code
holds without a description is reported (and a reported problem is a warning, an error under
``-W``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from sitecache_docs import references
from sitecache_docs.hooks import hooks_reference
from sphinx.cmd.build import build_main

import sitecache.cache.api.schemas as schemas
import sitecache.cache.outcome as outcome
import sitecache.cache.policy as policy
import sitecache.cli as cli
import sitecache.config as config
import sitecache.hook_names as hook_names
from sitecache.cache.api import metrics


def test_the_references_of_the_code_as_it_is_have_no_problem() -> None:
    for generate in (
        references.config_reference,
        references.settings_reference,
        references.stats_reference,
        references.status_reference,
        references.metrics_reference,
        references.cache_status_reference,
        references.cli_reference,
        hooks_reference,
    ):
        assert generate().problems == [], generate.__name__


def test_a_stats_field_without_a_description_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(schemas.STATS_SCHEMA["properties"], "novelty", {"type": "integer"})
    assert references.stats_reference().problems == [
        "GET /stats field 'novelty' has no description"
    ]


def test_a_status_warning_without_a_description_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(schemas.STATUS_WARNINGS, "disk_on_fire", "")
    assert references.status_reference().problems == [
        "the /status warning 'disk_on_fire' has no description"
    ]


def test_a_configuration_key_without_a_description_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(config.CONFIG_SCHEMA["properties"], "debug", {"type": "boolean"})
    assert "configuration key 'debug' has no description" in references.config_reference().problems


def test_a_bypass_reason_without_an_explanation_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    guard = policy.Guard("gremlins", lambda facts, settings, rules: False, "")
    monkeypatch.setattr(policy, "REQUEST_GUARDS", (*policy.REQUEST_GUARDS, guard))
    assert references.cache_status_reference().problems == [
        "the reason 'gremlins' has no explanation"
    ]


def test_a_cache_status_value_without_a_meaning_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    row = outcome.StatusValue("bypass", outcome.Outcome.bypass("method"), None, "", " ")
    monkeypatch.setattr(outcome, "CACHE_STATUS_VALUES", (*outcome.CACHE_STATUS_VALUES, row))
    assert references.cache_status_reference().problems == [
        "the Cache-Status value 'sitecache; fwd=bypass; detail=method' has no meaning"
    ]


def test_a_metric_without_help_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    real = metrics.metrics_text

    def with_a_new_family(engine: Any, progress: Any) -> str:
        return real(engine, progress) + "# HELP sitecache_new \n# TYPE sitecache_new counter\n"

    monkeypatch.setattr(metrics, "metrics_text", with_a_new_family)
    assert references.metrics_reference().problems == ["metric 'sitecache_new' has no HELP text"]


def test_a_command_line_option_without_help_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    real = cli.build_parser

    def with_a_bare_option() -> argparse.ArgumentParser:
        parser = real()
        parser.add_argument("--quietly")
        return parser

    monkeypatch.setattr(cli, "build_parser", with_a_bare_option)
    assert references.cli_reference().problems == ["`sitecache  --quietly` has no help"]


def test_a_hook_or_a_hook_argument_without_a_description_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bare = hook_names.HookArg("count", "int", "")
    spec = hook_names.action_hook("greetings_sent", " ", bare)
    monkeypatch.setitem(hook_names.HOOKS, "greetings_sent", spec)
    generated = hooks_reference()
    assert generated.problems == [
        "the hook 'greetings_sent' has no description",
        "the argument 'count' of the hook 'greetings_sent' has no description",
    ]
    assert "`greetings_sent`" in generated.text


def test_the_hooks_reference_shows_each_hook_with_its_arguments() -> None:
    text = hooks_reference().text
    assert "| `save_post` | action | `(post_id: int, post: Post, update: bool)` |" in text
    assert "| `rest_url` | filter | `(url: str, path: str)` | `str` |" in text
    assert text.count("| action |") + text.count("| filter |") == len(hook_names.HOOKS)


def test_a_drift_fails_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "conf.py").write_text(
        'extensions = ["myst_parser", "sitecache_docs"]\nexclude_patterns = ["_build"]\n',
        encoding="utf-8",
    )
    (source / "index.md").write_text("# Stats\n\n```{sitecache-stats}\n```\n", encoding="utf-8")
    arguments = ["-E", "-W", "-q", "-b", "html", str(source), str(tmp_path / "html")]
    assert build_main(arguments) == 0
    monkeypatch.setitem(schemas.STATS_SCHEMA["properties"], "novelty", {"type": "integer"})
    assert build_main(arguments) != 0
