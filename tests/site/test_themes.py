"""Themes (`sitecache.site.themes`) and ``/site/v2/themes``: discovery through entry points,
permissions, switching for every process, the page cache purged by a switch."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.site.themes import BUILTIN_THEME, Theme, discover_themes
from tests.conftest import AppFactory
from tests.site.test_extensions import admin_headers, call

SITE = "http://example.org"
MARKER = "QUIET THEME HOME"


def quiet_theme(root: Path) -> Theme:
    """A theme overriding only the home page's template."""
    directory = root / "quiet-templates"
    directory.mkdir(exist_ok=True)
    (directory / "list.html").write_text(
        f"<!doctype html><html><body><p>{MARKER}</p></body></html>\n", encoding="utf-8"
    )
    return Theme("quiet", "Quiet", "0.3", "A quiet <test> theme.", directory, tags=("blog",))


def with_theme(app: App, root: Path) -> App:
    theme = quiet_theme(root)
    app.themes.discover = lambda: [BUILTIN_THEME, theme]
    return app


def home(app: App) -> tuple[str, str]:
    response = Client(app, use_cookies=False).get("/", base_url=SITE)
    return response.get_data(as_text=True), str(response.headers.get("Cache-Status", ""))


def test_themes_are_discovered_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = tmp_path / "found-templates"
    templates.mkdir()
    (tmp_path / "tests_found_theme.py").write_text(
        "class THEME:\n    name = 'Found'\n    version = '1.0'\n"
        "    description = 'Found by its entry point.'\n"
        f"    template_directory = {str(templates)!r}\n",
        encoding="utf-8",
    )
    info = tmp_path / "tests_found_theme-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tests-found-theme\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[sitecache.themes]\nfound = tests_found_theme:THEME\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    themes = {theme.stylesheet: theme for theme in discover_themes()}
    assert themes["sitecache"] == BUILTIN_THEME
    assert (themes["found"].name, themes["found"].template_directory) == ("Found", templates)
    monkeypatch.delitem(sys.modules, "tests_found_theme", raising=False)


def test_switching_purges_the_cache_and_every_worker_renders_the_new_theme(
    app_factory: AppFactory, tmp_path: Path
) -> None:
    first = with_theme(app_factory(application_passwords="on"), tmp_path)
    second = with_theme(app_factory(application_passwords="on"), tmp_path)
    headers = admin_headers(first)
    home(first)
    body, status = home(first)
    assert status.startswith("sitecache; hit")
    assert MARKER not in body

    switched = call(Client(first), "POST", "/site/v2/themes/quiet", headers, {"status": "active"})
    assert (switched.status_code, switched.get_json()["status"]) == (200, "active")
    body, status = home(second)  # the stored page was purged; the other worker re-renders
    assert not status.startswith("sitecache; hit")
    assert MARKER in body
    listed = call(Client(second), "GET", "/site/v2/themes", headers)
    assert {item["stylesheet"]: item["status"] for item in listed.get_json()} == {
        "sitecache": "inactive",
        "quiet": "active",
    }
    assert listed.headers["X-Site-Total"] == "2"

    call(Client(second), "POST", "/site/v2/themes/sitecache", headers, {"status": "active"})
    body, _ = home(first)
    assert MARKER not in body
    assert "<html" in body


def test_themes_follow_the_capabilities(app_factory: AppFactory, tmp_path: Path) -> None:
    app = with_theme(app_factory(application_passwords="on"), tmp_path)
    client = Client(app)
    author = admin_headers(app, "author")
    anonymous = call(client, "GET", "/site/v2/themes")
    assert (anonymous.status_code, anonymous.get_json()["code"]) == (401, "rest_cannot_view_themes")
    assert call(client, "GET", "/site/v2/themes", author).status_code == 403
    active = call(client, "GET", "/site/v2/themes?status=active", author)
    assert [item["stylesheet"] for item in active.get_json()] == ["sitecache"]
    assert call(client, "GET", "/site/v2/themes/sitecache", author).status_code == 200
    item = call(client, "GET", "/site/v2/themes/sitecache")
    assert (item.status_code, item.get_json()["code"]) == (401, "rest_cannot_view_active_theme")
    assert call(client, "GET", "/site/v2/themes/quiet", author).status_code == 403
    refused = call(client, "POST", "/site/v2/themes/quiet", author, {"status": "active"})
    assert (refused.status_code, refused.get_json()["code"]) == (403, "rest_cannot_switch_themes")
    assert app.themes.active().stylesheet == "sitecache"
    admin = admin_headers(app)
    missing: Any = call(client, "POST", "/site/v2/themes/nope", admin, {"status": "active"})
    assert (missing.status_code, missing.get_json()["code"]) == (404, "rest_theme_not_found")
    described = call(client, "GET", "/site/v2/themes/quiet", admin).get_json()
    assert described["description"] == {
        "raw": "A quiet <test> theme.",
        "rendered": "A quiet &lt;test&gt; theme.",
    }
