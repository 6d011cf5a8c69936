"""Cross-site form POSTs to the auth pages are refused (login CSRF, #15 point 10).

``POST /login``, ``POST /logout`` and ``POST /site-admin/authorize-application`` share the
comment form's check (`sitecache.auth.origin`): a foreign or ``null`` ``Origin``, a foreign
``Referer`` without ``Origin``, or ``Sec-Fetch-Site: cross-site`` get a 403 page before anything
is read, counted or changed; the same origin and no such header at all (curl) keep working.
Requests are sent to ``http://localhost``; the site's ``site_url`` is ``http://example.org``
unless a test says otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.auth.sessions import COOKIE_NAME
from tests.auth.conftest import (
    AUTHORIZE,
    PASSWORD,
    Site,
    hidden_field,
    set_cookie_headers,
)

FOREIGN = "https://evil.example"


def post_login(
    client: Client,
    login: str,
    headers: dict[str, str],
    password: str = PASSWORD,
    base_url: str = "http://localhost",
) -> TestResponse:
    return client.post(
        "/login", data={"log": login, "pwd": password}, headers=headers, base_url=base_url
    )


def session_count(site: Site) -> int:
    row = site.app.auth.store.connection().execute("SELECT COUNT(*) FROM sessions").fetchone()
    return int(row[0])


def assert_refused(response: TestResponse) -> None:
    assert response.status_code == 403, response.text
    assert "must be submitted from this site" in response.text
    assert not any(h.startswith(f"{COOKIE_NAME}=") for h in set_cookie_headers(response))
    assert "no-store" in response.headers["Cache-Control"]


LOGIN_CASES: list[tuple[str, dict[str, str], bool]] = [
    ("no Origin, Referer or Sec-Fetch-Site (curl)", {}, True),
    ("site_url's origin", {"Origin": "http://example.org"}, True),
    ("the address the browser used", {"Origin": "http://localhost"}, True),
    ("a same-origin Referer", {"Referer": "http://localhost/login"}, True),
    ("a same-origin fetch", {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost"}, True),
    ("a foreign Origin", {"Origin": FOREIGN}, False),
    ("a null Origin", {"Origin": "null"}, False),
    ("a foreign Referer", {"Referer": f"{FOREIGN}/phish"}, False),
    ("Sec-Fetch-Site: cross-site", {"Sec-Fetch-Site": "cross-site"}, False),
    ("a foreign Origin and a same-origin Referer", {
        "Origin": FOREIGN, "Referer": "http://localhost/login"}, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("headers", "taken"), [(headers, taken) for _, headers, taken in LOGIN_CASES],
    ids=[name for name, _, _ in LOGIN_CASES],
)  # fmt: skip
def test_a_login_is_taken_only_from_this_site(
    site: Site, headers: dict[str, str], taken: bool
) -> None:
    response = post_login(site.client(), site.users["subscriber"].login, headers)
    if taken:
        assert response.status_code == 303, response.text
        assert session_count(site) == 1
    else:
        assert_refused(response)
        assert session_count(site) == 0


def test_a_refused_login_is_logged_with_its_reason(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="sitecache.auth"):
        site.client().post(
            "/login",
            data={"log": "sam", "pwd": PASSWORD},
            environ_overrides={"HTTP_ORIGIN": "https://evil.example\nforged"},
        )
    [record] = caplog.records
    message = record.getMessage()
    assert "/login" in message
    assert "evil.example" in message
    assert "\n" not in message  # the client's text is quoted, never a new log line


def test_refused_logins_are_not_counted_by_the_throttle(site: Site) -> None:
    """A cross-site page cannot lock a victim out by making browsers fail logins for them."""
    login = site.users["editor"].login
    for _ in range(30):
        assert_refused(post_login(site.client(), login, {"Origin": FOREIGN}, password="wrong"))
    response = post_login(site.client(), login, {"Origin": "http://localhost"})
    assert response.status_code == 303, response.text


def test_a_refused_login_does_not_replace_the_visitors_session(site: Site) -> None:
    """Login CSRF proper: another site's page cannot log the visitor into its own account."""
    client = site.logged_in("author")
    before = client.get_cookie(COOKIE_NAME, domain="localhost")
    assert before is not None
    assert_refused(post_login(client, site.users["subscriber"].login, {"Origin": FOREIGN}))
    after = client.get_cookie(COOKIE_NAME, domain="localhost")
    assert after is not None
    assert after.value == before.value
    assert site.app.auth.sessions.find(after.value) is not None


