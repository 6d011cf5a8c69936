"""Validation rough edges found by #16's trial run: each a clear 400 or the right answer."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from sitecache.cache.api.commands import progress_bar
from sitecache.cli import main
from tests.cache.api.conftest import Api, add_page
from tests.cache.api.test_preload import serve


def fill(api: Api, *paths: str) -> None:
    for path in paths:
        add_page(api.site, path)
        assert "stored" in api.page(path).headers["Cache-Status"]


def error(response: Any) -> dict[str, Any]:
    body: dict[str, Any] = response.get_json()
    assert response.status_code == 400, body
    assert body["code"] == "rest_invalid_param"
    return body


@pytest.mark.parametrize("field", ["all", "expired"])
def test_a_switch_sent_as_false_says_it_can_only_be_true(api: Api, field: str) -> None:
    # Before: "all is not 1."
    body = error(api.call("POST", "/cache", {field: False}))
    message = body["data"]["details"][field]["message"]
    assert message == f'{field} can only be true: send {{"{field}": true}}, or leave {field} out.'


@pytest.mark.parametrize(
    "field", ["rejected_uris", "ignored_query_params", "rejected_user_agents", "mobile_user_agents"]
)
def test_a_list_setting_sent_as_a_string_is_refused(api: Api, field: str) -> None:
    # Before: "^/a,^/b" was split at the comma into two live patterns.
    before = api.json("GET", "/settings")[field]
    body = error(api.call("POST", "/settings", {field: "^/private,^/secret"}))
    detail = body["data"]["details"][field]
    assert detail["code"] == "rest_invalid_type"
    assert detail["message"].startswith(f"{field} is not of type array")
    assert api.json("GET", "/settings")[field] == before


def test_errors_about_urls_are_reported_under_urls(api: Api) -> None:
    body = error(api.call("POST", "/cache", {"urls": ["/a", "http://evil.example/b"]}))
    assert list(body["data"]["details"]) == ["urls"]
    message = body["data"]["details"]["urls"]["message"]
    assert message == "urls[1] is on a host this site does not serve (evil.example)."
    body = error(api.call("POST", "/cache", {"url": "/a/../b"}))
    assert list(body["data"]["details"]) == ["url"]
    assert body["data"]["details"]["url"]["message"].startswith("url escapes the cache")


def test_the_cache_listing_links_its_neighbour_pages(api: Api) -> None:
    fill(api, "/a", "/b", "/c", "/d", "/e")
    first = api.call("GET", "/cache", query={"per_page": 2, "search": "example"})
    assert first.headers["X-Site-TotalPages"] == "3"
    links = first.headers["Link"]
    assert 'rel="prev"' not in links
    next_page = re.search(r"<([^>]+)>; rel=\"next\"", links)
    assert next_page is not None
    assert next_page.group(1) == (
        "http://example.org/site-json/site-cache/v1/cache?per_page=2&search=example&page=2"
    )
    middle = api.call("GET", "/cache", query={"per_page": 2, "page": 2}).headers["Link"]
    assert 'page=1>; rel="prev"' in middle
    assert 'page=3>; rel="next"' in middle
    last = api.call("GET", "/cache", query={"per_page": 2, "page": 3}).headers["Link"]
    assert 'rel="next"' not in last
    only = ", ".join(api.call("GET", "/cache").headers.getlist("Link"))
    assert 'rel="next"' not in only
    assert 'rel="prev"' not in only


def test_preload_visits_are_counted_apart_from_the_visitors(api: Api) -> None:
    paths = serve(api, 3)
    api.page(paths[0])  # one visitor: a miss
    api.json("POST", "/preload", {"enable": True})
    api.site.app.cache_api.preloader.wait(10)
    stats = api.json("GET", "/stats")
    assert (stats["requests"]["miss"], stats["requests"]["hit"]) == (1, 0)
    # home and the two pages not visited yet are misses, the visited one a hit
    assert stats["preload"] == {"hit": 1, "stale": 0, "miss": 3, "bypass": 0}


def test_one_deleted_entry_is_said_in_the_singular(
    api: Api, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    fill(api, "/one", "/two", "/three")
    config = tmp_path / "sitecache.toml"
    config.write_text('site_url = "http://example.org"\n', encoding="utf-8")
    options = ["--config", str(config), "--data-dir", str(api.site.app.data_dir), "cache", "flush"]
    assert main([*options, "--url", "/one"]) == 0
    assert capsys.readouterr().out.startswith("1 entry deleted (")
    assert main(options) == 0
    assert capsys.readouterr().out.startswith("2 entries deleted (")
    assert main(options) == 0
    assert capsys.readouterr().out.startswith("0 entries deleted (")


@pytest.mark.parametrize("width", [80, 60])
def test_the_progress_bar_keeps_the_count_visible(width: int) -> None:
    # Before: at 80 columns the URL being visited pushed the count off the line.
    console = Console(file=io.StringIO(), width=width, force_terminal=True, color_system=None)
    bar = progress_bar(console)
    url = "http://example.org/2026/11/a-very-long-post-slug-that-goes-on-and-on-and-on/"
    task = bar.add_task("preload", total=283, current=url)
    bar.update(task, completed=123)
    console.print(bar.make_tasks_table(bar.tasks))
    [line] = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert "123/283" in line
    assert len(line) <= width
    assert line.startswith("preload 123/283")
    assert "http://example" in line


def test_stats_on_the_command_line_show_preload_apart(
    api: Api, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    config = tmp_path / "sitecache.toml"
    config.write_text('site_url = "http://example.org"\n', encoding="utf-8")
    options = ["--config", str(config), "--data-dir", str(api.site.app.data_dir), "cache", "stats"]
    assert main(options) == 0
    assert "preload:  0 hit, 0 stale, 0 miss, 0 bypass" in capsys.readouterr().out
    assert main([*options, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["preload"]["miss"] == 0
