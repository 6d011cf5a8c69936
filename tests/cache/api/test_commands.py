"""``sitecache cache status|stats|list|flush|preload`` on the storage a site uses."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from sitecache.auth import AuthService, PasswordHasher
from sitecache.cli import main
from tests.auth.conftest import FakeClock, build_site
from tests.cache.api.conftest import Api, add_page
from tests.conftest import AppFactory


@pytest.fixture
def setup(
    app_factory: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Api, list[str]]:
    """A site with three stored pages, and the command-line options that reach its storage."""
    for name in ("SITECACHE_CONFIG", "SITECACHE_DATA_DIR", "SITECACHE_SITE_URL"):
        monkeypatch.delenv(name, raising=False)
    data_dir = tmp_path / "var"
    api = Api(build_site(app_factory(data_dir=str(data_dir)), FakeClock()))
    for path in ("/a", "/b", "/c"):
        add_page(api.site, path, headers={"Cache-Tag": f"tag{path.replace('/', '-')}"})
        api.page(path)
    config = tmp_path / "sitecache.toml"
    config.write_text('site_url = "http://example.org"\n', encoding="utf-8")
    return api, ["--config", str(config), "--data-dir", str(data_dir), "cache"]


def run(options: list[str], *arguments: str) -> int:
    return main([*options, *arguments])


def output(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


def test_status_reads_the_servers_storage(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    api, options = setup
    assert run(options, "status", "--json") == 0
    status = output(capsys)
    assert status["storage"]["backend"] == "disk"
    assert status["storage"]["location"] == api.site.app.cache.engine.storage.location
    assert run(options, "status") == 0
    assert "storage:     disk at" in capsys.readouterr().out


def test_stats_and_list_show_the_stored_pages(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, options = setup
    assert run(options, "stats", "--json") == 0
    assert output(capsys)["entries"]["total"] == 3
    assert run(options, "list", "--json", "--per-page", "2") == 0
    listing = output(capsys)
    assert listing["total"] == 3
    assert len(listing["entries"]) == 2
    assert run(options, "list", "--search", "/b") == 0
    text = capsys.readouterr().out
    assert "http://example.org/b" in text
    assert "1 of 1 entries" in text


def test_a_bad_list_option_exits_non_zero_with_one_line(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, options = setup
    assert run(options, "list", "--per-page", "500") == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "--per-page must be between 1 and 100" in error


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--per-page", "0"), "--per-page must be between 1 and 100"),
        (("--per-page", "ten"), "--per-page is not of type integer (1 to 100)"),
        (("--page", "0"), "--page must be at least 1"),
        (("--page", "x", "--per-page", "0"), "--page is not of type integer (1 or more)"),
    ],
)
def test_a_bad_list_option_states_the_allowed_values(
    setup: tuple[Api, list[str]],
    capsys: pytest.CaptureFixture[str],
    arguments: tuple[str, ...],
    message: str,
) -> None:
    # #16: the command line said only "Invalid parameter(s): per_page".
    _, options = setup
    assert run(options, "list", *arguments) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert message in error


@pytest.mark.parametrize(
    ("arguments", "deleted", "left"),
    [
        ((), 3, 0),
        (("--all",), 3, 0),
        (("--url", "/a"), 1, 2),
        (("--url", "/a", "--url", "http://example.org/b"), 2, 1),
        (("--tag", "tag-c"), 1, 2),
        (("--expired",), 0, 3),
    ],
)
def test_flush_purges_the_scope_asked_for(
    setup: tuple[Api, list[str]],
    capsys: pytest.CaptureFixture[str],
    arguments: tuple[str, ...],
    deleted: int,
    left: int,
) -> None:
    api, options = setup
    assert run(options, "flush", "--json", *arguments) == 0
    assert output(capsys)["deleted"] == deleted
    assert len(api.json("GET", "/cache")) == left


def test_flush_of_a_foreign_url_fails_with_a_reason(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, options = setup
    assert run(options, "flush", "--url", "http://evil.example/") == 1
    assert "does not serve" in capsys.readouterr().err


def test_preload_is_run_by_the_server_and_followed(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    api, options = setup
    api.site.app.hooks.add_filter("cache_preload_urls", lambda urls, settings: [*urls, "/a"])
    timers = api.site.app.cache_api.timers
    timers.interval = 0.05
    timers.start()
    try:
        assert run(options, "preload", "--json") == 0
    finally:
        timers.stop()
    progress = output(capsys)
    assert (progress["done"], progress["total"], progress["running"]) == (2, 2, False)


def test_preload_without_a_server_fails_with_a_reason(
    setup: tuple[Api, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sitecache.cache.api import commands

    _, options = setup
    monkeypatch.setattr(commands, "PICKUP_TIMEOUT", 0.3)
    assert run(options, "preload") == 1
    assert "no running server" in capsys.readouterr().err


def test_a_broken_storage_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    AuthService(tmp_path / "var", hasher=PasswordHasher(n=1024)).store.close()  # a site
    (tmp_path / "var" / "cache").write_text("not a directory", encoding="utf-8")
    assert main(["--data-dir", str(tmp_path / "var"), "cache", "stats"]) == 1
    error = capsys.readouterr().err
    assert "cache storage failed" in error
    assert error.count("\n") == 1


def test_the_timer_thread_is_not_left_running(setup: tuple[Api, list[str]]) -> None:
    api, _ = setup
    assert not api.site.app.cache_api.timers.running
    assert not any(thread.name == "sitecache-timers" for thread in threading.enumerate())


def test_flush_removes_static_file_copies_too(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    api, options = setup
    api.json("POST", "/settings", {"static_files": True})
    add_page(api.site, "/static/")
    api.page("/static/")
    page = api.site.app.cache_api.static.root / "example.org" / "static" / "index.html"  # type: ignore[union-attr]
    assert page.exists()
    assert run(options, "flush", "--url", "/static/") == 0
    assert not page.exists()


def test_list_shows_each_entrys_variant(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    # Attack report item 14: the mobile and desktop copies of a page were two identical lines.
    api, options = setup
    api.json("POST", "/settings", {"mobile": True})  # purges the desktop copies
    for agent in ("Mozilla/5.0 (iPhone)", "Mozilla/5.0 (X11; Linux)"):
        assert api.page("/a", **{"User-Agent": agent}).headers["Cache-Status"].endswith("stored")
    assert run(options, "list", "--search", "/a") == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.split()[1] for line in lines[:-1]) == ["-", "mobile"]
    assert all(line.endswith("http://example.org/a") for line in lines[:-1])
    assert lines[-1] == "2 of 2 entries (page 1)"


@pytest.mark.parametrize(
    "command",
    [
        ["status"],
        ["stats"],
        ["list"],
        ["flush"],
        ["flush", "--all"],
        ["flush", "--post-id", "3"],
        ["settings"],
        ["enable"],
    ],
)
def test_every_cache_command_reports_a_broken_storage_alike(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    # docs/reference/cli.md: the cache commands exit 1 with a one-line reason on failure,
    # whether they run on the site's application (flush with --post-id, settings, enable)
    # or on the cache's own API (a plain flush) or engine (status, stats, list).
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    AuthService(tmp_path / "var", hasher=PasswordHasher(n=1024)).store.close()  # a site
    (tmp_path / "var" / "cache").write_text("not a directory", encoding="utf-8")
    assert main(["--data-dir", str(tmp_path / "var"), "cache", *command]) == 1
    error = capsys.readouterr().err
    assert error.startswith("sitecache: the cache storage failed: ")
    assert error.count("\n") == 1
