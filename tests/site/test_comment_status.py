"""A comment's ``status`` over REST round-trips as in WordPress: a GET answers ``approved`` for
an approved comment, and every spelling WordPress's ``handle_status_param`` accepts can be
sent back (``approved``/``approve``/``1``, ``hold``/``0``, ``spam``, ``unspam``, ``trash``,
``untrash``); an unknown one is a 400 naming ``status``."""

from __future__ import annotations

import pytest

from tests.site.conftest import AdminRest

COMMENTS = "/site/v2/comments"


def status_of(site: AdminRest, comment_id: int) -> str:
    response = site.call("GET", f"{COMMENTS}/{comment_id}")
    assert response.status_code == 200, response.text
    assert response.json is not None
    return str(response.json["status"])


def test_an_approved_comment_reads_approved_and_writes_back_unchanged(
    admin_rest: AdminRest,
) -> None:
    comment = admin_rest.app.content.get_comment(1)
    assert comment is not None
    assert comment.status == "approve"
    assert status_of(admin_rest, 1) == "approved"
    listed = admin_rest.call("GET", f"{COMMENTS}?per_page=1")
    assert listed.json is not None
    assert listed.json[0]["status"] == "approved"
    again = admin_rest.call("PATCH", f"{COMMENTS}/1", {"status": "approved"})
    assert again.status_code == 200, again.text
    assert again.json is not None
    assert again.json["status"] == "approved"


@pytest.mark.parametrize(
    ("sent", "stored", "answered"),
    [
        ("hold", "hold", "hold"),
        ("0", "hold", "hold"),
        ("spam", "spam", "spam"),
        ("trash", "trash", "trash"),
        ("approved", "approve", "approved"),
        ("approve", "approve", "approved"),
        ("1", "approve", "approved"),
        ("Approved", "approve", "approved"),  # sanitize_key lower-cases it
    ],
)
def test_each_wordpress_spelling_sets_its_status(
    admin_rest: AdminRest, sent: str, stored: str, answered: str
) -> None:
    admin_rest.app.content.update_comment(1, status="hold" if stored == "approve" else "approve")
    response = admin_rest.call("POST", f"{COMMENTS}/1", {"status": sent})
    assert response.status_code == 200, response.text
    assert response.json is not None
    assert response.json["status"] == answered
    comment = admin_rest.app.content.get_comment(1)
    assert comment is not None
    assert comment.status == stored


@pytest.mark.parametrize(("word", "from_status"), [("unspam", "spam"), ("untrash", "trash")])
def test_unspam_and_untrash_bring_a_comment_back_to_hold_and_touch_nothing_else(
    admin_rest: AdminRest, word: str, from_status: str
) -> None:
    admin_rest.app.content.update_comment(1, status=from_status)
    assert status_of(admin_rest, 1) == from_status
    response = admin_rest.call("PATCH", f"{COMMENTS}/1", {"status": word})
    assert response.status_code == 200, response.text
    assert status_of(admin_rest, 1) == "hold"
    admin_rest.app.content.update_comment(1, status="approve")
    assert admin_rest.call("PATCH", f"{COMMENTS}/1", {"status": word}).status_code == 200
    assert status_of(admin_rest, 1) == "approved"


def test_an_unknown_status_is_a_400_naming_status_and_changes_nothing(
    admin_rest: AdminRest,
) -> None:
    response = admin_rest.call("PATCH", f"{COMMENTS}/1", {"status": "bogus", "content": "new"})
    assert response.status_code == 400, response.text
    body = response.json
    assert body is not None
    assert body["code"] == "rest_invalid_param"
    assert body["data"]["status"] == 400
    assert set(body["data"]["params"]) == {"status"}
    assert "approved" in body["data"]["params"]["status"]
    comment = admin_rest.app.content.get_comment(1)
    assert comment is not None
    assert comment.status == "approve"
    assert comment.content != "new"


def test_a_moderator_creates_a_comment_with_the_status_a_get_answers(
    admin_rest: AdminRest,
) -> None:
    created = admin_rest.call(
        "POST", COMMENTS, {"post": 1, "content": "Agreed.", "status": "approved"}
    )
    assert created.status_code == 201, created.text
    assert created.json is not None
    assert created.json["status"] == "approved"
    held = admin_rest.call("POST", COMMENTS, {"post": 1, "content": "Hmm.", "status": "0"})
    assert held.json is not None
    assert held.json["status"] == "hold"


def test_the_published_schema_has_no_enum_on_status(admin_rest: AdminRest) -> None:
    # WordPress's comment schema: a plain string (its accepted words are not an enum).
    schema = admin_rest.call("OPTIONS", COMMENTS).json
    assert schema is not None
    assert "enum" not in schema["schema"]["properties"]["status"]
    create_args = next(e for e in schema["endpoints"] if "POST" in e["methods"])["args"]
    assert "enum" not in create_args["status"]
