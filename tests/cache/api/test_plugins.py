"""Companion plugins: the switches over REST and each plugin's real work."""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from sitecache.cache.api import DomainMapping, DynamicFragments, PurgeWebhook
from tests.auth.conftest import FakeClock, build_site
from tests.cache.api.conftest import Api, add_page
from tests.conftest import AppFactory

BUILTIN = ["awaiting_moderation", "domain_mapping", "dynamic_fragments", "purge_webhook"]
NOTICE = '<p class="comment-awaiting-moderation">Your comment is awaiting moderation.</p>'


def test_the_list_shows_the_four_plugins_switched_off(api: Api) -> None:
    listing = api.json("GET", "/plugins")
    assert [plugin["key"] for plugin in listing] == BUILTIN
    for plugin in listing:
        assert plugin["title"]
        assert plugin["description"]
        assert plugin["enabled"] is False


def test_switches_are_stored_and_answered_as_the_full_list(api: Api) -> None:
    listing = api.json("POST", "/plugins", {"awaiting_moderation": True, "purge_webhook": True})
    assert {p["key"]: p["enabled"] for p in listing} == {
        "awaiting_moderation": True,
        "domain_mapping": False,
        "dynamic_fragments": False,
        "purge_webhook": True,
    }
    assert api.json("GET", "/plugins") == listing
    api.json("POST", "/plugins", {"awaiting_moderation": False})
    assert [p["key"] for p in api.json("GET", "/plugins") if p["enabled"]] == ["purge_webhook"]


@pytest.mark.parametrize(
    "body",
    [
        {"awaiting_moderation": True, "no_such_plugin": True},
        {"awaiting_moderation": True, "domain_mapping": 1},
        {"awaiting_moderation": "true"},
        {},
    ],
)
def test_an_unknown_key_or_a_non_boolean_changes_nothing(api: Api, body: dict[str, Any]) -> None:
    response = api.call("POST", "/plugins", body)
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_invalid_param"
    assert not any(plugin["enabled"] for plugin in api.json("GET", "/plugins"))


def test_a_switch_reaches_another_process_sharing_the_storage(
    app_factory: AppFactory, tmp_path: Path
) -> None:
    first = Api(build_site(app_factory(data_dir=str(tmp_path / "shared")), FakeClock()))
    other = app_factory(data_dir=str(tmp_path / "shared"))
    first.json("POST", "/plugins", {"awaiting_moderation": True})
    other.cache_api.tick(other.cache.engine.clock(), {})
    assert other.cache.store_filters == [other.cache_api.plugins.get("awaiting_moderation").strip]


def test_awaiting_moderation_strips_the_notice_before_the_page_is_stored(api: Api) -> None:
    add_page(api.site, "/post", f"<html><body>{'p' * 300}{NOTICE}<p>after</p></body></html>")
    api.json("POST", "/plugins", {"awaiting_moderation": True})
    api.page("/post")
    hit = api.page("/post")
    assert "; hit" in hit.headers["Cache-Status"]
    assert NOTICE not in hit.get_data(as_text=True)
    assert "<p>after</p>" in hit.get_data(as_text=True)


def test_without_the_plugin_the_notice_is_stored(api: Api) -> None:
    add_page(api.site, "/post", f"<html><body>{'p' * 300}{NOTICE}</body></html>")
    api.page("/post")
    assert NOTICE in api.page("/post").get_data(as_text=True)


def test_domain_mapping_serves_aliases_from_the_canonical_hosts_cache(api: Api) -> None:
    mapping: DomainMapping = api.site.app.cache_api.plugins.get("domain_mapping")
    mapping.set_aliases({"www.example.org": "example.org"})
    api.json("POST", "/plugins", {"domain_mapping": True})
    add_page(api.site, "/shared")
    stored = api.site.client().get("/shared", base_url="http://www.example.org")
    assert "stored" in stored.headers["Cache-Status"]
    hit = api.page("/shared")
    assert "; hit" in hit.headers["Cache-Status"]
    assert [row["url"] for row in api.json("GET", "/cache")] == ["http://example.org/shared"]
    api.json("POST", "/plugins", {"domain_mapping": False})
    alias = api.site.client().get("/shared", base_url="http://www.example.org")
    assert "detail=foreign_host" in alias.headers["Cache-Status"]


def test_dynamic_fragments_render_fresh_content_on_every_hit(api: Api) -> None:
    fragments: DynamicFragments = api.site.app.cache_api.plugins.get("dynamic_fragments")
    api.json("POST", "/plugins", {"dynamic_fragments": True})
    calls = iter(range(1, 100))
    fragments.renderers["counter"] = lambda environ: f"<b>visit {next(calls)}</b>"
    placeholder = fragments.placeholder("counter")
    add_page(api.site, "/live", f"<html><body>{'d' * 300}{placeholder}</body></html>")
    first = api.page("/live", **{"Accept-Encoding": "gzip"})
    second = api.page("/live", **{"Accept-Encoding": "gzip"})
    assert "stored" in first.headers["Cache-Status"]
    assert "; hit" in second.headers["Cache-Status"]
    assert "<b>visit 1</b>" in first.get_data(as_text=True)
    assert "<b>visit 2</b>" in second.get_data(as_text=True)
    assert "Content-Encoding" not in second.headers
    assert int(second.headers["Content-Length"]) == len(second.get_data())
    assert placeholder not in second.get_data(as_text=True)
    # The stored page keeps the placeholder.
    entry = api.site.app.cache.engine.load(
        next(iter(api.site.app.cache.engine.storage.keys_for("url", {"http://example.org/live"})))
    )
    assert entry is not None
    assert placeholder.encode() in entry.body


