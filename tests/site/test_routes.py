"""Every URL shape of the front site, matched and built: pretty and plain permalinks, redirects.

One row per request: what it answers (status, ``X-Site-Page-Type``, ``Location``). The rows pin
the behaviour the route table must keep, including its quirks (a plain query naming nothing shows
the home page; ``/?p=`` of nothing is a 404).
"""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from tests.conftest import AppFactory
from tests.site.conftest import SmallSite

HOME = "home, frontpage"


def answer(client: Client, url: str, method: str = "GET") -> tuple[Any, ...]:
    """``(status, page type)``, or ``(status, Location)`` for a redirect."""
    response = client.open(url, method=method)
    if 300 <= response.status_code < 400:
        return response.status_code, response.headers["Location"]
    return response.status_code, response.headers.get("X-Site-Page-Type", "")


def pretty_rows(site: SmallSite) -> dict[str, tuple[Any, ...]]:
    post, page, category, tag = site.post.id, site.page.id, site.category.id, site.tag.id
    return {
        "/": (200, HOME),
        "/index.php": (200, HOME),
        "/page/1/": (200, HOME),
        "/page/2/": (404, "404"),
        "/feed/": (200, "feed"),
        "/sitemap.xml": (200, "sitemap"),
        "/hello-world/": (200, "single"),
        "/about/": (200, "page"),
        "/category/news/": (200, "category, archives"),
        "/category/news/page/2/": (404, "404"),
        "/category/nothing/": (404, "404"),
        "/tag/python/": (200, "tag, archives"),
        "/author/alice/": (200, "author, archives"),
        "/search/hello/": (200, "search"),
        "/search/%20/": (404, "404"),
        "/2023/": (200, "archives"),
        "/2023/11/": (200, "archives"),
        "/2023/11/14/": (200, "archives"),
        "/2023/13/": (404, "404"),
        "/2023/02/30/": (404, "404"),
        # A missing slash redirects (relative, the query kept) only to something that exists.
        "/hello-world": (301, "/hello-world/"),
        "/category/news?x=1": (301, "/category/news/?x=1"),
        "/nothing-here": (404, "404"),
        "/page/2": (404, "404"),
        "/sitemap.xml/": (404, "404"),
        # Old plain links redirect to the permalink; query searches to their cacheable path.
        f"/?p={post}": (301, "http://example.org/hello-world/"),
        f"/index.php?p={post}": (301, "http://example.org/hello-world/"),
        f"/?page_id={page}": (301, "http://example.org/about/"),
        f"/?p={page}": (301, "http://example.org/about/"),
        f"/?p={site.draft.id}": (404, "404"),
        "/?p=abc": (404, "404"),
        "/?s=hello": (301, "http://example.org/search/hello/"),
        "/?s=%20": (301, "http://example.org/"),
        "/?s=hello&p=1": (301, "http://example.org/search/hello/"),
        # The other plain query variables mean nothing with pretty permalinks.
        f"/?cat={category}": (200, HOME),
        f"/?tag={tag}": (200, HOME),
        "/?feed=rss2": (200, HOME),
        "/?paged=2": (200, HOME),
        "/?m=2023": (200, HOME),
    }


def plain_rows(site: SmallSite) -> dict[str, tuple[Any, ...]]:
    post, page, category, author = site.post.id, site.page.id, site.category.id, site.author
    return {
        "/": (200, HOME),
        f"/?p={post}": (200, "single"),
        f"/?page_id={page}": (200, "page"),
        f"/?page_id={post}": (200, "single"),
        f"/?p={site.draft.id}": (404, "404"),
        f"/?cat={category}": (200, "category, archives"),
        "/?tag=python": (200, "tag, archives"),
        f"/?author={author}": (200, "author, archives"),
        "/?feed=rss2": (200, "feed"),
        "/?feed=anything": (200, "feed"),
        "/?m=2023": (200, "archives"),
        "/?m=202311": (200, "archives"),
        "/?m=20231114": (200, "archives"),
        "/?s=hello": (200, "search"),
        "/index.php?s=hello": (200, "search"),
        # A plain query naming nothing shows the home page (a missing post is a 404).
        "/?s=": (200, HOME),
        "/?s=&p=1": (200, HOME),
        "/?cat=999": (200, HOME),
        "/?cat=999&tag=python": (200, HOME),
        "/?author=999": (200, HOME),
        "/?m=20": (200, HOME),
        "/?m=20231340": (200, HOME),
        "/?paged=2": (200, HOME),
        f"/?cat={category}&paged=2": (200, HOME),
        # Pretty archive paths still answer; pretty post and page paths do not.
        "/category/news/": (200, "category, archives"),
        "/feed/": (200, "feed"),
        "/2023/11/": (200, "archives"),
        "/hello-world/": (404, "404"),
        "/about/": (404, "404"),
    }


def test_every_pretty_url_shape_answers_as_before(client: Client, site: SmallSite) -> None:
    for url, expected in pretty_rows(site).items():
        assert answer(client, url) == expected, url


