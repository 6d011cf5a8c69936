"""The generated references fail the build when they drift from the code: an entry the code
holds without a description is reported (and a reported problem is a warning, an error under
``-W``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from sitecache_docs import references
from sphinx.cmd.build import build_main

import sitecache.cache.api.schemas as schemas
import sitecache.cache.outcome as outcome
import sitecache.cache.policy as policy
import sitecache.cli as cli
import sitecache.config as config
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
