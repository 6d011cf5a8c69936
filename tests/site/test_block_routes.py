"""``site/v2/block-types`` and ``site/v2/block-renderer``: answers, errors and permissions."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.app import App, create_app

ROLES = ("administrator", "editor", "author", "contributor", "subscriber")
API = "/site-json/site/v2"


@dataclass
class BlockSite:
    app: App
    headers: dict[str, dict[str, str]]
    editors_post: int
    authors_post: int

    def call(
        self, method: str, path: str, role: str | None = None, body: Any = None
    ) -> TestResponse:
        headers = dict(self.headers[role]) if role else {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        return Client(self.app).open(
            f"{API}{path}",
            method=method,
            headers=headers,
            data=json.dumps(body) if body is not None else None,
        )


@pytest.fixture(scope="module")
def block_site(tmp_path_factory: pytest.TempPathFactory) -> BlockSite:
    app = create_app(
        {
            "data_dir": str(tmp_path_factory.mktemp("blocks") / "var"),
            "site_url": "http://example.org",
            "password_hash_cost": 1024,
            "cache_timers": False,
            "application_passwords": "on",
        }
    )
    headers: dict[str, dict[str, str]] = {}
    ids: dict[str, int] = {}
    for role in ROLES:
        user = app.auth.users.create(role, "password123", role)
        ids[role] = user.id
        password, _ = app.auth.app_passwords.create(user, "tests", "")
        token = base64.b64encode(f"{role}:{password}".encode()).decode()
        headers[role] = {"Authorization": f"Basic {token}"}
    content = app.content
    editors = content.create_post(title="Editor's", status="publish", author=ids["editor"])
    authors = content.create_post(title="Author's", status="draft", author=ids["author"])
    return BlockSite(app, headers, editors.id, authors.id)


def answer(response: TestResponse) -> Any:
    return json.loads(response.get_data(as_text=True))


# (path, role, status, code) with {editor} / {author} standing for those users' posts.
PERMISSIONS: list[tuple[str, str | None, int, str | None]] = [
    ("/block-types", None, 401, "rest_block_type_cannot_view"),
    ("/block-types", "subscriber", 403, "rest_block_type_cannot_view"),
    ("/block-types", "contributor", 200, None),
    ("/block-types/core/search", None, 401, "rest_block_type_cannot_view"),
    ("/block-types/core/search", "author", 200, None),
    ("/block-types/core/paragraph", "author", 404, "rest_block_type_invalid"),
    ("/block-renderer/core/search?context=edit", None, 401, "block_cannot_read"),
    ("/block-renderer/core/search?context=edit", "subscriber", 403, "block_cannot_read"),
    ("/block-renderer/core/search?context=edit", "contributor", 200, None),
    ("/block-renderer/core/search?context=edit&post_id={editor}", "author", 403,
     "block_cannot_read"),
    ("/block-renderer/core/search?context=edit&post_id={editor}", "editor", 200, None),
    ("/block-renderer/core/search?context=edit&post_id={author}", "author", 200, None),
    ("/block-renderer/core/search?context=edit&post_id={author}", "contributor", 403,
     "block_cannot_read"),
    ("/block-renderer/core/search?context=edit&post_id=999999", "administrator", 403,
     "block_cannot_read"),
    # Arguments are checked before permissions (WordPress's order).
    ("/block-renderer/core/search", None, 400, "rest_invalid_param"),
    ("/block-renderer/core/search", "administrator", 400, "rest_invalid_param"),
    ("/block-renderer/core/nothing-here?context=edit", "administrator", 404, "block_invalid"),
    ("/block-renderer/core/latest-posts?context=edit&attributes[postsToShow]=x",
     "administrator", 400, "rest_invalid_param"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "role", "status", "code"), PERMISSIONS)
def test_block_routes_answer_by_capability(
    block_site: BlockSite, path: str, role: str | None, status: int, code: str | None
) -> None:
    url = path.format(editor=block_site.editors_post, author=block_site.authors_post)
    response = block_site.call("GET", url, role)
    assert response.status_code == status, response.get_data(as_text=True)
    if code is not None:
        assert answer(response)["code"] == code


def test_bad_attributes_carry_the_engines_detail(block_site: BlockSite) -> None:
    response = block_site.call(
        "POST",
        "/block-renderer/core/tag-cloud?context=edit",
        "editor",
        {"attributes": {"smallestFontSize": "1px;color:red"}},
    )
    assert response.status_code == 400
    detail = answer(response)["data"]["details"]["attributes"]
    assert detail["code"] == "rest_invalid_pattern"
    assert detail["message"].startswith("attributes[smallestFontSize] does not match pattern")


def test_the_renderer_renders_attributes_from_the_body_or_the_query(block_site: BlockSite) -> None:
    for number in range(3):
        block_site.app.content.create_post(title=f"Listed {number}", status="publish")
    by_body = block_site.call(
        "POST",
        "/block-renderer/core/latest-posts?context=edit",
        "editor",
        {"attributes": {"postsToShow": 2}},
    )
    by_query = block_site.call(
        "GET", "/block-renderer/core/latest-posts?context=edit&attributes[postsToShow]=2", "editor"
    )
    for response in (by_body, by_query):
        assert response.status_code == 200
        rendered = answer(response)["rendered"]
        assert rendered.count("<li>") == 2
        assert "Listed 2" in rendered


def test_block_types_are_listed_by_namespace_with_their_links(block_site: BlockSite) -> None:
    listed = answer(block_site.call("GET", "/block-types", "editor"))
    assert {item["name"] for item in listed} >= {
        "core/latest-posts",
        "core/archives",
        "core/categories",
        "core/search",
        "core/tag-cloud",
    }
    assert answer(block_site.call("GET", "/block-types?namespace=nobody", "editor")) == []
    item = answer(block_site.call("GET", "/block-types/core/latest-posts", "editor"))
    assert item["is_dynamic"] is True
    assert item["attributes"]["postsToShow"] == {
        "type": "integer",
        "default": 5,
        "minimum": 1,
        "maximum": 100,
    }
    links = item["_links"]
    assert links["up"][0]["href"] == "http://example.org/site-json/site/v2/block-types/core"
    assert links["wp:render-block"][0]["href"] == (
        "http://example.org/site-json/site/v2/block-renderer/core/latest-posts?context=edit"
    )


def test_a_plugins_block_type_is_listed_and_rendered(tmp_path: Any) -> None:
    app = create_app(
        {
            "data_dir": str(tmp_path / "var"),
            "site_url": "http://example.org",
            "password_hash_cost": 1024,
            "cache_timers": False,
            "application_passwords": "on",
        }
    )
    app.register_block_type(
        "acme/greeting",
        {"name": {"type": "string", "default": "world", "maxLength": 20}},
        lambda attributes, inner, block: f"Hello, {attributes['name']}!",
        title="Greeting",
    )
    user = app.auth.users.create("boss", "password123", "administrator")
    password, _ = app.auth.app_passwords.create(user, "tests", "")
    token = base64.b64encode(f"boss:{password}".encode()).decode()
    client = Client(app)
    headers = {"Authorization": f"Basic {token}"}
    listed = answer(client.get(f"{API}/block-types/acme", headers=headers))
    assert [item["title"] for item in listed] == ["Greeting"]
    rendered = client.get(
        f"{API}/block-renderer/acme/greeting?context=edit&attributes[name]=<you>", headers=headers
    )
    assert answer(rendered) == {"rendered": "Hello, &lt;you&gt;!"}


def test_a_posts_rendered_content_over_rest_shows_its_blocks(block_site: BlockSite) -> None:
    post = block_site.app.content.create_post(
        title="With blocks",
        status="publish",
        content='Intro <!-- wp:search {"buttonText":"Go"} /-->',
        excerpt="",
    )
    data = answer(block_site.call("GET", f"/posts/{post.id}"))
    assert data["content"]["rendered"].startswith('<p>Intro</p>\n<form role="search"')
    assert ">Go</button>" in data["content"]["rendered"]
    assert data["excerpt"]["rendered"] == "<p>Intro</p>"
