"""Front-page settings (WordPress's ``show_on_front``, ``page_on_front``, ``page_for_posts``):
validated over REST, shown in the API index, honoured by the front site and its page cache."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.site.models import Post
from tests.conftest import AppFactory, both_engines

pytestmark = both_engines

SITE = "http://example.org"


class FrontSite:
    """A site with an administrator, five posts, a front page, a blog page, a draft page."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.client = Client(app, use_cookies=False)
        admin = app.auth.users.create("admin", "password123", "administrator")
        password, _ = app.auth.app_passwords.create(admin, "tests", "")
        token = base64.b64encode(f"admin:{password}".encode()).decode()
        self.auth = {"Authorization": f"Basic {token}"}
        content = app.content
        self.posts = [
            content.create_post(
                title=f"Entry number {n:02d}",
                status="publish",
                author=admin.id,
                date_gmt=1_700_000_000 + n * 60,
            )
            for n in range(5)
        ]

        def page(title: str, status: str = "publish") -> Post:
            return content.create_post(
                type="page", title=title, content=f"{title} text.", status=status, author=admin.id
            )

        self.front = page("Welcome")
        self.blog = page("Blog")
        self.draft = page("Later", "draft")

    def get(self, path: str) -> TestResponse:
        return self.client.get(path, base_url=SITE)

    def settings(self, **values: Any) -> TestResponse:
        return self.client.post(
            "/site-json/site/v2/settings",
            base_url=SITE,
            headers=self.auth,
            data=json.dumps(values),
            content_type="application/json",
        )

    def static_front(self, blog: bool = True) -> None:
        content = self.app.content
        content.update_option("page_on_front", self.front.id)
        content.update_option("page_for_posts", self.blog.id if blog else 0)
        content.update_option("show_on_front", "page")


@pytest.fixture
def front(app_factory: AppFactory) -> FrontSite:
    return FrontSite(app_factory(application_passwords="on"))


# ---------------------------------------------------------------------- settings
@pytest.mark.parametrize(
    ("name", "which", "status"),
    [
        ("page_on_front", "front", 200),
        ("page_for_posts", "blog", 200),
        ("page_on_front", "zero", 200),
        ("page_for_posts", "zero", 200),
        ("page_on_front", "post", 400),  # a post, not a page
        ("page_for_posts", "draft", 400),  # a page nobody may read
        ("page_on_front", "missing", 400),
        ("page_for_posts", "negative", 400),
        ("page_on_front", "huge", 400),
        ("page_on_front", "text", 400),
    ],
)
def test_page_settings_name_a_published_page_or_nothing(
    front: FrontSite, name: str, which: str, status: int
) -> None:
    values: dict[str, Any] = {
        "front": front.front.id,
        "blog": front.blog.id,
        "zero": 0,
        "post": front.posts[0].id,
        "draft": front.draft.id,
        "missing": 999_999,
        "negative": -1,
        "huge": 2**64,
        "text": "about",
    }
    response = front.settings(**{name: values[which]})
    assert response.status_code == status, response.get_data(as_text=True)
    data = response.get_json()
    if status == 200:
        assert data[name] == values[which]
        assert front.app.content.get_option(name) == values[which]
    else:
        assert data["code"] == "rest_invalid_param"
        assert data["data"]["status"] == 400
        assert name in data["data"]["params"]
        assert front.app.content.get_option(name) == 0


def test_show_on_front_is_posts_or_page(front: FrontSite) -> None:
    assert front.settings(show_on_front="page").get_json()["show_on_front"] == "page"
    refused = front.settings(show_on_front="pages")
    assert refused.status_code == 400
    assert refused.get_json()["code"] == "rest_invalid_param"
    assert front.app.content.get_option("show_on_front") == "page"


def test_a_refused_setting_changes_nothing_of_the_request(front: FrontSite) -> None:
    response = front.settings(title="A new title", page_on_front=front.draft.id)
    assert response.status_code == 400
    assert front.app.content.get_option("title") != "A new title"


def test_the_settings_read_and_describe_the_front_page_options(front: FrontSite) -> None:
    read = front.client.get("/site-json/site/v2/settings", base_url=SITE, headers=front.auth)
    data = read.get_json()
    assert (data["show_on_front"], data["page_on_front"], data["page_for_posts"]) == (
        "posts",
        0,
        0,
    )
    schema = front.client.options(
        "/site-json/site/v2/settings", base_url=SITE, headers=front.auth
    ).get_json()["schema"]["properties"]
    assert schema["show_on_front"]["type"] == "string"
    assert schema["show_on_front"]["description"] == "What to show on the front page"
    assert schema["page_on_front"]["type"] == "integer"
    assert schema["page_on_front"]["description"] == (
        "The ID of the page that should be displayed on the front page"
    )
    assert schema["page_for_posts"]["type"] == "integer"
    assert schema["page_for_posts"]["description"] == (
        "The ID of the page that should display the latest posts"
    )


# ---------------------------------------------------------------------- the API index
def test_the_index_shows_the_front_page_keys_as_they_change(front: FrontSite) -> None:
    def keys() -> list[Any]:
        data = front.get("/site-json/").get_json()
        names = list(data)
        assert names.index("timezone_string") < names.index("page_for_posts")
        assert names.index("show_on_front") < names.index("namespaces")
        return [data["page_for_posts"], data["page_on_front"], data["show_on_front"]]

    assert keys() == [0, 0, "posts"]
    assert keys() == [0, 0, "posts"]  # the kept body
    front.static_front()
    assert keys() == [front.blog.id, front.front.id, "page"]


