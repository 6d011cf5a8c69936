"""``sitecache plugin list|activate|deactivate`` (#29 item 6): the same activation as over
REST, on the site's own application: stored for every worker, the whole site's cached pages
purged, and a deactivated plugin taken back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from werkzeug.test import Client

from sitecache import cli
from sitecache.app import App, create_app

PLUGIN = "tests-cli-stamp/stamp"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site whose environment has one installed plugin (a real entry point on sys.path)."""
    (tmp_path / "tests_cli_stamp.py").write_text(
        "def activate(app):\n"
        "    app.hooks.add_filter('tests_cli_stamp', lambda value: value + ['stamp'])\n",
        encoding="utf-8",
    )
    info = tmp_path / "tests_cli_stamp-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tests-cli-stamp\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[sitecache.plugins]\nstamp = tests_cli_stamp:activate\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tests_cli_stamp", raising=False)
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    monkeypatch.setenv("SITECACHE_SITE_URL", "http://example.org")
    directory = tmp_path / "var"
    monkeypatch.setenv("SITECACHE_DATA_DIR", str(directory))
    assert cli.main(["init"]) == 0
    return directory


def site(data_dir: Path) -> App:
    return create_app(
        {"data_dir": str(data_dir), "site_url": "http://example.org", "cache_timers": False}
    )


def run(*arguments: str) -> int:
    return cli.main(list(arguments))


def test_plugin_commands_activate_list_and_deactivate(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = site(data_dir)  # a worker serving meanwhile
    try:
        client = Client(server)
        client.get("/", base_url="http://example.org")
        capsys.readouterr()
        assert run("plugin", "list") == 0
        assert PLUGIN in capsys.readouterr().out
        assert run("plugin", "activate", PLUGIN) == 0
        assert "activated for every worker; the site's cached pages purged" in (
            capsys.readouterr().out
        )
        # The worker's stored home page was purged by the command, and it loads the plugin.
        home = client.get("/", base_url="http://example.org")
        assert home.headers["Cache-Status"].endswith("stored")
        assert server.hooks.apply_filters("tests_cli_stamp", []) == ["stamp"]
        assert run("plugin", "list", "--json") == 0
        listed = {row["plugin"]: row for row in json.loads(capsys.readouterr().out)}
        assert listed[PLUGIN]["status"] == "active"
        assert run("plugin", "activate", PLUGIN) == 0
        assert "already active: nothing changed" in capsys.readouterr().out
        assert run("plugin", "deactivate", PLUGIN) == 0
        client.get("/", base_url="http://example.org")
        assert server.hooks.apply_filters("tests_cli_stamp", []) == []
    finally:
        server.close()


def test_an_unknown_plugin_is_refused_in_one_line(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("plugin", "activate", "no/such") == 1
    err = capsys.readouterr().err
    assert err == "sitecache: no installed plugin 'no/such' (see `sitecache plugin list`)\n"
