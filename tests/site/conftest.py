"""Fixtures of the site tests: an application with a small site and a hook recorder."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from typing import Any

import pytest
from PIL import Image
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.site import ContentService, Post, Term
from tests.auth.conftest import client_for
from tests.conftest import AppFactory

HOOKS = (
    "post_updated", "transition_post_status", "save_post", "delete_post", "deleted_post",
    "created_term", "edited_term", "delete_term", "comment_post", "edit_comment",
    "transition_comment_status", "deleted_comment", "updated_option",
)  # fmt: skip


@dataclass
class Recorder:
    """Every content action fired, in order, as ``(name, args)``."""

    calls: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def clear(self) -> None:
        self.calls.clear()


@pytest.fixture
def recorder(app: App) -> Recorder:
    found = Recorder()
    for name in HOOKS:

        def callback(*args: Any, _name: str = name) -> None:
            found.calls.append((_name, args))

        app.hooks.add_action(name, callback, accepted_args=9)
    return found


@pytest.fixture
def content(app: App) -> ContentService:
    return app.content


@dataclass
class SmallSite:
    """One author, a category, a tag, a published post, a draft and a page."""

    author: int
    category: Term
    tag: Term
    post: Post
    draft: Post
    page: Post


@pytest.fixture
def site(app: App) -> SmallSite:
    author = app.auth.users.create("alice", "password123", "author", display_name="Alice")
    content = app.content
    category = content.create_term("category", "News")
    tag = content.create_term("post_tag", "Python")
    post = content.create_post(
        title="Hello world",
        content="First paragraph.\n\nSecond <b>paragraph</b>.",
        status="publish",
        author=author.id,
        term_ids=[category.id, tag.id],
        date_gmt=1_700_000_000,
    )
    draft = content.create_post(title="Secret plans", status="draft", author=author.id)
    page = content.create_post(
        type="page", title="About", content="About us.", status="publish", author=author.id
    )
    return SmallSite(author.id, category, tag, post, draft, page)


@pytest.fixture
def demo_app(app_factory: AppFactory) -> App:
    from sitecache.site.demo import fill_demo

    application = app_factory()
    fill_demo(application.content, application.auth.users)
    return application


@pytest.fixture
def demo_client(demo_app: App) -> Client:
    return Client(demo_app)


@dataclass
class AdminRest:
    """A demo site, a client and the Basic credentials of an administrator's application
    password: what a REST test needs to act as the site's administrator."""

    app: App
    client: Client
    auth: dict[str, str]

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> TestResponse:
        """``method`` on ``/site-json<path>`` as the administrator (``body`` sent as JSON)."""
        return self.client.open(
            f"/site-json{path}", method=method, headers=self.auth, json=body, **kwargs
        )

    def upload_png(self) -> int:
        """Upload a small PNG to the media library; its attachment id."""
        buffer = io.BytesIO()
        Image.new("RGB", (3, 2), "red").save(buffer, "PNG")
        response = self.client.post(
            "/site-json/site/v2/media",
            headers=self.auth,
            data={"file": (io.BytesIO(buffer.getvalue()), "red.png", "image/png")},
        )
        assert response.status_code == 201, response.text
        return int(response.json["id"])  # type: ignore[index]


@pytest.fixture
def admin_rest(demo_app: App) -> AdminRest:
    user = demo_app.auth.users.create("boss", "password123", "administrator", "boss@example.org")
    password, _ = demo_app.auth.app_passwords.create(user, "tests")
    token = base64.b64encode(f"boss:{password}".encode()).decode()
    return AdminRest(demo_app, client_for(demo_app), {"Authorization": f"Basic {token}"})