def test_dynamic_fragments_also_render_on_pages_that_bypass(api: Api) -> None:
    fragments: DynamicFragments = api.site.app.cache_api.plugins.get("dynamic_fragments")
    api.json("POST", "/plugins", {"dynamic_fragments": True})
    fragments.renderers["who"] = lambda environ: "<i>live</i>"
    add_page(api.site, "/cookie", f"<html>{fragments.placeholder('who')}</html>",
             headers={"Set-Cookie": "a=b"})  # fmt: skip
    response = api.page("/cookie")
    assert response.get_data(as_text=True) == "<html><i>live</i></html>"


def test_a_forged_placeholder_without_the_secret_is_left_alone(api: Api) -> None:
    fragments: DynamicFragments = api.site.app.cache_api.plugins.get("dynamic_fragments")
    api.json("POST", "/plugins", {"dynamic_fragments": True})
    fragments.renderers["admin"] = lambda environ: "SECRET"
    forged = "<!--sitecache-fragment:guess:admin-->"
    add_page(api.site, "/comment", f"<html>{'c' * 300}{forged}</html>")
    assert "SECRET" not in api.page("/comment").get_data(as_text=True)
    assert len(fragments.secret()) == 32


class Recorder(BaseHTTPRequestHandler):
    """Records POSTed JSON bodies; answers 500 to the first ``fail`` requests."""

    received: list[dict[str, Any]]
    fail: int

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        body = json.loads(self.rfile.read(length))
        if self.server.fail > 0:  # type: ignore[attr-defined]
            self.server.fail -= 1  # type: ignore[attr-defined]
            self.send_response(500)
        else:
            self.server.received.append(body)  # type: ignore[attr-defined]
            self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def receiver() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    server.received = []  # type: ignore[attr-defined]
    server.fail = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _webhook(api: Api, urls: list[str]) -> PurgeWebhook:
    webhook: PurgeWebhook = api.site.app.cache_api.plugins.get("purge_webhook")
    webhook.urls = urls
    webhook.backoff = 0.01
    api.json("POST", "/plugins", {"purge_webhook": True})
    return webhook


def test_every_purge_is_posted_to_the_webhook(api: Api, receiver: ThreadingHTTPServer) -> None:
    webhook = _webhook(api, [f"http://127.0.0.1:{receiver.server_address[1]}/purged"])
    add_page(api.site, "/a", headers={"Cache-Tag": "post-1"})
    api.page("/a")
    api.json("POST", "/cache", {"tag": "post-1"})
    api.json("POST", "/cache", {"url": "/a", "soft": True})
    assert webhook.wait(5)
    received = receiver.received  # type: ignore[attr-defined]
    assert [(item["scope"], item["urls"], item["tags"]) for item in received] == [
        ("tag", ["http://example.org/a"], ["post-1"]),
        ("url", [], []),
    ]
    assert received[1]["soft"] is True


def test_a_failing_webhook_is_retried_and_logged_without_blocking_the_purge(
    api: Api, receiver: ThreadingHTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.fail = 2  # type: ignore[attr-defined]
    dead = "http://127.0.0.1:9/nobody-listens"
    webhook = _webhook(api, [f"http://127.0.0.1:{receiver.server_address[1]}/", dead])
    webhook.retries = 2
    caplog.set_level(logging.WARNING, logger="sitecache.cache.plugins")
    started = time.monotonic()
    assert api.json("POST", "/cache", {})["scope"] == "site"
    assert time.monotonic() - started < 1.0
    assert webhook.wait(10)
    assert len(receiver.received) == 1  # type: ignore[attr-defined]
    assert (webhook.delivered, webhook.failed) == (1, 1)
    assert "gave up after 3 attempts" in caplog.text


def test_a_third_party_plugin_registers_through_the_entry_point_group(
    app_factory: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "thirdparty_cache_plugin.py").write_text(
        "class Banner:\n"
        "    key = 'banner'\n"
        "    title = 'Banner'\n"
        "    description = 'Adds a banner.'\n"
        "    def enable(self, cache):\n"
        "        cache.store_filters.append(self.add)\n"
        "    def disable(self, cache):\n"
        "        cache.store_filters.remove(self.add)\n"
        "    def add(self, body, url):\n"
        "        return body.replace(b'<body>', b'<body><p>banner</p>')\n",
        encoding="utf-8",
    )
    info = tmp_path / "thirdparty_cache_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: thirdparty-cache-plugin\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[sitecache.cache_plugins]\nbanner = thirdparty_cache_plugin:Banner\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "thirdparty_cache_plugin", raising=False)
    api = Api(build_site(app_factory(), FakeClock()))
    listing = api.json("GET", "/plugins")
    assert listing[-1] == {
        "key": "banner",
        "title": "Banner",
        "description": "Adds a banner.",
        "enabled": False,
    }
    api.json("POST", "/plugins", {"banner": True})
    add_page(api.site, "/x", f"<html><body>{'x' * 300}</body></html>")
    api.page("/x")
    assert "<p>banner</p>" in api.page("/x").get_data(as_text=True)
