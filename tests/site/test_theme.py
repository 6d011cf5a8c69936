"""The theme: every page, its Cache-Tag and X-Site-Page-Type headers, permalinks, escaping."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.site import ContentService
from tests.conftest import AppFactory, traceable
from tests.site.conftest import SmallSite


def tags_of(response: object) -> list[str]:
    header = response.headers.get("Cache-Tag", "")  # type: ignore[attr-defined]
    return header.split(",") if header else []


def test_every_page_names_its_type_and_what_it_shows(client: Client, site: SmallSite) -> None:
    post, page, category, tag = site.post.id, site.page.id, site.category.id, site.tag.id
    expected = {
        "/": ("home, frontpage", ["home", f"post-{post}"]),
        "/hello-world/": (
            "single",
            [f"post-{post}", f"term-{category}", f"term-{tag}", "author-1"],
        ),
        "/about/": ("page", [f"post-{page}", "author-1"]),
        "/category/news/": (
            "category, archives",
            [f"term-{category}", f"term-archive-{category}", f"post-{post}"],
        ),
        "/tag/python/": ("tag, archives", [f"term-{tag}", f"term-archive-{tag}", f"post-{post}"]),
        "/author/alice/": ("author, archives", ["author-1", "author-archive-1", f"post-{post}"]),
        "/search/paragraph/": ("search", ["search", f"post-{post}"]),
        "/2023/11/": ("archives", ["archive", f"post-{post}"]),
        "/feed/": ("feed", ["feed", f"post-{post}"]),
        "/sitemap.xml": ("sitemap", ["sitemap", f"post-{page}", f"post-{post}"]),
    }
    for path, (types, tags) in expected.items():
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.headers["X-Site-Page-Type"] == types, path
        assert sorted(tags_of(response)) == sorted(tags), path


@pytest.mark.parametrize(
    "path", ["/nothing-here/", "/category/none/", "/page/9/", "/author/nobody/", "/secret-plans/"]
)
def test_missing_things_and_drafts_are_404_pages(
    client: Client, site: SmallSite, path: str
) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["X-Site-Page-Type"] == "404"
    assert "Cache-Tag" not in response.headers


def test_no_page_sets_a_cookie(client: Client, site: SmallSite) -> None:
    for path in ("/", "/hello-world/", "/about/", "/feed/", "/sitemap.xml", "/nope/", "/?s=x"):
        assert "Set-Cookie" not in client.get(path).headers, path


def test_a_query_string_search_redirects_to_its_cacheable_path(client: Client) -> None:
    response = client.get("/?s=caching+%26+you")
    assert response.status_code == 301
    assert response.headers["Location"] == "http://example.org/search/caching%20%26%20you/"
    assert client.get("/?s=").headers["Location"] == "http://example.org/"
    found = client.get("/search/caching%20%26%20you/")
    assert found.status_code == 200
    assert "Search results for: caching &amp; you" in found.get_data(as_text=True)


def test_home_paginates_by_the_posts_per_page_option(
    client: Client, content: ContentService
) -> None:
    content.update_option("posts_per_page", 2)
    for number in range(5):
        content.create_post(title=f"Post {number}", status="publish", date_gmt=1000 + number)
    first = client.get("/").get_data(as_text=True)
    assert "Post 4" in first
    assert "Post 2" not in first
    assert 'href="http://example.org/page/2/"' in first
    third = client.get("/page/3/")
    assert third.status_code == 200
    assert "Post 0" in third.get_data(as_text=True)
    assert client.get("/page/4/").status_code == 404


def test_a_path_without_its_slash_redirects_and_old_ids_redirect_to_permalinks(
    client: Client, site: SmallSite
) -> None:
    assert client.get("/hello-world").headers["Location"] == "/hello-world/"
    moved = client.get(f"/?p={site.post.id}")
    assert moved.status_code == 301
    assert moved.headers["Location"] == "http://example.org/hello-world/"
    assert client.get(f"/?p={site.draft.id}").status_code == 404


def test_plain_permalinks_use_query_strings(app_factory: AppFactory) -> None:
    app = app_factory(permalink_structure="")
    post = app.content.create_post(title="Plain", status="publish")
    client = Client(app)
    home = client.get("/").get_data(as_text=True)
    assert f'href="http://example.org/?p={post.id}"' in home
    single = client.get(f"/?p={post.id}")
    assert single.headers["X-Site-Page-Type"] == "single"
    assert client.get("/?s=Plain").headers["X-Site-Page-Type"] == "search"
    assert client.get("/plain/").status_code == 404


def test_a_dated_structure_links_and_resolves_only_its_exact_path(
    app: App, client: Client, site: SmallSite
) -> None:
    app.content.update_option("permalink_structure", "/%year%/%monthnum%/%postname%/")
    home = client.get("/").get_data(as_text=True)
    assert 'href="http://example.org/2023/11/hello-world/"' in home
    assert client.get("/2023/11/hello-world/").headers["X-Site-Page-Type"] == "single"
    assert client.get("/2022/11/hello-world/").status_code == 404


def test_titles_terms_and_content_are_escaped(client: Client, content: ContentService) -> None:
    tag = content.create_term("post_tag", "<img src=x onerror=alert(1)>")
    content.create_post(
        title="<script>alert(1)</script>",
        content="<script>alert(2)</script>",
        status="publish",
        term_ids=[tag.id],
        slug="xss",
    )
    body = client.get("/xss/").get_data(as_text=True)
    assert "<script>alert" not in body
    assert "<img src=x" not in body
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in body


def test_single_posts_terms_and_authors_point_at_their_rest_resource(
    client: Client, site: SmallSite
) -> None:
    expected = {
        "/hello-world/": f"/site-json/site/v2/posts/{site.post.id}",
        "/about/": f"/site-json/site/v2/pages/{site.page.id}",
        "/category/news/": f"/site-json/site/v2/categories/{site.category.id}",
        "/tag/python/": f"/site-json/site/v2/tags/{site.tag.id}",
        "/author/alice/": f"/site-json/site/v2/users/{site.author}",
    }
    for path, route in expected.items():
        response = client.get(path)
        url = f"http://example.org{route}"
        assert (
            f'<{url}>; rel="alternate"; title="JSON"; type="application/json"'
            in (response.headers["Link"])
        ), path
        assert (
            f'<link rel="alternate" title="JSON" type="application/json" href="{url}">'
            in response.get_data(as_text=True)
        ), path
    home = client.get("/")
    assert home.headers["Link"] == '<http://example.org/site-json/>; rel="https://api.w.org/"'


def test_the_feed_and_sitemap_are_well_formed_xml(client: Client, site: SmallSite) -> None:
    feed = client.get("/feed/")
    assert feed.mimetype == "application/rss+xml"
    channel = ElementTree.fromstring(feed.data).find("channel")  # noqa: S314 - our own output
    assert channel is not None
    assert [item.findtext("title") for item in channel.iter("item")] == ["Hello world"]
    sitemap = ElementTree.fromstring(client.get("/sitemap.xml").data)  # noqa: S314 - our own output
    locations = {
        element.text for element in sitemap.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")
    }
    assert "http://example.org/hello-world/" in locations
    assert "http://example.org/category/news/" in locations


def test_related_tags_name_every_page_a_post_change_must_purge(app: App, site: SmallSite) -> None:
    tags = app.site.related_tags(site.post.id)
    assert sorted(tags) == sorted(
        [
            f"post-{site.post.id}", "home", "feed", "archive", "sitemap",
            f"term-archive-{site.category.id}", f"term-archive-{site.tag.id}",
            f"author-archive-{site.author}",
            # pages whose blocks list posts, or the terms of the post's taxonomies
            "post-list", "term-list-category", "term-list-post_tag",
            # every search results page
            "search",
        ]
    )  # fmt: skip
    assert app.site.related_tags(site.post.id, comment=True) == [f"post-{site.post.id}"]
    deleted = app.content.delete_post(site.post.id, force=True)
    assert f"term-archive-{site.tag.id}" in app.site.related_tags(deleted)


def test_preload_urls_list_home_then_posts_newest_first_then_terms(
    app: App, site: SmallSite
) -> None:
    newer = app.content.create_post(title="Newer", status="publish", date_gmt=1_750_000_000)
    urls = list(app.site.preload_urls(None, True))
    assert urls[0] == "http://example.org/"
    assert urls[1:4] == [
        "http://example.org/about/",
        "http://example.org/newer/",
        "http://example.org/hello-world/",
    ]
    assert urls[-2:] == ["http://example.org/category/news/", "http://example.org/tag/python/"]
    assert list(app.site.preload_urls(2, False)) == urls[:3]
    assert newer.id > 0


def test_pages_on_the_demo_site_render_with_few_queries(demo_app: App) -> None:
    statements: list[str] = []
    client = Client(demo_app)
    client.get("/")  # warm the connection of this thread
    traceable(demo_app.auth.store.connection()).set_trace_callback(statements.append)
    assert client.get("/").status_code == 200
    traceable(demo_app.auth.store.connection()).set_trace_callback(None)
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    # 11: the home page's first page also reads its sticky posts (one query, #21).
    assert len(selects) <= 11, selects
    assert re.search(r"post-\d+", client.get("/").headers["Cache-Tag"])
