"""Sticky posts: first on the home page's first page only, filtered by REST's ``sticky``."""

from __future__ import annotations

import json

from werkzeug.test import Client

from sitecache.app import App
from sitecache.site.models import Post
from tests.site.conftest import SmallSite

SITE = "http://example.org"


def titles_in_order(body: bytes, posts: list[Post]) -> list[str]:
    """The titles of ``posts`` in the order they appear in ``body``."""
    text = body.decode()
    found = [(text.find(post.title), post.title) for post in posts if post.title in text]
    return [title for _, title in sorted(found)]


def make_posts(app: App, site: SmallSite, count: int) -> list[Post]:
    """``count`` published posts, oldest first, the oldest sticky."""
    return [
        app.content.create_post(
            title=f"Entry number {n:02d}",
            status="publish",
            author=site.author,
            date_gmt=1_700_000_100 + n * 60,
            sticky=n == 0,
        )
        for n in range(count)
    ]


def test_a_sticky_post_comes_first_on_the_home_page(app: App, site: SmallSite) -> None:
    posts = make_posts(app, site, 3)
    body = Client(app).get("/", base_url=SITE).data
    assert titles_in_order(body, posts) == [
        "Entry number 00",
        "Entry number 02",
        "Entry number 01",
    ]


def test_a_sticky_post_off_the_first_page_is_brought_to_it_once(app: App, site: SmallSite) -> None:
    app.content.update_option("posts_per_page", 2)
    posts = make_posts(app, site, 4)
    first = Client(app).get("/", base_url=SITE).data
    assert titles_in_order(first, posts) == [
        "Entry number 00",
        "Entry number 03",
        "Entry number 02",
    ]
    assert b"Entry number 01" not in first


def test_stickiness_applies_to_the_first_page_only_and_not_to_archives(
    app: App, site: SmallSite
) -> None:
    app.content.update_option("posts_per_page", 2)
    posts = make_posts(app, site, 4)
    second = Client(app).get("/page/2/", base_url=SITE).data
    assert titles_in_order(second, posts) == ["Entry number 01", "Entry number 00"]
    archive = Client(app).get("/author/alice/", base_url=SITE).data
    assert titles_in_order(archive, posts) == ["Entry number 03", "Entry number 02"]


def test_unsticking_a_post_purges_the_home_page(app: App, site: SmallSite) -> None:
    posts = make_posts(app, site, 3)
    client = Client(app, use_cookies=False)
    assert titles_in_order(client.get("/", base_url=SITE).data, posts)[0] == "Entry number 00"
    assert client.get("/", base_url=SITE).headers["Cache-Status"].startswith("sitecache; hit")
    app.content.update_post(posts[0].id, sticky=False)
    assert titles_in_order(client.get("/", base_url=SITE).data, posts)[0] == "Entry number 02"


def test_the_sticky_filter_of_the_posts_collection(app: App, site: SmallSite) -> None:
    posts = make_posts(app, site, 3)
    client = Client(app)

    def ids(query: str) -> list[int]:
        response = client.get(f"/site-json/site/v2/posts?{query}", base_url=SITE)
        assert response.status_code == 200, response.data
        return [item["id"] for item in json.loads(response.data)]

    assert ids("sticky=true") == [posts[0].id]
    assert posts[0].id not in ids("sticky=false")
    assert posts[1].id in ids("sticky=false")
    assert set(ids("")) >= {post.id for post in posts}
    bad = client.get("/site-json/site/v2/posts?sticky=maybe", base_url=SITE)
    assert bad.status_code == 400
