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
        ("/", "text/html"),
        ("/login", "text/html"),
        ("/comment-post", "text/html"),
        ("/postpass", "text/html"),
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


@pytest.mark.parametrize("path", ["/login", "/comment-post", "/postpass", "/"])
def test_a_form_over_the_limit_gets_the_sites_413_page_never_stored(
    client: Client, path: str
) -> None:
    response = client.post(path, data=TOO_BIG, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 413
    page = response.get_data(as_text=True)
    assert "Request too large" in page
    assert "more than 16 MB: nothing was read or saved" in page
    assert "Back to the site" in page
    assert response.headers["Cache-Control"] == "no-store, private"


def test_a_form_body_cut_off_gets_the_sites_400_page(client: Client) -> None:
    response = client.post(
        "/login",
        data=b"log=ada&pwd=",
        content_type="application/x-www-form-urlencoded",
        environ_overrides={"CONTENT_LENGTH": "1000"},  # the client stopped after 12 bytes
    )
    assert response.status_code == 400
    assert response.mimetype == "text/html"
    assert "not received in full: nothing was saved" in response.get_data(as_text=True)


def test_the_413_page_falls_back_to_plain_text_when_it_cannot_be_rendered(
    app: App, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(status: int, title: str, message: str) -> Response:
        raise RuntimeError("database gone")

    app.site.error_page = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, logger="sitecache"):
        response = client.post("/login", data=TOO_BIG, content_type="text/plain")
    assert response.status_code == 413
    assert response.mimetype == "text/plain"
    assert "nothing was read or saved" in response.get_data(as_text=True)
    assert "database gone" in caplog.text


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