# ---------------------------------------------------------------------- site_url and proxies
@pytest.mark.parametrize(
    ("origin", "taken"),
    [("http://localhost", True), ("http://example.org", False), (FOREIGN, False)],
)
def test_without_site_url_this_site_is_the_address_the_request_was_sent_to(
    site_factory: Callable[..., Site], origin: str, taken: bool
) -> None:
    site = site_factory(site_url=None)
    response = post_login(site.client(), "sam", {"Origin": origin})
    if taken:
        assert response.status_code == 303, response.text
    else:
        assert_refused(response)


@pytest.mark.parametrize(
    ("site_url", "origin", "taken"),
    [
        (None, "https://www.example.com", True),
        ("https://www.example.com", "https://www.example.com", True),
        (None, "http://localhost", False),  # the proxy's own hop, not the browser's address
        (None, "http://www.example.com", False),  # the browser used https
        ("https://www.example.com", FOREIGN, False),
    ],
)
def test_behind_a_trusted_proxy_this_site_is_the_forwarded_address(
    site_factory: Callable[..., Site], site_url: str | None, origin: str, taken: bool
) -> None:
    site = site_factory(site_url=site_url, proxy_count=1)
    forwarded = {
        "X-Forwarded-For": "203.0.113.9",
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "www.example.com",
    }
    response = post_login(site.client(), "sam", {"Origin": origin, **forwarded})
    if taken:
        assert response.status_code == 303, response.text
    else:
        assert_refused(response)


def test_forwarded_headers_do_not_vouch_for_an_origin_without_proxy_count(
    site_factory: Callable[..., Site],
) -> None:
    site = site_factory(site_url=None)
    forged = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}
    assert_refused(post_login(site.client(), "sam", {"Origin": FOREIGN, **forged}))


# ---------------------------------------------------------------------- the other auth forms
def logout_form(client: Client) -> dict[str, Any]:
    page = client.get("/logout")
    assert page.status_code == 200, page.text
    return {"_sitenonce": hidden_field(page.text, "_sitenonce")}


@pytest.mark.parametrize("headers", [{"Origin": FOREIGN}, {"Origin": "null"},
                                     {"Referer": f"{FOREIGN}/"},
                                     {"Sec-Fetch-Site": "cross-site"}])  # fmt: skip
def test_a_cross_site_logout_is_refused_even_with_its_nonce(
    site: Site, headers: dict[str, str]
) -> None:
    client = site.logged_in("author")
    token = client.get_cookie(COOKIE_NAME, domain="localhost")
    assert token is not None
    response = client.post("/logout", data=logout_form(client), headers=headers)
    assert_refused(response)
    assert site.app.auth.sessions.find(token.value) is not None


def test_a_same_origin_logout_still_works(site: Site) -> None:
    client = site.logged_in("author")
    response = client.post(
        "/logout", data=logout_form(client), headers={"Origin": "http://localhost"}
    )
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/login")


def test_a_cross_site_application_authorization_is_refused_even_with_its_nonce(
    site: Site,
) -> None:
    client = site.logged_in("administrator")
    params = {"app_name": "Evil", "success_url": "https://app.example/callback"}
    screen = client.get(AUTHORIZE, query_string=params)
    nonce = hidden_field(screen.text, "_sitenonce")
    data = {**params, "_sitenonce": nonce, "approve": "1"}
    assert_refused(client.post(AUTHORIZE, data=data, headers={"Origin": FOREIGN}))
    assert site.app.auth.app_passwords.list(site.users["administrator"]) == []
    same = client.post(AUTHORIZE, data=data, headers={"Origin": "http://localhost"})
    assert same.status_code == 303, same.text
    assert len(site.app.auth.app_passwords.list(site.users["administrator"])) == 1


def test_safe_methods_are_not_checked(site: Site) -> None:
    """A link from another site to the login form or the account page still works."""
    client = site.logged_in("author")
    for path in ("/login", "/logout", "/site-admin/"):
        response = client.get(path, headers={"Origin": FOREIGN, "Sec-Fetch-Site": "cross-site"})
        assert response.status_code in (200, 303), path
