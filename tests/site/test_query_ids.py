"""A non-integer ``id`` in the query (which overrides the path's, as WordPress reads GET before
the URL) is a plain 400 naming ``id``: no permission check raises, nothing is logged as an
error, and a numeric query ``id`` names the resource as WordPress's ``$request['id']`` does."""

from __future__ import annotations

import logging

import pytest

from tests.site.conftest import AdminRest

API = "/site-json/site/v2"


def item_paths(site: AdminRest) -> list[str]:
    """One item route of each controller that reads ``id`` (and declares it)."""
    media = site.upload_png()
    return [
        "/comments/1",
        "/posts/1",
        "/pages/511",
        f"/media/{media}",
        "/categories/1",
        "/tags/10",
        "/users/1",
        "/posts/1/revisions/2",
    ]


@pytest.mark.parametrize("anonymous", [True, False], ids=["anonymous", "administrator"])
@pytest.mark.parametrize("method", ["GET", "POST", "DELETE", "OPTIONS"])
def test_a_query_id_that_is_not_an_integer_is_a_quiet_400(
    admin_rest: AdminRest, caplog: pytest.LogCaptureFixture, anonymous: bool, method: str
) -> None:
    for path in item_paths(admin_rest):
        caplog.clear()
        with caplog.at_level(logging.INFO):
            response = admin_rest.client.open(
                f"{API}{path}?id=x", method=method, headers={} if anonymous else admin_rest.auth
            )
        problems = [record for record in caplog.records if record.levelno >= logging.WARNING]
        assert problems == [], (path, [record.getMessage() for record in problems])
        assert all(record.exc_info is None for record in caplog.records), path
        if method == "OPTIONS":
            assert response.status_code == 200, (path, response.text)
            continue
        body = response.json
        assert body is not None
        if path.startswith("/posts/1/revisions/") and method == "POST":
            assert body["code"] == "rest_no_route"  # revisions are read and deleted only
            continue
        assert response.status_code == 400, (path, method, response.text)
        if path == "/users/1" and method == "DELETE":  # ``reassign`` is required: checked first
            assert body["code"] == "rest_missing_callback_param"
            continue
        assert body["code"] == "rest_invalid_param", path
        assert "id" in body["data"]["params"], path


@pytest.mark.parametrize(
    ("path", "query_id", "field", "expected"),
    [
        ("/posts/1", "3", "id", 3),
        ("/comments/1", "2", "id", 2),
        ("/categories/1", "2", "id", 2),
        ("/users/1", "2", "id", 2),
    ],
)
def test_the_query_id_overrides_the_path_as_in_wordpress(
    admin_rest: AdminRest, path: str, query_id: str, field: str, expected: int
) -> None:
    response = admin_rest.call("GET", f"/site/v2{path}?id={query_id}")
    assert response.status_code == 200, response.text
    assert response.json is not None
    assert response.json[field] == expected


def test_an_undeclared_query_id_that_is_not_an_integer_names_no_parent(
    admin_rest: AdminRest, caplog: pytest.LogCaptureFixture
) -> None:
    # The autosaves route captures the parent as ``id`` without declaring it (as WordPress):
    # ``?id=x`` is not validated, and ``(int) "x"`` names no post.
    with caplog.at_level(logging.INFO):
        response = admin_rest.call("GET", "/site/v2/posts/1/autosaves?id=x")
    assert response.status_code == 404, response.text
    assert response.json is not None
    assert response.json["code"] == "rest_post_invalid_parent"
    assert [record for record in caplog.records if record.levelno >= logging.WARNING] == []


def test_a_query_id_naming_nothing_is_the_resources_404(admin_rest: AdminRest) -> None:
    for path, code in (
        ("/posts/1", "rest_post_invalid_id"),
        ("/comments/1", "rest_comment_invalid_id"),
        ("/tags/10", "rest_term_invalid"),
        ("/users/1", "rest_user_invalid_id"),
    ):
        response = admin_rest.call("GET", f"/site/v2{path}?id=99999999")
        assert response.status_code == 404, (path, response.text)
        assert response.json is not None
        assert response.json["code"] == code