def test_every_plain_url_shape_answers_as_before(app: App, client: Client, site: SmallSite) -> None:
    app.content.update_option("permalink_structure", "")
    for url, expected in plain_rows(site).items():
        assert answer(client, url) == expected, url


def test_plain_listings_paginate_with_paged(app: App, client: Client, site: SmallSite) -> None:
    app.content.update_option("permalink_structure", "")
    app.content.update_option("posts_per_page", 1)
    for number in range(3):
        app.content.create_post(title=f"Extra {number}", status="publish", date_gmt=10 + number)
    assert answer(client, "/?paged=2") == (200, HOME)
    assert 'href="http://example.org/?paged=3"' in client.get("/?paged=2").get_data(as_text=True)
    assert answer(client, "/?paged=9") == (200, HOME)  # nothing there: page 1
    assert "Extra 2" not in client.get("/?paged=9").get_data(as_text=True)
    searched = client.get("/?s=Extra&paged=2").get_data(as_text=True)
    assert 'href="http://example.org/?s=Extra&amp;paged=3"' in searched
    assert 'href="http://example.org/?s=Extra"' in searched


def test_pretty_listings_link_their_neighbours(app: App, client: Client, site: SmallSite) -> None:
    app.content.update_option("posts_per_page", 1)
    for number in range(2):
        app.content.create_post(
            title=f"Extra {number}",
            status="publish",
            date_gmt=10 + number,
            term_ids=[site.category.id],
        )
    second = client.get("/category/news/page/2/").get_data(as_text=True)
    assert 'href="http://example.org/category/news/"' in second
    assert 'href="http://example.org/category/news/page/3/"' in second
    assert answer(client, "/category/news/page/4/") == (404, "404")
    assert answer(client, "/category/news/page/3") == (301, "/category/news/page/3/")


@pytest.mark.parametrize(
    ("structure", "path"),
    [
        ("/%year%/%monthnum%/%day%/%postname%/", "/2023/11/14/hello-world/"),
        ("/archives/%post_id%", "/archives/{id}"),
        ("/%category%/%postname%/", "/news/hello-world/"),
        ("/%author%/%postname%-%post_id%/", "/alice/hello-world-{id}/"),
        ("%postname%", "/hello-world"),
    ],
)
def test_a_structure_builds_and_matches_one_path_per_post(
    app: App, client: Client, site: SmallSite, structure: str, path: str
) -> None:
    app.content.update_option("permalink_structure", structure)
    expected = path.format(id=site.post.id)
    assert app.site.post_url(site.post) == "http://example.org" + expected
    assert answer(client, expected) == (200, "single")
    assert answer(client, "/about/") == (200, "page")
    assert answer(client, f"/?p={site.post.id}") == (301, "http://example.org" + expected)


def test_a_fixed_route_that_names_nothing_does_not_fall_through_to_a_post(
    app: App, client: Client, site: SmallSite
) -> None:
    app.content.update_option("permalink_structure", "/%category%/%postname%/")
    other = app.content.create_term("category", "Category")
    post = app.content.create_post(
        title="Nothing", slug="nothing", status="publish", term_ids=[other.id]
    )
    assert app.site.post_url(post) == "http://example.org/category/nothing/"
    # /category/<slug>/ is the category archive's shape: it wins, and names no category.
    assert answer(client, "/category/nothing/") == (404, "404")


def test_a_child_page_lives_under_its_parent(app: App, client: Client, site: SmallSite) -> None:
    child = app.content.create_post(
        type="page", title="Team", status="publish", parent=site.page.id
    )
    assert app.site.post_url(child) == "http://example.org/about/team/"
    assert answer(client, "/about/team/") == (200, "page")
    assert answer(client, "/team/") == (404, "404")
    assert answer(client, "/about/team") == (301, "/about/team/")


def test_pages_answer_get_and_head_only(client: Client, site: SmallSite) -> None:
    for method in ("POST", "PUT", "DELETE"):
        response = client.open("/hello-world/", method=method)
        assert (response.status_code, response.headers["Allow"]) == (405, "GET, HEAD"), method
    head = client.head("/hello-world/")
    assert (head.status_code, head.headers["X-Site-Page-Type"]) == (200, "single")
    form = client.get("/comment-post")
    assert (form.status_code, form.headers["Allow"]) == (405, "POST")


def test_links_on_plain_pages_use_query_strings(app_factory: AppFactory) -> None:
    app = app_factory(permalink_structure="")
    author = app.auth.users.create("bob", "password123", "author")
    category = app.content.create_term("category", "News")
    tag = app.content.create_term("post_tag", "Big Ideas")
    post = app.content.create_post(
        title="Plain", status="publish", author=author.id, term_ids=[category.id, tag.id]
    )
    body = Client(app).get(f"/?p={post.id}").get_data(as_text=True)
    for link in (
        f"http://example.org/?cat={category.id}",
        "http://example.org/?tag=big-ideas",
        f"http://example.org/?author={author.id}",
        "http://example.org/?feed=rss2",
    ):
        assert f'href="{link}"' in body, link
