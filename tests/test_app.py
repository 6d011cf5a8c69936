"""The application's own boundary: body limits, hostile cookies, crashes in pages."""

from __future__ import annotations

import logging

import pytest
from werkzeug.test import Client
from werkzeug.wrappers import Request, Response

from sitecache.app import App
from sitecache.rest.http import MAX_BODY_BYTES

TOO_BIG = b"x" * (MAX_BODY_BYTES + 1)


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/", "text/plain"),
        ("/login", "text/plain"),
        ("/index.php?rest_route=/anything", "application/json"),
        ("/site-json/anything", "application/json"),
    ],
)
def test_a_body_over_the_limit_is_refused_with_413_before_it_is_read(
    client: Client, path: str, content_type: str
) -> None:
    response = client.post(path, data=TOO_BIG, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 413
    assert response.mimetype == content_type


def test_a_rest_413_is_a_json_error(client: Client) -> None:
    response = client.post("/site-json/anything", data=TOO_BIG, content_type="application/json")
    assert response.get_json() == {
        "code": "rest_payload_too_large",
        "message": "The request body is too large.",
        "data": {"status": 413},
    }


@pytest.mark.parametrize("path", ["/", "/login", "/site-admin/", "/site-json/"])
def test_a_cookie_with_bytes_that_are_not_utf8_breaks_nothing(client: Client, path: str) -> None:
    # "\xff" as WSGI passes it: a latin-1 decoded byte that is not valid UTF-8.
    response = client.get(path, headers={"Cookie": "other=\xff; sitecache_session=\xfe"})
    assert response.status_code in (200, 303)


def test_an_unexpected_error_in_a_page_is_a_generic_500_logged_with_its_details(
    app: App, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(request: Request) -> Response:
        raise RuntimeError("page secret detail")

    app.site = broken  # type: ignore[assignment]
    with caplog.at_level(logging.ERROR, logger="sitecache"):
        response = client.get("/some/page")
    assert response.status_code == 500
    assert response.get_data(as_text=True) == "There has been a critical error on this website.\n"
    assert response.headers["Cache-Control"] == "no-store, private"
    assert "page secret detail" in caplog.text
