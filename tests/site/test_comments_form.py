"""The comment form: validation, CSRF, moderation notice for its author only, the cookie."""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.site import CommentQuery
from sitecache.site.commenting import AWAITING_MODERATION
from tests.site.conftest import SmallSite

NOTICE = '<p class="comment-awaiting-moderation">Your comment is awaiting moderation.</p>'


def form(site: SmallSite, **overrides: str) -> dict[str, str]:
    return {
        "comment_post_ID": str(site.post.id),
        "author": "Bob",
        "email": "bob@example.com",
        "url": "https://bob.example.com",
        "comment": "Nice <script>alert(1)</script> post",
        **overrides,
    }


def test_the_notice_is_exactly_the_string_the_cache_plugin_strips() -> None:
    assert AWAITING_MODERATION == NOTICE


def test_a_held_comment_shows_its_notice_only_to_its_author(
    client: Client, site: SmallSite
) -> None:
    response = client.post("/comment-post", data=form(site))
    assert response.status_code == 302
    cookie_name = (
        "sitecache_comment_author_"
        + hashlib.md5(b"http://example.org", usedforsecurity=False).hexdigest()
    )
    assert response.headers["Set-Cookie"].startswith(f"{cookie_name}=Bob;")
    assert "HttpOnly" in response.headers["Set-Cookie"]
    location = urlsplit(response.headers["Location"])
    assert location.path == "/hello-world/"
    assert "unapproved=" in location.query
    assert "moderation-hash=" in location.query
    author_view = client.get(f"{location.path}?{location.query}")
    body = author_view.get_data(as_text=True)
    assert NOTICE in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert author_view.headers["Cache-Control"] == "no-store, private"
    assert NOTICE not in client.get("/hello-world/").get_data(as_text=True)
    forged = location.query.rsplit("=", 1)[0] + "=" + "0" * 32
    forged_view = client.get(f"{location.path}?{forged}").get_data(as_text=True)
    assert NOTICE not in forged_view
    assert "Nice" not in forged_view


def test_an_approved_comment_is_public_without_a_notice(
    app: App, client: Client, site: SmallSite
) -> None:
    held = app.content.add_comment(
        post_id=site.post.id, author_email="bob@example.com", content="old"
    )
    app.content.update_comment(held.id, status="approve")
    response = client.post("/comment-post", data=form(site, comment="Second one"))
    assert "unapproved" not in response.headers["Location"]
    body = client.get("/hello-world/").get_data(as_text=True)
    assert "Second one" in body
    assert NOTICE not in body


def test_cross_site_posts_and_invalid_forms_are_refused(client: Client, site: SmallSite) -> None:
    cross = client.post(
        "/comment-post", data=form(site), headers={"Origin": "https://evil.example"}
    )
    assert cross.status_code == 403
    assert "Set-Cookie" not in cross.headers
    same = client.post("/comment-post", data=form(site), headers={"Origin": "http://example.org"})
    assert same.status_code == 302
    for overrides, status in (
        ({"email": ""}, 400),
        ({"email": "not-an-address"}, 400),
        ({"comment": "   "}, 400),
        ({"comment_post_ID": str(site.draft.id)}, 404),
        ({"comment_post_ID": "abc"}, 404),
    ):
        response = client.post("/comment-post", data=form(site, **overrides))
        assert response.status_code == status, overrides
        assert "Set-Cookie" not in response.headers
        if status == 400:  # a visitor's refusal page leads back to the post, not an account
            assert "Back to your account" not in response.text
            assert 'id="back-to-post"' in response.text
        else:  # no post to go back to: the site
            assert '<a href="http://example.org/">Back to the site</a>' in response.text


def test_a_refused_comment_is_shown_again_as_typed_with_the_way_back(
    client: Client, site: SmallSite
) -> None:
    typed = "A long thought, <b>bold</b> & careful,\nover two lines."
    response = client.post("/comment-post", data=form(site, comment=typed, email="not-an-address"))
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert "Please enter a valid email address." in html
    # The form again, posting to the same place, holding every field as typed (escaped).
    assert '<form id="commentform" method="post" action="http://example.org/comment-post"' in html
    assert "A long thought, &lt;b&gt;bold&lt;/b&gt; &amp; careful,\nover two lines." in html
    assert 'value="not-an-address"' in html
    assert f'name="comment_post_ID" value="{site.post.id}"' in html
    assert '<a href="http://example.org/hello-world/" id="back-to-post">' in html
    assert response.headers["Cache-Control"] == "no-store, private"


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Referer": "https://evil.example/page"},
        {"Origin": "null"},
    ],
)
def test_the_comment_form_shares_the_login_forms_cross_site_check(
    client: Client, site: SmallSite, headers: dict[str, str]
) -> None:
    """One check for every state-changing form (`sitecache.auth.origin`, #15 point 10)."""
    response = client.post("/comment-post", data=form(site), headers=headers)
    assert response.status_code == 403
    assert "Set-Cookie" not in response.headers


def test_comments_on_a_closed_post_are_refused(app: App, client: Client, site: SmallSite) -> None:
    app.content.update_post(site.post.id, comment_status="closed")
    assert client.post("/comment-post", data=form(site)).status_code == 403
    assert "Comments are closed." in client.get("/hello-world/").get_data(as_text=True)


def test_a_javascript_author_url_is_dropped(app: App, client: Client, site: SmallSite) -> None:
    client.post("/comment-post", data=form(site, url="javascript:alert(1)"))
    comment = app.content.query_comments(CommentQuery(statuses=("hold",)))[0][0]
    assert comment.author_url == ""
