"""Comment flood control (#29 item 7), as WordPress's ``comment_flood_filter``: a second comment
from the same address or e-mail address (or user) within ``comment_flood_interval`` seconds is
refused 429 ``comment_flood`` with ``Retry-After``, with the site's comment-error page for the
form and a JSON error over REST; nothing is stored and nothing is purged. Moderators and
administrators are never throttled."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.site import CommentQuery
from tests.conftest import AppFactory, both_engines
from tests.site.test_cache_invalidation import SITE, is_hit
from tests.site.test_extensions import admin_headers

#: What a flooding commenter is told (WordPress's words).
FLOOD_MESSAGE = "You are posting comments too quickly. Slow down."

pytestmark = both_engines


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(app_factory: AppFactory, clock: Clock) -> App:
    application = app_factory(application_passwords="on")
    application.content.clock = clock
    return application


@pytest.fixture
def post_id(app: App) -> int:
    return app.content.create_post(title="Open", content="Say hi", status="publish").id


def comment(
    app: App, post_id: int, address: str = "192.0.2.1", email: str = "ann@example.org"
) -> TestResponse:
    return Client(app, use_cookies=False).post(
        "/comment-post",
        data={
            "comment_post_ID": str(post_id),
            "author": "Ann",
            "email": email,
            "comment": "Hello there",
        },
        base_url=SITE,
        environ_overrides={"REMOTE_ADDR": address},
    )


def stored(app: App) -> int:
    return app.content.query_comments(CommentQuery(statuses=("hold", "approve")))[1]


def test_a_second_comment_within_the_interval_is_refused_with_the_error_page(
    app: App, post_id: int, clock: Clock
) -> None:
    assert comment(app, post_id).status_code == 302
    page = "/" + app.site.post_url(app.content.get_post(post_id)).split("/", 3)[3]  # type: ignore[arg-type]
    Client(app).get(page, base_url=SITE)
    assert is_hit(app, page)
    clock.now += 5
    refused = comment(app, post_id)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "10"
    assert refused.headers["Cache-Control"] == "no-store, private"
    text = refused.get_data(as_text=True)
    assert "Comment not posted" in text  # the site's comment-error page
    assert FLOOD_MESSAGE in text
    assert stored(app) == 1  # nothing stored
    assert is_hit(app, page)  # nothing purged
    clock.now += 10
    assert comment(app, post_id).status_code == 302  # the interval has passed
    assert stored(app) == 2


@pytest.mark.parametrize(
    ("address", "email", "refused"),
    [
        ("192.0.2.1", "other@example.org", True),  # the same address
        ("192.0.2.9", "ANN@example.org", True),  # the same e-mail address, in any case
        ("192.0.2.9", "other@example.org", False),  # someone else
    ],
)
def test_the_commenter_is_the_address_or_the_email(
    app: App, post_id: int, address: str, email: str, refused: bool
) -> None:
    assert comment(app, post_id).status_code == 302
    assert comment(app, post_id, address, email).status_code == (429 if refused else 302)


def test_the_interval_is_a_setting_and_zero_turns_it_off(
    app_factory: AppFactory, clock: Clock, tmp_path: Path
) -> None:
    for interval, second in ((60, 429), (0, 302)):
        app = app_factory(
            comment_flood_interval=interval, data_dir=str(tmp_path / f"interval-{interval}")
        )
        app.content.clock = clock
        post = app.content.create_post(title="Open", content="x", status="publish")
        assert comment(app, post.id).status_code == 302
        clock.now += 30
        assert comment(app, post.id).status_code == second


def test_over_rest_a_user_gets_a_json_429_and_moderators_are_exempt(app: App, post_id: int) -> None:
    def post_as(headers: dict[str, str]) -> TestResponse:
        return Client(app).post(
            "/site-json/site/v2/comments",
            json={"post": post_id, "content": "Via REST"},
            headers=headers,
            base_url=SITE,
        )

    subscriber = admin_headers(app, "subscriber")
    assert post_as(subscriber).status_code == 201
    refused = post_as(subscriber)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "15"
    assert refused.get_json() == {
        "code": "comment_flood",
        "message": FLOOD_MESSAGE,
        "data": {"status": 429, "retry_after": 15},
    }
    for role in ("editor", "administrator"):  # moderate_comments, manage_options
        headers = admin_headers(app, role)
        assert [post_as(headers).status_code for _ in range(3)] == [201, 201, 201], role


def test_the_wordpress_hooks_decide_and_hear(app: App, post_id: int) -> None:
    heard: list[tuple[int, int]] = []
    app.hooks.add_action("comment_flood_trigger", lambda last, new: heard.append((last, new)))
    assert comment(app, post_id).status_code == 302
    assert comment(app, post_id).status_code == 429
    assert len(heard) == 1
    app.hooks.add_filter("comment_flood_filter", lambda flood, last, new: False)
    assert comment(app, post_id).status_code == 302  # a site that allows it


def test_concurrent_posts_store_one_comment(app: App, post_id: int) -> None:
    answers: list[int] = []
    start = threading.Barrier(12)

    def post() -> None:
        start.wait(10)
        answers.append(comment(app, post_id).status_code)

    threads: list[threading.Thread] = [threading.Thread(target=post) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(answers) == [302] + [429] * 11
    assert stored(app) == 1


def test_internal_callers_are_not_throttled(app: App, post_id: int) -> None:
    add: Callable[..., Any] = app.content.add_comment
    for _ in range(3):  # imports, the demo content, moderators' tools
        add(post_id=post_id, author_ip="192.0.2.1", author_email="a@example.org", content="x")
    assert stored(app) == 3
