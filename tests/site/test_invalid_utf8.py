"""A query or form that is not UTF-8 is refused with a 400 (attack report item 8).

``/?s=%ED%A0%80`` redirected to a double-encoded ``/search/%25ED%25A0%2580/``; form bodies to
REST and ``/comment-post`` stored the literal text ``"%ED%A0%80"`` (werkzeug keeps invalid
escapes), a query parameter stored U+FFFD, while a JSON body with the same was a 400. Now REST
answers an invalid parameter's 400, the pages a 400 page, and nothing is stored.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.rest.utf8_fields import malformed_multipart_fields, malformed_utf8_fields
from sitecache.site import CommentQuery
from tests.conftest import AppFactory
from tests.site.conftest import SmallSite

SITE = "http://example.org"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
#: escapes that are not UTF-8 once decoded: a UTF-16 surrogate, a lone byte, a cut sequence
BAD = ["%ED%A0%80", "%FF", "%C3", "%C3%28", "%80"]

FIELDS = st.lists(st.tuples(st.text(min_size=1, max_size=8), st.text(max_size=12)), max_size=5)


@given(FIELDS)
def test_every_utf8_query_passes(fields: list[tuple[str, str]]) -> None:
    assert malformed_utf8_fields(urlencode(fields)) == []
    assert malformed_utf8_fields(urlencode(fields).encode()) == []


@given(FIELDS, st.sampled_from(BAD), st.data())
def test_an_invalid_escape_names_its_field(
    fields: list[tuple[str, str]], bad: str, data: st.DataObject
) -> None:
    fields = [(f"f{index}{name}", value) for index, (name, value) in enumerate(fields)]
    fields.append(("title", "x"))
    target = data.draw(st.integers(0, len(fields) - 1))
    encoded = "&".join(
        f"{quote(name)}={quote(value)}{bad if index == target else ''}"
        for index, (name, value) in enumerate(fields)
    )
    assert malformed_utf8_fields(encoded) == [fields[target][0].partition("[")[0]]


def test_names_raw_bytes_and_nested_fields_once() -> None:
    assert malformed_utf8_fields(b"title=\xff&a[b]=%FF&a[c]=%FF&ok=%C3%A9") == ["title", "a"]
    assert malformed_utf8_fields("s=caf%C3%A9&q=100%25") == []


@pytest.fixture
def admin(app_factory: AppFactory) -> tuple[App, dict[str, str]]:
    app = app_factory(application_passwords="on")
    user = app.auth.users.create("admin", "password123", "administrator")
    password, _ = app.auth.app_passwords.create(user, "tests", "")
    token = base64.b64encode(f"admin:{password}".encode()).decode()
    return app, {"Authorization": f"Basic {token}"}


def refused_as_invalid_param(response: TestResponse, name: str) -> None:
    assert response.status_code == 400
    body = json.loads(response.data)
    assert body["code"] == "rest_invalid_param"
    assert body["data"]["status"] == 400
    assert body["data"]["params"] == {name: f"{name} is not valid UTF-8."}
    assert body["data"]["details"][name]["code"] == "rest_invalid_param"


@pytest.mark.parametrize("bad", ["%ED%A0%80", "%FF"])
def test_rest_form_bodies_and_queries_refuse_what_json_refuses(
    admin: tuple[App, dict[str, str]], bad: str
) -> None:
    app, auth = admin
    post = app.content.create_post(title="Before", status="publish")
    client = Client(app)
    route = f"/site-json/site/v2/posts/{post.id}"
    as_form = client.post(route, data=f"title={bad}", headers={**auth, **FORM}, base_url=SITE)
    refused_as_invalid_param(as_form, "title")
    as_query = client.post(f"{route}?title={bad}", headers=auth, base_url=SITE)
    refused_as_invalid_param(as_query, "title")
    patched = client.patch(route, data=f"title={bad}", headers={**auth, **FORM}, base_url=SITE)
    refused_as_invalid_param(patched, "title")
    raw = bad.replace("%", "").lower()
    as_json = client.post(
        route,
        data=b'{"title":"' + bytes.fromhex(raw) + b'"}',
        headers={**auth, "Content-Type": "application/json"},
        base_url=SITE,
    )
    assert as_json.status_code == 400
    assert json.loads(as_json.data)["code"] == "rest_invalid_json"
    # By rest_route in the form of a POST to the home URL, too.
    via_home = client.post(
        "/", data=f"rest_route=/site/v2/posts/{post.id}&title={bad}", headers={**auth, **FORM},
        base_url=SITE,
    )  # fmt: skip
    refused_as_invalid_param(via_home, "title")
    reread = app.content.get_post(post.id)
    assert reread is not None
    assert reread.title == "Before"
    # A valid form body is taken as it is.
    taken = client.post(route, data="title=caf%C3%A9", headers={**auth, **FORM}, base_url=SITE)
    assert taken.status_code == 200
    assert json.loads(taken.data)["title"]["raw"] == "café"


def test_a_search_that_is_not_utf8_is_a_400_page_not_a_redirect(
    client: Client, site: SmallSite
) -> None:
    refused = client.get("/?s=%ED%A0%80", base_url=SITE)
    assert refused.status_code == 400
    assert refused.mimetype == "text/html"
    assert "not valid UTF-8" in refused.get_data(as_text=True)
    assert refused.headers["Cache-Control"] == "no-store, private"
    assert "Location" not in refused.headers
    moved = client.get("/?s=caf%C3%A9", base_url=SITE)
    assert moved.status_code == 301
    assert moved.headers["Location"] == f"{SITE}/search/caf%C3%A9/"


def test_a_comment_that_is_not_utf8_is_refused_and_not_stored(
    app: App, client: Client, site: SmallSite
) -> None:
    form = urlencode({"comment_post_ID": site.post.id, "author": "Bob",
                      "email": "bob@example.com"}) + "&comment=hi%ED%A0%80"  # fmt: skip
    response = client.post("/comment-post", data=form, headers=FORM, base_url=SITE)
    assert response.status_code == 400
    assert "comment" in response.get_data(as_text=True)
    query = CommentQuery(posts=(site.post.id,), statuses=("approve", "hold"))
    assert app.content.query_comments(query)[0] == []


def multipart(fields: dict[str, bytes], charset: str = "") -> tuple[bytes, str]:
    boundary = "XyZ"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n'.encode()
        + (f"Content-Type: text/plain; charset={charset}\r\n".encode() if charset else b"")
        + b"\r\n"
        + value
        + b"\r\n"
        for name, value in fields.items()
    ]
    return b"".join(
        parts
    ) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def test_multipart_fields_that_are_not_utf8_are_named() -> None:
    body, content_type = multipart({"title": b"\xed\xa0\x80", "ok": "café".encode()})
    assert malformed_multipart_fields(body, content_type) == ["title"]
    body, content_type = multipart({"title": b"caf\xe9"}, charset="iso-8859-1")
    assert malformed_multipart_fields(body, content_type) == []
    assert malformed_multipart_fields(b"not multipart at all \xff", content_type) == []


def test_a_multipart_rest_body_that_is_not_utf8_is_refused(
    admin: tuple[App, dict[str, str]],
) -> None:
    # werkzeug reads such a field with U+FFFD for the bad bytes: silently stored mojibake.
    app, auth = admin
    post = app.content.create_post(title="Before", status="publish")
    body, content_type = multipart({"title": b"x\xff"})
    response = Client(app).post(
        f"/site-json/site/v2/posts/{post.id}",
        data=body,
        headers={**auth, "Content-Type": content_type},
        base_url=SITE,
    )
    refused_as_invalid_param(response, "title")
    reread = app.content.get_post(post.id)
    assert reread is not None
    assert reread.title == "Before"
