"""``sitecache cache settings|enable|disable`` and ``flush --post-id``: the REST API's rules,
messages and purge listeners from the command line (#19 point 7)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from sitecache.cli import main
from tests.auth.conftest import FakeClock, build_site
from tests.cache.api.conftest import Api, add_page
from tests.conftest import AppFactory


class Receiver:
    """A loopback HTTP server that keeps the JSON bodies POSTed to it."""

    def __init__(self) -> None:
        received: list[dict[str, Any]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.received = received
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/purged"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


@pytest.fixture
def setup(
    app_factory: AppFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    receiver: Receiver,
) -> tuple[Api, list[str]]:
    """A site whose code points the purge webhook at `receiver` (switched on), with two
    stored pages, and the command-line options that reach it."""
    for name in ("SITECACHE_CONFIG", "SITECACHE_DATA_DIR", "SITECACHE_SITE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SITECACHE_TEST_WEBHOOK", receiver.url)
    plugin = "tests.cache.api.webhook_plugin:activate"
    data_dir = tmp_path / "var"
    app = app_factory(data_dir=str(data_dir), plugins=[plugin])
    api = Api(build_site(app, FakeClock()))
    api.json("POST", "/plugins", {"purge_webhook": True})
    for path in ("/a", "/b"):
        add_page(api.site, path, headers={"Cache-Tag": f"tag{path.replace('/', '-')}"})
        api.page(path)
    config = tmp_path / "sitecache.toml"
    config.write_text(
        f'site_url = "http://example.org"\ncache_timers = false\nplugins = ["{plugin}"]\n',
        encoding="utf-8",
    )
    return api, ["--config", str(config), "--data-dir", str(data_dir), "cache"]


def run(options: list[str], *arguments: str) -> int:
    return main([*options, *arguments])


def test_settings_reads_every_setting_and_one(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    api, options = setup
    assert run(options, "settings", "--json") == 0
    assert json.loads(capsys.readouterr().out) == api.json("GET", "/settings")
    assert run(options, "settings", "max_age") == 0
    assert capsys.readouterr().out == "3600\n"
    assert run(options, "settings", "known_users") == 0
    assert capsys.readouterr().out == "bypass\n"
    assert run(options, "settings", "pages.feed", "--json") == 0
    assert json.loads(capsys.readouterr().out) is False


@pytest.mark.parametrize(
    ("arguments", "key", "expected"),
    [
        (("max_age", "600"), "max_age", 600),
        (("known_users", "anonymous"), "known_users", "anonymous"),
        (("rejected_uris", '["^/private/"]'), "rejected_uris", ["^/private/"]),
        (("pages.feed", "true"), "pages", {"feed": True}),
        (("preload_posts", "all"), "preload_posts", "all"),
        (("preload_posts", "25"), "preload_posts", 25),
        (("compression", "false"), "compression", False),
    ],
)
def test_settings_sets_one_value_and_the_server_sees_it(
    setup: tuple[Api, list[str]], arguments: tuple[str, str], key: str, expected: Any
) -> None:
    api, options = setup
    assert run(options, "settings", *arguments) == 0
    stored = api.json("GET", "/settings")[key]
    if isinstance(expected, dict):
        assert expected.items() <= stored.items()
    else:
        assert stored == expected


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_age", "-5"),
        ("max_age", "soon"),
        ("known_users", "everyone"),
        ("rejected_uris", "/a,/b"),
        ("rejected_uris", '["(unclosed"]'),
        ("preload_interval", "5"),
        ("storage", "redis"),
        ("no_such_setting", "1"),
    ],
)
def test_a_refused_value_exits_1_with_the_rest_apis_own_message(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str], key: str, value: str
) -> None:
    api, options = setup
    before = api.json("GET", "/settings")
    try:
        json_value: Any = json.loads(value)
    except ValueError:
        json_value = value
    rest = api.call("POST", "/settings", {key: json_value})
    assert rest.status_code == 400
    rest_message = rest.get_json()["data"]["details"][key]["message"]
    assert run(options, "settings", key, value) == 1
    error = capsys.readouterr().err
    assert error == f"sitecache: {rest_message}\n"
    assert api.json("GET", "/settings") == before


def test_a_refusal_with_json_prints_the_rest_answer(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    api, options = setup
    assert run(options, "settings", "max_age", "-1", "--json") == 1
    printed = json.loads(capsys.readouterr().out)
    rest = api.call("POST", "/settings", {"max_age": -1}).get_json()
    assert printed == rest


def test_reading_an_unknown_setting_exits_1(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, options = setup
    assert run(options, "settings", "nope") == 1
    assert capsys.readouterr().err == "sitecache: nope is not a valid property of Object.\n"


def test_disable_and_enable_switch_caching_for_the_server(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    api, options = setup
    assert run(options, "disable") == 0
    assert "caching disabled" in capsys.readouterr().out
    assert api.json("GET", "/settings")["enabled"] is False
    api.site.app.cache.engine.reload_value("settings")
    assert "detail=disabled" in api.page("/a").headers["Cache-Status"]
    assert run(options, "enable", "--json") == 0
    assert json.loads(capsys.readouterr().out)["enabled"] is True
    api.site.app.cache.engine.reload_value("settings")
    # Turning caching off purged what it held: nothing older than the switch comes back.
    assert api.page("/a").headers["Cache-Status"].endswith("stored")
    assert "hit" in api.page("/a").headers["Cache-Status"]


def test_flush_fires_the_same_webhook_as_a_rest_purge(
    setup: tuple[Api, list[str]], receiver: Receiver
) -> None:
    api, options = setup
    assert api.json("POST", "/cache", {"tag": "tag-a"})["deleted"] == 1
    assert api.site.app.cache_api.plugins.get("purge_webhook").wait()
    assert run(options, "flush", "--tag", "tag-b") == 0  # waits for its deliveries
    assert [(body["scope"], body["tags"], body["urls"]) for body in receiver.received] == [
        ("tag", ["tag-a"], ["http://example.org/a"]),
        ("tag", ["tag-b"], ["http://example.org/b"]),
    ]


def test_flush_by_post_id_purges_the_posts_related_pages(
    setup: tuple[Api, list[str]], capsys: pytest.CaptureFixture[str], receiver: Receiver
) -> None:
    api, options = setup
    app = api.site.app
    author = api.site.users["administrator"].id
    post = app.content.create_post(title="Hello", status="publish", author=author)
    add_page(api.site, "/hello/", headers={"Cache-Tag": f"post-{post.id}"})
    api.page("/hello/")
    assert run(options, "flush", "--post-id", str(post.id), "--json") == 0
    answer = json.loads(capsys.readouterr().out)
    assert (answer["scope"], answer["deleted"], answer["urls"]) == (
        "post_id",
        1,
        ["http://example.org/hello/"],
    )
    assert receiver.received[-1]["scope"] == "post_id"


@pytest.mark.parametrize(
    ("value", "message"),
    [("999999", "Invalid post ID."), ("abc", "post_id is not of type integer.")],
)
def test_flush_by_an_unknown_or_bad_post_id_exits_1(
    setup: tuple[Api, list[str]],
    capsys: pytest.CaptureFixture[str],
    value: str,
    message: str,
) -> None:
    _, options = setup
    assert run(options, "flush", "--post-id", value) == 1
    assert capsys.readouterr().err == f"sitecache: {message}\n"