# ---------------------------------------------------------------------- the front site
def test_the_home_page_lists_the_latest_posts_by_default(front: FrontSite) -> None:
    home = front.get("/")
    assert b"Entry number 04" in home.data
    assert b"Welcome text." not in home.data
    assert front.get("/welcome/").status_code == 200
    assert front.get("/blog/").status_code == 200
    assert b"Blog text." in front.get("/blog/").data  # only a page while show_on_front is posts


def test_a_static_front_page_is_shown_at_the_home_url(front: FrontSite) -> None:
    front.static_front()
    home = front.get("/")
    assert home.status_code == 200
    assert b"Welcome text." in home.data
    assert b"Entry number 04" not in home.data
    assert home.headers["X-Site-Page-Type"] == "frontpage, page"
    tags = home.headers["Cache-Tag"].split(",")
    assert {"home", f"post-{front.front.id}"} <= set(tags)
    assert front.get("/page/2/").status_code == 404


@pytest.mark.parametrize("path", ["/welcome/", "/welcome/?unapproved=3&moderation-hash=x"])
def test_the_front_pages_own_url_redirects_to_the_home_url(front: FrontSite, path: str) -> None:
    front.static_front()
    moved = front.get(path)
    assert moved.status_code == 301
    query = path.partition("?")[2]
    assert moved.headers["Location"] == f"{SITE}/" + (f"?{query}" if query else "")


def test_links_to_the_front_page_name_the_home_url(front: FrontSite) -> None:
    front.static_front()
    assert front.app.site.post_url(front.front) == f"{SITE}/"
    moved = front.get(f"/?page_id={front.front.id}")
    assert (moved.status_code, moved.headers["Location"]) == (301, f"{SITE}/")
    sitemap = front.get("/sitemap.xml").get_data(as_text=True)
    assert sitemap.count(f"<loc>{SITE}/</loc>") == 1
    assert f"{SITE}/welcome/" not in sitemap


def test_the_posts_page_lists_the_latest_posts_with_pages(front: FrontSite) -> None:
    front.app.content.update_option("posts_per_page", 2)
    front.static_front()
    first = front.get("/blog/")
    assert first.status_code == 200
    assert b"Entry number 04" in first.data
    assert b"Entry number 03" in first.data
    assert b"Entry number 02" not in first.data
    assert b"Blog text." not in first.data
    assert f'href="{SITE}/blog/page/2/"'.encode() in first.data
    assert {"home", f"post-{front.blog.id}"} <= set(first.headers["Cache-Tag"].split(","))
    second = front.get("/blog/page/2/")
    assert second.status_code == 200
    assert b"Entry number 02" in second.data
    assert b"Entry number 01" in second.data
    assert f'href="{SITE}/blog/page/3/"'.encode() in second.data
    assert f'href="{SITE}/blog/"'.encode() in second.data
    assert b"Entry number 00" in front.get("/blog/page/3/").data
    assert front.get("/blog/page/4/").status_code == 404
    # Only the posts page has pages of its own.
    assert front.get("/welcome/page/2/").status_code == 404
    assert front.get("/later/page/2/").status_code == 404


def test_the_posts_page_with_plain_permalinks(front: FrontSite) -> None:
    front.app.content.update_option("posts_per_page", 2)
    front.app.content.update_option("permalink_structure", "")
    front.static_front()
    first = front.get(f"/?page_id={front.blog.id}")
    assert b"Entry number 04" in first.data
    older = f"{SITE}/?page_id={front.blog.id}&amp;paged=2"
    assert f'href="{older}"'.encode() in first.data
    second = front.get(f"/?page_id={front.blog.id}&paged=2")
    assert b"Entry number 02" in second.data
    assert b"Entry number 04" not in second.data
    assert b"Welcome text." in front.get("/").data
    moved = front.get(f"/?page_id={front.front.id}")
    assert (moved.status_code, moved.headers["Location"]) == (301, f"{SITE}/")


def test_without_a_posts_page_the_front_lists_no_posts(front: FrontSite) -> None:
    front.static_front(blog=False)
    assert b"Entry number 04" not in front.get("/").data
    blog = front.get("/blog/")
    assert b"Blog text." in blog.data
    assert b"Entry number 04" not in blog.data
    assert front.get("/blog/page/2/").status_code == 404


def test_an_unpublished_front_page_gives_the_home_back_to_the_posts(front: FrontSite) -> None:
    front.static_front()
    front.app.content.update_post(front.front.id, status="draft")
    home = front.get("/")
    assert b"Entry number 04" in home.data
    assert front.get("/welcome/").status_code == 404


# ---------------------------------------------------------------------- the page cache
def test_editing_the_front_page_purges_the_home_page(front: FrontSite) -> None:
    front.static_front()
    assert b"Welcome text." in front.get("/").data
    assert front.get("/").headers["Cache-Status"].startswith("sitecache; hit")
    front.app.content.update_post(front.front.id, content="Fresh welcome.")
    home = front.get("/")
    assert not home.headers["Cache-Status"].startswith("sitecache; hit")
    assert b"Fresh welcome." in home.data


@pytest.mark.parametrize("name", ["show_on_front", "page_on_front", "page_for_posts"])
def test_changing_a_front_page_option_purges_the_site(front: FrontSite, name: str) -> None:
    assert front.get("/blog/").status_code == 200
    assert front.get("/blog/").headers["Cache-Status"].startswith("sitecache; hit")
    value: dict[str, Any] = {
        "show_on_front": "page",
        "page_on_front": front.front.id,
        "page_for_posts": front.blog.id,
    }
    front.app.content.update_option(name, value[name])
    assert not front.get("/blog/").headers["Cache-Status"].startswith("sitecache; hit")
