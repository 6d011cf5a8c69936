"""A post's or page's ``featured_media`` (WordPress's post thumbnail): an image attachment's
id is kept and answered, 0 removes it, anything else is a 400 ``rest_invalid_featured_media``
that changes nothing, and deleting the image leaves no post pointing at it."""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image
from werkzeug.test import TestResponse

from sitecache.app import App
from tests.auth.conftest import Site, build_site
from tests.conftest import both_engines

pytestmark = both_engines

API = "/site-json/site/v2"


class Editor:
    """REST calls as the site's administrator."""

    def __init__(self, app: App) -> None:
        self.site: Site = build_site(app)
        self.auth = self.site.basic("administrator")

    def call(self, method: str, path: str, body: Any = None) -> TestResponse:
        return self.site.client().open(f"{API}{path}", method=method, headers=self.auth, json=body)

    def upload(self, data: bytes, name: str, content_type: str) -> int:
        response = self.site.client().post(
            f"{API}/media",
            headers=self.auth,
            data={"file": (io.BytesIO(data), name, content_type)},
        )
        assert response.status_code == 201, response.text
        return int(response.get_json()["id"])

    def image(self) -> int:
        buffer = io.BytesIO()
        Image.new("RGB", (4, 3), "green").save(buffer, "PNG")
        return self.upload(buffer.getvalue(), "green.png", "image/png")


@pytest.fixture
def editor(app: App) -> Editor:
    return Editor(app)


def featured_link(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        link
        for rel, links in body["_links"].items()
        if rel.endswith("featuredmedia")
        for link in links
    ]


@pytest.mark.parametrize("base", ["posts", "pages"])
def test_an_image_is_kept_answered_linked_and_removed_with_zero(editor: Editor, base: str) -> None:
    image = editor.image()
    made = editor.call("POST", f"/{base}", {"title": "With a picture", "featured_media": image})
    assert made.status_code == 201, made.text
    item = made.get_json()
    assert item["featured_media"] == image
    read = editor.call("GET", f"/{base}/{item['id']}").get_json()
    assert read["featured_media"] == image
    (link,) = featured_link(read)
    assert link["href"].endswith(f"/site-json/site/v2/media/{image}")
    assert link["embeddable"] is True
    cleared = editor.call("POST", f"/{base}/{item['id']}", {"featured_media": 0})
    assert cleared.status_code == 200, cleared.text
    assert cleared.get_json()["featured_media"] == 0
    assert featured_link(cleared.get_json()) == []
    again = editor.call("PATCH", f"/{base}/{item['id']}", {"featured_media": image})
    assert again.status_code == 200
    stored = editor.site.app.content.get_post(item["id"])
    assert stored is not None
    assert stored.featured_media == image


def test_anything_but_an_image_attachment_is_refused_and_changes_nothing(
    editor: Editor,
) -> None:
    image = editor.image()
    text = editor.upload(b"plain words\n", "notes.txt", "text/plain")
    post = editor.call("POST", "/posts", {"title": "Before", "featured_media": image}).get_json()
    for bad in (99999, post["id"], text, -1, 10**30):
        response = editor.call(
            "POST", f"/posts/{post['id']}", {"title": "After", "featured_media": bad}
        )
        assert response.status_code == 400, (bad, response.text)
        assert response.get_json() == {
            "code": "rest_invalid_featured_media",
            "message": "Invalid featured media ID.",
            "data": {"status": 400},
        }
    kept = editor.site.app.content.get_post(post["id"])
    assert kept is not None
    assert (kept.title, kept.featured_media) == ("Before", image)
    refused = editor.call("POST", "/posts", {"title": "Never made", "featured_media": 99999})
    assert refused.status_code == 400
    assert editor.site.app.content.get_post_by_slug("post", "never-made") is None


def test_deleting_the_image_leaves_no_post_featuring_it(editor: Editor) -> None:
    image = editor.image()
    post = editor.call("POST", "/posts", {"title": "Pictured", "featured_media": image}).get_json()
    assert editor.call("DELETE", f"/media/{image}?force=true").status_code == 200
    assert editor.call("GET", f"/posts/{post['id']}").get_json()["featured_media"] == 0
