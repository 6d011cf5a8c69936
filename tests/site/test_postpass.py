"""Password-protected posts: REST's ``password`` argument and the front site's password form.

REST withholds ``content.rendered`` and ``excerpt.rendered`` of a post with a password unless the
request names its password or asks ``context=edit`` with the right to edit it; a wrong password
is 403 ``rest_post_incorrect_password``. The front site shows the password form (a page any
visitor may get from the cache), ``/postpass`` sets a keyed-hash cookie, and a visitor carrying
it sees the content on a page the cache never stores nor serves to anybody else.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.site import CommentQuery
from sitecache.site.models import Post
from sitecache.site.postpass import (
    NO_EXCERPT,
    PROTECTED_NOTICE,
    is_unlocked,
    postpass_cookie_name,
    postpass_token,
)
from tests.conftest import AppFactory

SITE = "http://example.org"
SECRET = "open sesame"
BODY = "The hidden treasure is under the old oak."
EXCERPT = "A teaser nobody should read."
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@dataclass
class Protected:
    app: App
    post: Post
    page: Post
    public: Post
    headers: dict[str, dict[str, str]]

    def rest(self, path: str, role: str | None = None) -> TestResponse:
        headers = self.headers[role] if role else {}
        return Client(self.app).get(f"/site-json/site/v2{path}", headers=headers)


@pytest.fixture
def protected(app_factory: AppFactory) -> Protected:
    app = app_factory(application_passwords="on")
    headers: dict[str, dict[str, str]] = {}
    ids: dict[str, int] = {}
    for role in ("editor", "author", "owner"):
        user = app.auth.users.create(role, "password123", "author" if role == "owner" else role)
        password, _ = app.auth.app_passwords.create(user, "tests", "")
        token = base64.b64encode(f"{role}:{password}".encode()).decode()
        headers[role] = {"Authorization": f"Basic {token}"}
        ids[role] = user.id
    content = app.content
    post = content.create_post(
        title="Treasure map",
        content=BODY,
        excerpt=EXCERPT,
        status="publish",
        password=SECRET,
        author=ids["owner"],
    )
    page = content.create_post(
        type="page", title="Members", content=BODY, status="publish", password=SECRET
    )
    public = content.create_post(title="Open letter", content="Anybody may read this.",
                                 status="publish", author=ids["owner"])  # fmt: skip
    return Protected(app, post, page, public, headers)


# ---------------------------------------------------------------------------------- REST
# (role, context, password argument) → (status, error code or content shown, password field)
REST_CASES: list[tuple[str | None, str, str | None, int, str | bool, bool]] = [
    (None, "view", None, 200, False, False),
    (None, "view", SECRET, 200, True, False),
    (None, "view", "wrong", 403, "rest_post_incorrect_password", False),
    (None, "edit", None, 401, "rest_forbidden_context", False),
    ("editor", "view", None, 200, False, False),
    ("editor", "edit", None, 200, True, True),
    ("editor", "edit", "wrong", 403, "rest_post_incorrect_password", False),
    ("author", "view", SECRET, 200, True, False),
    ("author", "edit", None, 403, "rest_forbidden_context", False),
    ("owner", "edit", None, 200, True, True),
]


@pytest.mark.parametrize(("role", "context", "password", "status", "shown", "field"), REST_CASES)
def test_rest_withholds_protected_content(
    protected: Protected,
    role: str | None,
    context: str,
    password: str | None,
    status: int,
    shown: str | bool,
    field: bool,
) -> None:
    # Authors may not edit pages: their cases are the post's only.
    posts = (protected.post,) if role in ("author", "owner") else (protected.post, protected.page)
    for post in posts:
        base = "posts" if post.type == "post" else "pages"
        query = {"context": context, **({"password": password} if password else {})}
        response = protected.rest(f"/{base}/{post.id}?{urlencode(query)}", role)
        data = json.loads(response.data)
        assert response.status_code == status, data
        if isinstance(shown, str):
            assert data["code"] == shown
            if shown == "rest_post_incorrect_password":
                assert data["message"] == "Incorrect post password."
            continue
        assert data["content"]["protected"] is True
        assert (BODY in data["content"]["rendered"]) is shown
        if shown:
            assert data["content"]["rendered"]
        else:
            assert data["content"]["rendered"] == ""
        if "excerpt" in data:
            assert data["excerpt"]["protected"] is True
            assert (data["excerpt"]["rendered"] == "") is not shown
        assert ("password" in data) is field
        if field:
            assert data["password"] == SECRET
        # REST titles carry no "Protected: " prefix (WordPress drops it there).
        assert data["title"]["rendered"] == post.title


def test_a_password_given_for_a_post_without_one_is_refused(protected: Protected) -> None:
    response = protected.rest(f"/posts/{protected.public.id}?password=anything")
    assert response.status_code == 403
    assert json.loads(response.data)["code"] == "rest_post_incorrect_password"
    plain = json.loads(protected.rest(f"/posts/{protected.public.id}").data)
    assert plain["content"]["protected"] is False
    assert "Anybody may read this." in plain["content"]["rendered"]


def test_collections_withhold_protected_content(protected: Protected) -> None:
    listed = json.loads(protected.rest("/posts").data)
    mine = next(item for item in listed if item["id"] == protected.post.id)
    assert mine["content"] == {"rendered": "", "protected": True}
    assert mine["excerpt"] == {"rendered": "", "protected": True}
    edited = json.loads(protected.rest("/posts?context=edit", "editor").data)
    theirs = next(item for item in edited if item["id"] == protected.post.id)
    assert BODY in theirs["content"]["rendered"]
    assert theirs["password"] == SECRET


def test_the_item_route_publishes_the_password_argument(protected: Protected) -> None:
    response = Client(protected.app).options(f"/site-json/site/v2/posts/{protected.post.id}")
    endpoints = json.loads(response.data)["endpoints"]
    get = next(e for e in endpoints if "GET" in e["methods"])
    assert get["args"]["password"]["type"] == "string"


# ---------------------------------------------------------------------------------- cookie
def test_the_cookie_holds_a_keyed_hash_never_the_password() -> None:
    token = postpass_token(b"key one", SECRET)
    assert SECRET not in token
    assert token != postpass_token(b"key two", SECRET)
    assert token != postpass_token(b"key one", "other")
    post = Post(1, "post", "publish", 1, 0, "s", "T", "c", "", 0, 0, password=SECRET)
    name = postpass_cookie_name(SITE)
    assert name.startswith("sitecache_postpass_")
    assert is_unlocked(b"key one", post, {name: token}, SITE)
    assert not is_unlocked(b"key two", post, {name: token}, SITE)
    assert not is_unlocked(b"", post, {name: postpass_token(b"", SECRET)}, SITE)
    assert not is_unlocked(b"key one", post, {name: SECRET}, SITE)
    assert not is_unlocked(b"key one", post, {}, SITE)


# ---------------------------------------------------------------------------------- front site
def path_of(app: App, post: Post) -> str:
    return urlsplit(app.site.post_url(post)).path


def unlock(client: Client, post: Post, password: str = SECRET, **headers: str) -> TestResponse:
    return client.post(
        "/postpass",
        data=urlencode({"post_id": post.id, "post_password": password}),
        headers={**FORM, **headers},
        base_url=SITE,
    )


def status_of(response: TestResponse) -> str:
    return response.headers.get("Cache-Status", "")


def test_the_post_page_shows_the_password_form_not_the_content(protected: Protected) -> None:
    app = protected.app
    for post in (protected.post, protected.page):
        response = Client(app, use_cookies=False).get(path_of(app, post), base_url=SITE)
        text = response.get_data(as_text=True)
        assert response.status_code == 200
        assert PROTECTED_NOTICE in text
        assert 'action="http://example.org/postpass"' in text
        assert f'name="post_id" value="{post.id}"' in text
        assert f"Protected: {post.title}" in text
        assert BODY not in text
        assert 'id="commentform"' not in text
        assert "private" not in response.headers.get("Cache-Control", "")


def test_lists_and_feeds_never_show_protected_content(protected: Protected) -> None:
    client = Client(protected.app, use_cookies=False)
    for path in ("/", "/feed/"):
        text = client.get(path, base_url=SITE).get_data(as_text=True)
        assert "Protected: Treasure map" in text, path
        assert NO_EXCERPT in text, path
        assert BODY not in text, path
        assert EXCERPT not in text, path


def test_the_right_password_sets_the_cookie_and_redirects_to_the_post(
    protected: Protected,
) -> None:
    app = protected.app
    response = unlock(Client(app, use_cookies=False), protected.post)
    assert response.status_code == 303
    assert response.headers["Location"] == app.site.post_url(protected.post)
    assert response.headers["Cache-Control"] == "no-store, private"
    cookie = response.headers["Set-Cookie"]
    name = postpass_cookie_name(app.server.home_url())
    assert cookie.startswith(f"{name}={postpass_token(app.auth.key, SECRET)};")
    assert SECRET.replace(" ", "") not in cookie.replace(" ", "")
    assert "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie
    assert "Path=/" in cookie
    assert "Max-Age=864000" in cookie
    assert "Secure" not in cookie


def test_the_cookie_is_secure_on_an_https_site(app_factory: AppFactory) -> None:
    app = app_factory(site_url="https://example.org")
    post = app.content.create_post(title="T", content=BODY, status="publish", password=SECRET)
    response = Client(app).post(
        "/postpass",
        data=urlencode({"post_id": post.id, "post_password": SECRET}),
        headers=FORM,
        base_url="https://example.org",
    )
    assert response.status_code == 303
    assert "Secure" in response.headers["Set-Cookie"]


def test_the_redirect_never_leaves_the_site(protected: Protected) -> None:
    app = protected.app
    response = Client(app, use_cookies=False).post(
        "/postpass",
        data=urlencode({"post_id": protected.post.id, "post_password": SECRET,
                        "redirect_to": "https://evil.example/", "_wp_http_referer": "//evil"}),
        headers=FORM,
        base_url=SITE,
    )  # fmt: skip
    assert response.headers["Location"] == app.site.post_url(protected.post)


@pytest.mark.parametrize(
    ("form", "status"),
    [
        ({"post_password": "wrong"}, 403),
        ({"post_password": ""}, 403),
        ({"post_id": "999999", "post_password": SECRET}, 404),
        ({"post_id": "public", "post_password": ""}, 404),
        ({"post_id": "", "post_password": SECRET}, 404),
    ],
)
def test_refused_forms_set_no_cookie(
    protected: Protected, form: dict[str, str], status: int
) -> None:
    ids = {"public": str(protected.public.id)}
    data = {"post_id": str(protected.post.id), **form}
    data["post_id"] = ids.get(data["post_id"], data["post_id"])
    response = Client(protected.app, use_cookies=False).post(
        "/postpass", data=urlencode(data), headers=FORM, base_url=SITE
    )
    assert response.status_code == status
    assert "Set-Cookie" not in response.headers
    assert response.headers["Cache-Control"] == "no-store, private"
    if status == 403:
        assert "Incorrect post password." in response.get_data(as_text=True)


def test_a_form_from_another_site_is_refused(protected: Protected) -> None:
    response = unlock(
        Client(protected.app, use_cookies=False), protected.post, Origin="https://evil.example"
    )
    assert response.status_code == 403
    assert "Set-Cookie" not in response.headers


def test_only_post_is_allowed_on_postpass(protected: Protected) -> None:
    response = Client(protected.app).get("/postpass", base_url=SITE)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"


def test_wrong_passwords_are_throttled(protected: Protected) -> None:
    app = protected.app
    app.auth.throttle.clock = lambda: 1_000_000.0  # a frozen clock: no wait ever ends
    client = Client(app, use_cookies=False)
    statuses = [unlock(client, protected.post, "wrong").status_code for _ in range(5)]
    assert statuses == [403] * 5
    refused = unlock(client, protected.post, SECRET)
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    assert "Set-Cookie" not in refused.headers


def test_a_forged_or_foreign_cookie_unlocks_nothing(protected: Protected) -> None:
    app = protected.app
    name = postpass_cookie_name(app.server.home_url())
    for value in (SECRET, postpass_token(app.auth.key, "another password"), "0" * 64):
        client = Client(app)
        client.set_cookie(name, value, domain="example.org")
        text = client.get(path_of(app, protected.post), base_url=SITE).get_data(as_text=True)
        assert BODY not in text
        assert PROTECTED_NOTICE in text


@pytest.mark.parametrize("known_users", ["bypass", "bypass_any_cookie", "anonymous"])
def test_an_unlocked_post_is_never_cached_nor_served_to_another_visitor(
    protected: Protected, known_users: str
) -> None:
    # Attack report item 9: with known_users=anonymous the unlock cookie was stripped like a
    # login cookie, and the visitor who unlocked the post got the cached password form.
    app = protected.app
    assert isinstance(app.cache.engine.update_settings({"known_users": known_users}), dict)
    path = path_of(app, protected.post)
    anonymous = Client(app, use_cookies=False)
    # The anonymous form page may be cached.
    first = anonymous.get(path, base_url=SITE)
    assert "stored" in status_of(first)
    assert status_of(anonymous.get(path, base_url=SITE)).startswith("sitecache; hit")
    # The visitor who unlocks: the /postpass answer is never cached...
    visitor = Client(app)
    answered = unlock(visitor, protected.post)
    assert answered.status_code == 303
    assert "stored" not in status_of(answered)
    assert "hit" not in status_of(answered)
    # ... and their page has the content, never from the cache, and is not stored.
    for _ in range(2):
        own = visitor.get(path, base_url=SITE)
        assert BODY in own.get_data(as_text=True)
        assert PROTECTED_NOTICE not in own.get_data(as_text=True)
        assert "hit" not in status_of(own)
        assert "stored" not in status_of(own)
        assert own.headers["Cache-Control"] == "no-store, private"
    # A second anonymous visitor afterwards gets the form, never the unlocked content.
    later = Client(app, use_cookies=False).get(path, base_url=SITE)
    assert BODY not in later.get_data(as_text=True)
    assert PROTECTED_NOTICE in later.get_data(as_text=True)
    assert status_of(later).startswith("sitecache; hit")


def stored_comments(app: App, post: Post) -> list[str]:
    """The text of every comment stored on ``post``, held or approved."""
    query = CommentQuery(posts=(post.id,), statuses=("approve", "hold"))
    return [comment.content for comment in app.content.query_comments(query)[0]]


def comment_form(post: Post, text: str) -> dict[str, str]:
    return {
        "comment_post_ID": str(post.id),
        "author": "Bob",
        "email": "bob@example.com",
        "comment": text,
    }


def test_the_unlocked_visitor_may_comment_and_nobody_else(protected: Protected) -> None:
    app = protected.app
    post = protected.post
    path = path_of(app, post)
    # Without the cookie: refused as WordPress refuses it (403), nothing stored.
    stranger = Client(app, use_cookies=False)
    refused = stranger.post("/comment-post", data=comment_form(post, "Guessing"), base_url=SITE)
    assert refused.status_code == 403
    assert "password protected" in refused.get_data(as_text=True)
    assert stored_comments(app, post) == []
    visitor = Client(app)
    unlock(visitor, post)
    text = visitor.get(path, base_url=SITE).get_data(as_text=True)
    assert BODY in text
    assert 'id="commentform"' in text  # WordPress takes comments on an unlocked post
    posted = visitor.post("/comment-post", data=comment_form(post, "Found it"), base_url=SITE)
    assert posted.status_code == 302
    assert urlsplit(posted.headers["Location"]).path == path
    assert stored_comments(app, post) == ["Found it"]
    # A later anonymous visitor still gets the password form only: no content, no comments.
    later = Client(app, use_cookies=False).get(path, base_url=SITE).get_data(as_text=True)
    assert BODY not in later
    assert "Found it" not in later
    assert 'id="commentform"' not in later
    # The cookie of one password unlocks nothing else: the page has another password.
    app.content.update_post(protected.page.id, password="different")
    other = visitor.get(path_of(app, protected.page), base_url=SITE).get_data(as_text=True)
    assert BODY not in other
    refused_page = visitor.post(
        "/comment-post", data=comment_form(protected.page, "Other"), base_url=SITE
    )
    assert refused_page.status_code == 403


def test_anonymous_searches_never_find_a_protected_post(protected: Protected) -> None:
    client = Client(protected.app, use_cookies=False)
    front = client.get("/search/treasure/", base_url=SITE).get_data(as_text=True)
    assert "Treasure map" not in front
    for path in ("/posts?search=treasure", "/search?search=treasure"):
        found = json.loads(protected.rest(path).data)
        assert protected.post.id not in [item["id"] for item in found], path
        mine = json.loads(protected.rest(path, "editor").data)
        assert protected.post.id in [item["id"] for item in mine], path
    assert "Open letter" in client.get("/search/anybody/", base_url=SITE).get_data(as_text=True)
