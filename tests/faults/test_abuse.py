"""Abuse against a real server (#29 item 7): ``sitecache serve`` (gunicorn, two threaded
workers) on a free loopback port, hit the way an abusive client hits it.

- One address posting 60 comments at once through the comment form: exactly one is stored,
  the 59 others are answered 429 ``comment_flood`` with ``Retry-After`` and the site's
  comment-error page, and the post's cached page is never purged by them.
- 60 wrong application passwords in a row over HTTP Basic: 401 up to the login throttle's
  threshold, 429 ``too_many_attempts`` with ``Retry-After`` after it.
- An unknown login and a wrong password: the same status, code and message.

Every answer comes within 5 s, none is a 500.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.e2e.deployment import Deployment
from tests.e2e.server import Response

pytestmark = pytest.mark.e2e

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
COMMENTS = "/site-json/site/v2/comments"
#: The longest any answer may take, even under the flood.
PROMPT = 5.0


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    deployment = Deployment(
        tmp_path_factory.mktemp("abuse") / "site", ["comment_flood_interval = 15"]
    )
    deployment.init()
    deployment.serve("serve", workers=2)
    try:
        yield deployment
    finally:
        deployment.stop()


def timed(site: Deployment, *arguments: object, **options: object) -> tuple[Response, float]:
    started = time.monotonic()
    response = site.request(*arguments, **options)  # type: ignore[arg-type]
    return response, time.monotonic() - started


def basic(login: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{login}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def post_path(site: Deployment) -> tuple[int, str]:
    created = site.request(
        "POST",
        "/site-json/site/v2/posts",
        {"title": "Flooded", "content": "Comment here", "status": "publish"},
        admin=True,
    )
    assert created.status == 201, created.body[:300]
    post = created.json()
    assert isinstance(post, dict)
    link = str(post["link"])
    return int(post["id"]), "/" + link.split("/", 3)[3]


def test_sixty_comments_at_once_store_one_and_refuse_the_rest(site: Deployment) -> None:
    post_id, path = post_path(site)
    site.request("GET", path)
    assert "hit" in site.request("GET", path).headers["cache-status"]
    form = urlencode(
        {
            "comment_post_ID": str(post_id),
            "author": "Flooder",
            "email": "flood@example.org",
            "comment": "Buy now",
        }
    )
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=30) as pool:
        answers = list(
            pool.map(lambda _: timed(site, "POST", "/comment-post", form, FORM), range(60))
        )
    elapsed = time.monotonic() - started
    statuses = [response.status for response, _ in answers]
    assert 500 not in statuses
    assert max(seconds for _, seconds in answers) < PROMPT
    assert sorted(statuses) == [302] + [429] * 59, statuses
    for response, _ in answers:
        if response.status == 429:
            assert 1 <= int(response.headers["retry-after"]) <= 15
            assert b"You are posting comments too quickly. Slow down." in response.body
            assert b"Comment not posted" in response.body  # the comment-error page
    listed = site.request("GET", f"{COMMENTS}?post={post_id}&status=hold", admin=True)
    assert listed.status == 200
    stored = listed.json()
    assert isinstance(stored, list)
    assert len(stored) == 1  # one stored (held for moderation: a first comment)
    # A held comment purges nothing, and neither did the 59 refused ones.
    assert "hit" in site.request("GET", path).headers["cache-status"]
    print(f"60 comments posted in {elapsed:.2f} s: 1 stored, 59 refused")


def test_sixty_wrong_application_passwords_are_throttled(site: Deployment) -> None:
    answers = [
        timed(site, "GET", "/site-json/site/v2/users/me", headers=basic("admin", "x" * 24))
        for _ in range(60)
    ]
    statuses = [response.status for response, _ in answers]
    assert 500 not in statuses
    assert max(seconds for _, seconds in answers) < PROMPT
    first_refused = statuses.index(429)
    assert statuses[:first_refused] == [401] * first_refused
    assert first_refused <= 6  # the login form's threshold: five failures, then waits
    assert statuses.count(429) >= 50
    for response, _ in answers[first_refused:]:
        if response.status == 429:
            assert int(response.headers["retry-after"]) >= 1
            body = response.json()
            assert isinstance(body, dict)
            assert body["code"] == "too_many_attempts"
    # The real administrator's password waits too, from this address.
    throttled = site.request("GET", "/site-json/site/v2/users/me", admin=True)
    assert throttled.status == 429


def test_an_unknown_login_and_a_wrong_password_answer_alike(tmp_path: Path) -> None:
    deployment = Deployment(tmp_path / "site")
    deployment.init()
    deployment.serve("serve", workers=1)
    try:
        wrong = deployment.request(
            "GET", "/site-json/site/v2/users/me", headers=basic("admin", "y" * 24)
        )
        unknown = deployment.request(
            "GET", "/site-json/site/v2/users/me", headers=basic("nobody-here", "y" * 24)
        )
        by_email = deployment.request(
            "GET", "/site-json/site/v2/users/me", headers=basic("no@example.org", "y" * 24)
        )
    finally:
        deployment.stop()
    assert wrong.status == unknown.status == by_email.status == 401
    assert wrong.json() == unknown.json() == by_email.json()
    body = wrong.json()
    assert isinstance(body, dict)
    assert body["code"] == "incorrect_password"
