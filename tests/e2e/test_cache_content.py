"""The page cache and the content site end to end: an edit over REST purges exactly its pages.

A real gunicorn (2 workers) with the disk cache; an administrator and an application password
made with the real command line; posts created, edited, unpublished and deleted over REST.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

from sitecache.cache import CacheEngine, DiskStorage
from tests.e2e.server import LiveServer
from tests.e2e.test_auth import basic, cli

POSTS = "/site-json/site/v2/posts"
NOTICE = b'<p class="comment-awaiting-moderation">Your comment is awaiting moderation.</p>'


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def cache_status(server: LiveServer, path: str) -> str:
    return server.request("GET", path).headers.get("cache-status", "")


def warm(server: LiveServer, path: str) -> None:
    """Request until the page is a hit (each worker may need its first look)."""
    for _ in range(6):
        if cache_status(server, path).startswith("sitecache; hit"):
            return
    raise AssertionError(f"{path} never became a hit")


@pytest.fixture(scope="module")
def admin(live_server: LiveServer) -> dict[str, str]:
    cli(live_server, "init", "--login", "owner")
    output = cli(live_server, "app-password", "create", "owner", "--name", "e2e cache")
    match = re.search(r"password:\s+((?:\w{4} ){5}\w{4})", output)
    assert match is not None, output
    return {**basic("owner", match.group(1)), "Content-Type": "application/json"}


def rest(server: LiveServer, method: str, path: str, auth: dict[str, str], **body: Any) -> Any:
    response = server.request(method, path, json.dumps(body) if body else None, auth)
    assert response.status in (200, 201), response.body
    return json.loads(response.body)


def test_an_edit_over_rest_purges_its_related_pages_and_no_others(
    live_server: LiveServer, admin: dict[str, str]
) -> None:
    news = rest(live_server, "POST", "/site-json/site/v2/categories", admin, name="News")
    other = rest(live_server, "POST", "/site-json/site/v2/categories", admin, name="Other")
    post = rest(live_server, "POST", POSTS, admin, title="Cached story", status="publish",
                content="Body", categories=[news["id"]])  # fmt: skip
    unrelated = rest(live_server, "POST", POSTS, admin, title="Quiet story", status="publish",
                     content="Body", categories=[other["id"]])  # fmt: skip
    pages = {
        "post": path_of(post["link"]),
        "home": "/",
        "category": path_of(news["link"]),
        "feed": "/feed/",
        "unrelated": path_of(unrelated["link"]),
        "other_category": path_of(other["link"]),
    }
    for path in pages.values():
        warm(live_server, path)

    rest(live_server, "POST", f"{POSTS}/{post['id']}", admin, title="Edited story")
    # The edit has returned: no page that shows the post may be served from before it.
    for name in ("post", "home", "category", "feed"):
        response = live_server.request("GET", pages[name])
        assert not response.headers["cache-status"].startswith("sitecache; hit"), name
        assert b"Cached story" not in response.body, name
        assert b"Edited story" in response.body, name
    for name in ("unrelated", "other_category"):
        assert cache_status(live_server, pages[name]).startswith("sitecache; hit"), name

    warm(live_server, "/")
    rest(live_server, "POST", f"{POSTS}/{post['id']}", admin, status="draft")
    home = live_server.request("GET", "/")
    assert b"Edited story" not in home.body
    assert live_server.request("GET", pages["post"]).status == 404
    assert cache_status(live_server, pages["unrelated"]).startswith("sitecache; hit")

    warm(live_server, "/")
    warm(live_server, pages["unrelated"])
    rest(live_server, "DELETE", f"{POSTS}/{unrelated['id']}?force=true", admin)
    assert b"Quiet story" not in live_server.request("GET", "/").body
    assert live_server.request("GET", pages["unrelated"]).status == 404


def test_a_held_comments_notice_never_reaches_the_cache(
    live_server: LiveServer, admin: dict[str, str]
) -> None:
    post = rest(live_server, "POST", POSTS, admin, title="Open for comments", status="publish",
                content="Say something")  # fmt: skip
    path = path_of(post["link"])
    warm(live_server, path)
    posted = live_server.request(
        "POST",
        "/comment-post",
        urlencode(
            {
                "comment_post_ID": post["id"],
                "author": "Newcomer",
                "email": "newcomer@example.com",
                "comment": "Hello there",
            }
        ),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert posted.status == 302
    own = live_server.request("GET", path_of(posted.headers["location"]))
    assert NOTICE in own.body
    assert "stored" not in own.headers["cache-status"]
    assert NOTICE not in live_server.request("GET", path).body
    storage = DiskStorage(live_server.data_dir / "cache")
    engine = CacheEngine(storage)
    for key in storage.keys_for("host", None):
        entry = engine.load(key)
        assert entry is None or NOTICE not in entry.body
    storage.close()


def test_an_unlocked_protected_post_never_reaches_the_cache_or_another_visitor(
    live_server: LiveServer, admin: dict[str, str]
) -> None:
    secret_body = b"Only for those who know the word."
    post = rest(live_server, "POST", POSTS, admin, title="Locked story", status="publish",
                content=secret_body.decode(), password="swordfish")  # fmt: skip
    path = path_of(post["link"])
    warm(live_server, path)  # the anonymous password form may be cached
    form = live_server.request("GET", path)
    assert b"This content is password protected." in form.body
    assert secret_body not in form.body

    answered = live_server.request(
        "POST",
        "/postpass",
        urlencode({"post_id": post["id"], "post_password": "swordfish"}),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answered.status == 303
    assert "hit" not in answered.headers["cache-status"]
    assert "stored" not in answered.headers["cache-status"]
    (cookie,) = answered.header_values("set-cookie")
    assert "swordfish" not in cookie
    pair = cookie.split(";", 1)[0]
    for _ in range(3):  # every worker: never from the cache, never stored
        own = live_server.request("GET", path, headers={"Cookie": pair})
        assert secret_body in own.body
        assert "hit" not in own.headers["cache-status"]
        assert "stored" not in own.headers["cache-status"]
    later = live_server.request("GET", path)
    assert secret_body not in later.body
    assert b"This content is password protected." in later.body
    storage = DiskStorage(live_server.data_dir / "cache")
    engine = CacheEngine(storage)
    for key in storage.keys_for("host", None):
        entry = engine.load(key)
        assert entry is None or secret_body not in entry.body
    storage.close()
