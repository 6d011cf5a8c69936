"""A page showing a block is purged when what the block lists changes (end to end through the
page cache in front of the app)."""

from __future__ import annotations

import base64
from urllib.parse import urlsplit

from werkzeug.test import Client

from sitecache.app import App
from sitecache.site import Post
from tests.conftest import AppFactory

SITE = "http://example.org"


def path_of(app: App, post: Post) -> str:
    return urlsplit(app.site.post_url(post)).path


def fetch(app: App, path: str) -> tuple[str, str]:
    response = Client(app, use_cookies=False).get(path, base_url=SITE)
    assert response.status_code == 200
    return str(response.headers.get("Cache-Status", "")), response.get_data(as_text=True)


def stored(app: App, path: str) -> None:
    assert fetch(app, path)[0].endswith("stored"), path
    assert fetch(app, path)[0].startswith("sitecache; hit"), path


def is_hit(app: App, path: str) -> bool:
    return fetch(app, path)[0].startswith("sitecache; hit")


def test_publishing_a_post_purges_a_page_listing_the_latest_posts(
    app_factory: AppFactory,
) -> None:
    app = app_factory(application_passwords="on")
    tag = app.content.create_term("post_tag", "Cloudy")
    app.content.create_post(title="Tagged", status="publish", term_ids=[tag.id])
    latest = app.content.create_post(
        title="Latest", status="publish", content='<!-- wp:latest-posts {"postsToShow":3} /-->'
    )
    cloud = app.content.create_post(
        title="Cloud", status="publish", content="<!-- wp:tag-cloud /-->"
    )
    search = app.content.create_post(title="Find", status="publish", content="<!-- wp:search /-->")
    pages = {name: path_of(app, post) for name, post in (
        ("latest", latest), ("cloud", cloud), ("search", search))}  # fmt: skip
    for path in pages.values():
        stored(app, path)

    # Published over REST, as an editor would.
    user = app.auth.users.create("ed", "password123", "editor")
    password, _ = app.auth.app_passwords.create(user, "tests", "")
    token = base64.b64encode(f"ed:{password}".encode()).decode()
    made = Client(app).post(
        "/site-json/site/v2/posts",
        json={"title": "Brand new", "status": "publish"},
        headers={"Authorization": f"Basic {token}"},
        base_url=SITE,
    )
    assert made.status_code == 201

    status, body = fetch(app, pages["latest"])
    assert status.endswith("stored"), "the latest-posts page should have been purged"
    assert "Brand new" in body
    # A post without tags changes no tag cloud, and a search form lists nothing.
    assert is_hit(app, pages["cloud"])
    assert is_hit(app, pages["search"])


def test_a_tag_change_purges_a_page_showing_the_tag_cloud(app_factory: AppFactory) -> None:
    app = app_factory()
    tag = app.content.create_term("post_tag", "Cloudy")
    app.content.create_post(title="Tagged", status="publish", term_ids=[tag.id])
    cloud = app.content.create_post(
        title="Cloud", status="publish", content="<!-- wp:tag-cloud /-->"
    )
    plain = app.content.create_post(title="Plain", status="publish", content="No blocks.")
    cloud_path, plain_path = path_of(app, cloud), path_of(app, plain)
    stored(app, cloud_path)
    stored(app, plain_path)

    app.content.update_term(tag.id, name="Stormy")
    status, body = fetch(app, cloud_path)
    assert status.endswith("stored")
    assert ">Stormy</a>" in body
    assert is_hit(app, plain_path)

    # A new tag only shows once a post uses it: tagging a post purges the cloud again.
    fresh = app.content.create_term("post_tag", "Sunny")
    assert not is_hit(app, cloud_path)
    app.content.create_post(title="Sunny day", status="publish", term_ids=[fresh.id])
    status, body = fetch(app, cloud_path)
    assert status.endswith("stored")
    assert ">Sunny</a>" in body
