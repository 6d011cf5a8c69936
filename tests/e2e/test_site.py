"""Browse the demo site through gunicorn: home, post, archive, search, feed, sitemap, comment."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from urllib.parse import urlencode, urlsplit

import pytest

from sitecache.auth import AuthService, PasswordHasher
from sitecache.hooks import Hooks
from sitecache.site import ContentService
from sitecache.site.demo import fill_demo
from tests.e2e.server import LiveServer

NOTICE = b'<p class="comment-awaiting-moderation">Your comment is awaiting moderation.</p>'


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("site")
    auth = AuthService(root / "var", hasher=PasswordHasher(n=1024))
    fill_demo(ContentService(auth.store, Hooks()), auth.users)
    auth.store.close()
    server = LiveServer(data_dir=root / "var", config_lines=["password_hash_cost = 1024"])
    server.start()
    yield server
    server.stop()


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_browsing_the_demo_site(demo_server: LiveServer) -> None:
    home = demo_server.request("GET", "/")
    assert home.status == 200
    assert home.headers["x-site-page-type"] == "home, frontpage"
    assert "set-cookie" not in home.headers
    first = re.search(rb'<h2><a href="([^"]+)">', home.body)
    assert first is not None
    post = demo_server.request("GET", path_of(first.group(1).decode()))
    assert post.status == 200
    assert post.headers["x-site-page-type"] == "single"
    assert re.match(r"post-\d+,term-\d+", post.headers["cache-tag"])
    assert 'rel="alternate"; title="JSON"; type="application/json"' in post.headers["link"]
    archive = re.search(rb'href="([^"]+/category/[^"]+)"', post.body)
    assert archive is not None
    listing = demo_server.request("GET", path_of(archive.group(1).decode()))
    assert listing.headers["x-site-page-type"] == "category, archives"
    moved = demo_server.request("GET", "/?s=gzip")
    assert moved.status == 301
    found = demo_server.request("GET", path_of(moved.headers["location"]))
    assert found.status == 200
    assert found.headers["x-site-page-type"] == "search"
    feed = demo_server.request("GET", "/feed/")
    assert feed.headers["content-type"].startswith("application/rss+xml")
    assert len(ElementTree.fromstring(feed.body).findall("channel/item")) == 10  # noqa: S314
    sitemap = demo_server.request("GET", "/sitemap.xml")
    assert sitemap.body.count(b"<loc>") > 200
    assert demo_server.request("GET", "/page/2/").status == 200
    assert demo_server.request("GET", "/no-such-thing/").status == 404


def test_a_held_comment_through_gunicorn_reaches_only_its_author(demo_server: LiveServer) -> None:
    home = demo_server.request("GET", "/")
    link = re.search(rb'<h2><a href="([^"]+)">', home.body)
    assert link is not None
    post_path = path_of(link.group(1).decode())
    page = demo_server.request("GET", post_path)
    post_id = re.search(rb'name="comment_post_ID" value="(\d+)"', page.body)
    assert post_id is not None
    form = {
        "comment_post_ID": post_id.group(1).decode(),
        "author": "Newcomer",
        "email": "newcomer@example.com",
        "comment": "First time here <b>hello</b>",
    }
    posted = demo_server.request(
        "POST",
        "/comment-post",
        urlencode(form),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert posted.status == 302
    assert posted.header_values("set-cookie")[0].startswith("sitecache_comment_author_")
    own = demo_server.request("GET", path_of(posted.headers["location"]))
    assert NOTICE in own.body
    assert b"&lt;b&gt;hello&lt;/b&gt;" in own.body
    assert own.headers["cache-control"] == "no-store, private"
    assert NOTICE not in demo_server.request("GET", post_path).body
