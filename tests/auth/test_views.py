"""The HTML side: ``/login``, ``/logout``, ``/site-admin/rest-nonce`` and the account page.

``GET /login`` shows an accessible form; ``POST /login`` (``log``, ``pwd``, ``remember``,
``redirect_to``) starts a server-side session behind an ``HttpOnly``, ``SameSite=Lax`` cookie,
``Secure`` over TLS, lasting 2 days (14 with "remember me"), and redirects only within this
site. A failed login gets one generic message. ``POST /logout`` needs its nonce. The REST nonce
endpoint gives a fresh ``site_rest`` nonce to a logged-in session and 403 to anyone else.
HTTP Basic (application passwords) is for REST only: these pages ignore it.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from werkzeug.test import Client

from sitecache.auth.sessions import COOKIE_NAME
from tests.auth.conftest import (
    NONCE_PATH,
    PASSWORD,
    REMOTE,
    Site,
    basic,
    cookie_attributes,
    hidden_field,
    log_in,
    rest_nonce,
    session_token,
    set_cookie_headers,
)

DAY = 24 * 3600
GENERIC_ERROR = "The username or password you entered is incorrect."


def session_cookie(response: Any) -> str | None:
    for header in set_cookie_headers(response):
        if header.startswith(f"{COOKIE_NAME}="):
            return header
    return None


def session_rows(site: Site) -> list[dict[str, Any]]:
    rows = site.app.auth.store.connection().execute("SELECT * FROM sessions").fetchall()
    return [dict(row) for row in rows]


# ---------------------------------------------------------------------- the login form
def test_the_login_form_is_an_accessible_html_page(site: Site) -> None:
    response = site.client().get("/login")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    html = response.text
    assert re.search(r'<html lang="[a-z]', html)
    assert re.search(r'<form method="post" action="/login"', html)
    for field, input_type in (("log", "text"), ("pwd", "password"), ("remember", "checkbox")):
        assert f'<label for="{field}">' in html, field
        assert re.search(rf'<input type="{input_type}" name="{field}" id="{field}"', html), field
    assert 'autocomplete="username"' in html
    assert 'autocomplete="current-password"' in html
    assert '<button type="submit">' in html
    assert session_cookie(response) is None


def test_the_login_form_is_private_and_cannot_be_framed(site: Site) -> None:
    response = site.client().get("/login")
    assert "no-store" in response.headers["Cache-Control"]
    assert response.headers["X-Frame-Options"] == "DENY"


def test_a_logged_in_visitor_of_the_login_form_is_sent_on(site: Site) -> None:
    client = site.logged_in("subscriber")
    response = client.get("/login?redirect_to=/site-admin/")
    assert response.status_code in (302, 303)
    assert response.headers["Location"] == "/site-admin/"


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_the_login_page_refuses_other_methods(site: Site, method: str) -> None:
    response = site.client().open("/login", method=method)
    assert response.status_code == 405


# ---------------------------------------------------------------------- logging in
def test_a_good_login_sets_the_session_cookie_and_redirects(site: Site) -> None:
    client = site.client()
    response = log_in(client, "ada")
    assert response.status_code in (302, 303)
    assert response.headers["Location"] == "/site-admin/"
    found = site.app.auth.sessions.find(session_token(client))
    assert found is not None
    assert found.user == site.users["administrator"]


def test_a_user_can_log_in_with_their_email_address(site: Site) -> None:
    client = site.client()
    assert log_in(client, "ada@example.org").status_code == 303
    found = site.app.auth.sessions.find(session_token(client))
    assert found is not None
    assert found.user.login == "ada"


def test_the_session_cookie_is_httponly_samesite_lax_and_not_secure_over_plain_http(
    site: Site,
) -> None:
    header = session_cookie(log_in(site.client(), "ada"))
    assert header is not None
    attributes = cookie_attributes(header)
    assert "httponly" in attributes
    assert attributes["samesite"].lower() == "lax"
    assert attributes["path"] == "/"
    assert "secure" not in attributes


def test_the_session_cookie_is_secure_over_tls(site: Site) -> None:
    header = session_cookie(log_in(site.client(), "ada", base_url="https://example.org"))
    assert header is not None
    attributes = cookie_attributes(header)
    assert "secure" in attributes
    assert "httponly" in attributes
    assert attributes["samesite"].lower() == "lax"


def test_without_remember_me_the_session_lasts_two_days_in_a_browser_session_cookie(
    site: Site,
) -> None:
    header = session_cookie(log_in(site.client(), "ada"))
    assert header is not None
    attributes = cookie_attributes(header)
    assert "max-age" not in attributes
    assert "expires" not in attributes
    (row,) = session_rows(site)
    assert row["expires"] - row["created"] == 2 * DAY
    assert row["expires"] == int(site.clock.now) + 2 * DAY


@pytest.mark.parametrize("remember", ["forever", "1", "on", "true"])
def test_remember_me_keeps_the_session_and_cookie_for_fourteen_days(
    site: Site, remember: str
) -> None:
    header = session_cookie(log_in(site.client(), "ada", remember=remember))
    assert header is not None
    assert cookie_attributes(header)["max-age"] == str(14 * DAY)
    (row,) = session_rows(site)
    assert row["expires"] == int(site.clock.now) + 14 * DAY


def test_the_cookie_holds_a_token_the_database_only_has_a_hash_of(site: Site) -> None:
    client = site.client()
    log_in(client, "ada")
    token = session_token(client)
    (row,) = session_rows(site)
    assert all(token not in str(value) for value in row.values())


def test_an_expired_session_no_longer_logs_anyone_in(site: Site) -> None:
    client = site.logged_in("administrator")
    assert client.get(NONCE_PATH).status_code == 200
    site.clock.advance(2 * DAY)
    assert client.get(NONCE_PATH).status_code == 403


def test_logging_in_again_replaces_the_previous_session(site: Site) -> None:
    client = site.logged_in("administrator")
    old = session_token(client)
    log_in(client, "sam")
    assert site.app.auth.sessions.find(old) is None
    new = site.app.auth.sessions.find(session_token(client))
    assert new is not None
    assert new.user.login == "sam"


@pytest.mark.parametrize(
    ("redirect_to", "location"),
    [
        ("/site-admin/", "/site-admin/"),
        ("/some/page?x=1", "/some/page?x=1"),
        ("http://example.org/some/page", "http://example.org/some/page"),
        ("https://example.org/some/page", "https://example.org/some/page"),
        ("http://EXAMPLE.org/page", "http://EXAMPLE.org/page"),
        ("", "/site-admin/"),
        ("http://evil.example/", "/site-admin/"),
        ("https://evil.example/phish", "/site-admin/"),
        ("//evil.example/", "/site-admin/"),
        ("///evil.example/", "/site-admin/"),
        ("/\\evil.example/", "/site-admin/"),
        ("https://example.org.evil.example/", "/site-admin/"),
        ("http://example.org@evil.example/", "/site-admin/"),
        ("javascript:alert(1)", "/site-admin/"),
        ("data:text/html,hi", "/site-admin/"),
        ("ftp://example.org/", "/site-admin/"),
        ("relative/page", "/site-admin/"),
        ("/ok\r\nSet-Cookie: x=1", "/site-admin/"),
    ],
)
def test_redirect_to_is_limited_to_this_site(site: Site, redirect_to: str, location: str) -> None:
    response = log_in(site.client(), "ada", redirect_to=redirect_to)
    assert response.status_code in (302, 303)
    # (werkzeug may normalise the case of a host name in Location)
    assert response.headers["Location"].lower() == location.lower()


def test_an_unsafe_redirect_to_is_not_carried_into_the_form(site: Site) -> None:
    html = site.client().get("/login?redirect_to=https://evil.example/").text
    assert hidden_field(html, "redirect_to") == "/site-admin/"
    html = site.client().get("/login?redirect_to=/site-admin/rest-nonce").text
    assert hidden_field(html, "redirect_to") == "/site-admin/rest-nonce"


def test_a_page_that_needs_a_login_sends_there_and_back(site: Site) -> None:
    client = site.client()
    response = client.get("/site-admin/")
    assert response.status_code in (302, 303)
    target = urlsplit(response.headers["Location"])
    assert target.path == "/login"
    (back,) = parse_qs(target.query)["redirect_to"]
    assert back == "/site-admin/"
    assert log_in(client, "ada", redirect_to=back).headers["Location"] == "/site-admin/"


# ---------------------------------------------------------------------- failed logins
@pytest.mark.parametrize(
    ("login", "password"),
    [("ada", "wrong password"), ("nobody", PASSWORD), ("", PASSWORD), ("ada", "")],
)
def test_a_failed_login_gets_the_generic_message_and_no_session(
    site: Site, login: str, password: str
) -> None:
    response = log_in(site.client(), login, password)
    assert response.status_code == 200
    assert GENERIC_ERROR in response.text
    assert 'role="alert"' in response.text
    assert session_cookie(response) is None
    assert session_rows(site) == []


def test_unknown_login_and_wrong_password_are_answered_alike(site: Site) -> None:
    unknown = log_in(site.client(), "nobody", "wrong password").text.replace("nobody", "X")
    wrong = log_in(site.client(), "ada", "wrong password").text.replace("ada", "X")
    assert unknown == wrong
    for revealing in ("Unknown username", "not registered", "Invalid username", "is incorrect for"):
        assert revealing not in unknown


def test_a_failed_login_page_never_echoes_the_password(site: Site) -> None:
    response = log_in(site.client(), "ada", "hunter2-secret-guess")
    assert "hunter2-secret-guess" not in response.text


def test_a_failed_login_keeps_the_login_name_in_the_form(site: Site) -> None:
    response = log_in(site.client(), "ada", "wrong password")
    assert re.search(r'name="log" id="log" value="ada"', response.text)


def test_markup_in_the_login_name_is_escaped_when_echoed(site: Site) -> None:
    response = log_in(site.client(), '"><script>alert(1)</script>', "wrong password")
    assert "<script>alert(1)</script>" not in response.text
    assert "&lt;script&gt;" in response.text


# ---------------------------------------------------------------------- logging out
def logout_nonce(client: Client) -> str:
    page = client.get("/logout")
    assert page.status_code == 200
    return hidden_field(page.text, "_sitenonce")


def test_getting_the_logout_page_asks_for_confirmation_and_keeps_the_session(
    site: Site,
) -> None:
    client = site.logged_in("administrator")
    page = client.get("/logout")
    assert page.status_code == 200
    assert '<form method="post" action="/logout"' in page.text
    assert site.app.auth.sessions.find(session_token(client)) is not None


def test_logging_out_with_the_nonce_ends_the_session_and_clears_the_cookie(site: Site) -> None:
    client = site.logged_in("administrator")
    token = session_token(client)
    response = client.post("/logout", data={"_sitenonce": logout_nonce(client)})
    assert response.status_code in (302, 303)
    assert urlsplit(response.headers["Location"]).path == "/login"
    assert site.app.auth.sessions.find(token) is None
    header = session_cookie(response)
    assert header is not None
    attributes = cookie_attributes(header)
    assert attributes.get("max-age") == "0" or "1970" in attributes.get("expires", "")
    assert client.get(NONCE_PATH).status_code == 403


def test_a_revoked_cookie_sent_again_after_logout_is_worthless(site: Site) -> None:
    client = site.logged_in("administrator")
    token = session_token(client)
    client.post("/logout", data={"_sitenonce": logout_nonce(client)})
    replay = site.client()
    replay.set_cookie(COOKIE_NAME, token)
    assert replay.get(NONCE_PATH).status_code == 403


@pytest.mark.parametrize("nonce", [None, "", "0123456789", "rest"])
def test_logging_out_without_a_valid_nonce_is_refused(site: Site, nonce: str | None) -> None:
    client = site.logged_in("administrator")
    if nonce == "rest":
        nonce = rest_nonce(client)  # a nonce, but for another action
    data = {} if nonce is None else {"_sitenonce": nonce}
    response = client.post("/logout", data=data)
    assert response.status_code == 403
    assert site.app.auth.sessions.find(session_token(client)) is not None


def test_a_logout_nonce_of_another_session_is_refused(site: Site) -> None:
    other = site.logged_in("administrator")
    stolen = logout_nonce(other)
    client = site.logged_in("administrator")
    response = client.post("/logout", data={"_sitenonce": stolen})
    assert response.status_code == 403
    assert site.app.auth.sessions.find(session_token(client)) is not None


def test_logging_out_when_not_logged_in_leads_to_the_login_form(site: Site) -> None:
    response = site.client().post("/logout")
    assert response.status_code in (302, 303)
    assert urlsplit(response.headers["Location"]).path == "/login"


def test_the_login_form_says_you_are_logged_out(site: Site) -> None:
    assert "You are now logged out." in site.client().get("/login?loggedout=true").text


# ---------------------------------------------------------------------- the REST nonce
def test_a_logged_in_session_gets_a_fresh_rest_nonce(site: Site) -> None:
    client = site.logged_in("subscriber")
    response = client.get(NONCE_PATH)
    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    assert "no-store" in response.headers["Cache-Control"]
    nonce = response.text.strip()
    user = site.users["subscriber"]
    assert site.app.auth.nonces.verify(nonce, "site_rest", user.id, session_token(client)) == 1


def test_the_rest_nonce_is_fresh_in_the_current_tick(site: Site) -> None:
    client = site.logged_in("subscriber")
    first = rest_nonce(client)
    site.clock.advance(12 * 3600)
    second = rest_nonce(client)
    assert first != second
    user = site.users["subscriber"]
    assert site.app.auth.nonces.verify(second, "site_rest", user.id, session_token(client)) == 1


def test_an_anonymous_visitor_gets_403_from_the_rest_nonce_endpoint(site: Site) -> None:
    response = site.client().get(NONCE_PATH)
    assert response.status_code == 403
    assert not re.fullmatch(r"[0-9a-f]{10}", response.text.strip())


def test_a_forged_cookie_gets_403_from_the_rest_nonce_endpoint(site: Site) -> None:
    client = site.client()
    client.set_cookie(COOKIE_NAME, "forged-token")
    assert client.get(NONCE_PATH).status_code == 403


def test_basic_credentials_do_not_open_the_rest_nonce_endpoint(site: Site) -> None:
    password = site.app_password("administrator")
    assert site.client().get(NONCE_PATH, headers=basic("ada", password)).status_code == 403
    assert site.client().get(NONCE_PATH, headers=basic("ada", PASSWORD)).status_code == 403


def test_the_rest_nonce_endpoint_does_not_accept_posts(site: Site) -> None:
    assert site.logged_in("subscriber").post(NONCE_PATH).status_code == 405


# ---------------------------------------------------------------------- the account page
def test_the_account_page_lists_application_passwords_without_secrets(site: Site) -> None:
    password = site.app_password("subscriber", name="Mobile app")
    client = site.logged_in("subscriber", address=REMOTE)
    response = client.get("/site-admin/")
    assert response.status_code == 200
    assert "sam" in response.text
    assert "Mobile app" in response.text
    assert password not in response.text
    assert password.replace(" ", "") not in response.text
    assert session_token(client) not in response.text


def test_basic_credentials_do_not_open_the_account_page(site: Site) -> None:
    password = site.app_password("administrator")
    response = site.client().get("/site-admin/", headers=basic("ada", password))
    assert response.status_code in (302, 303)
    assert urlsplit(response.headers["Location"]).path == "/login"


# ---------------------------------------------------------------------- under a mount point
MOUNTED = "http://localhost/cache-admin"
"""The application mounted under ``/cache-admin`` (``SCRIPT_NAME``, as werkzeug's
``DispatcherMiddleware`` sets it)."""


def test_under_a_mount_the_login_form_posts_there_and_returns_there(site: Site) -> None:
    client = site.client()
    html = client.get("/login", base_url=MOUNTED).text
    assert re.search(r'<form method="post" action="/cache-admin/login"', html)
    assert hidden_field(html, "redirect_to") == "/cache-admin/site-admin/"
    response = log_in(
        client, "ada", base_url=MOUNTED, redirect_to=hidden_field(html, "redirect_to")
    )
    assert response.headers["Location"] == "/cache-admin/site-admin/"
    # Logged in, the form sends on to the mounted account page.
    assert client.get("/login", base_url=MOUNTED).headers["Location"] == "/cache-admin/site-admin/"


@pytest.mark.parametrize(
    ("redirect_to", "location"),
    [
        ("", "/cache-admin/site-admin/"),
        ("https://evil.example/phish", "/cache-admin/site-admin/"),
        ("//evil.example/", "/cache-admin/site-admin/"),
        ("/cache-admin/site-json/", "/cache-admin/site-json/"),
        (
            "http://example.org/cache-admin/site-admin/",
            "http://example.org/cache-admin/site-admin/",
        ),
        ("http://localhost/cache-admin/site-admin/", "/cache-admin/site-admin/"),
    ],
)
def test_under_a_mount_redirect_to_is_still_limited_to_this_site(
    site: Site, redirect_to: str, location: str
) -> None:
    response = log_in(site.client(), "ada", base_url=MOUNTED, redirect_to=redirect_to)
    assert response.headers["Location"] == location


def test_under_a_mount_a_page_that_needs_a_login_sends_there_and_back(site: Site) -> None:
    client = site.client()
    target = urlsplit(client.get("/site-admin/?x=1", base_url=MOUNTED).headers["Location"])
    assert target.path == "/cache-admin/login"
    (back,) = parse_qs(target.query)["redirect_to"]
    assert back == "/cache-admin/site-admin/?x=1"
    response = log_in(client, "ada", base_url=MOUNTED, redirect_to=back)
    assert response.headers["Location"] == "/cache-admin/site-admin/?x=1"


def test_under_a_mount_the_account_page_links_and_forms_stay_there(site: Site) -> None:
    client = site.logged_in("administrator")
    html = client.get("/site-admin/", base_url=MOUNTED).text
    actions = re.findall(r'<form method="post" action="([^"]*)"', html)
    assert actions
    assert set(actions) == {"/cache-admin/site-admin/", "/cache-admin/logout"}
    links = re.findall(r'<a href="(/[^"]*)"', html)
    assert set(links) == {"/cache-admin/site-admin/cache", "/cache-admin/site-admin/rest-nonce"}
    assert "<code>http://example.org/cache-admin/site-json/</code>" in html
    created = client.post(
        "/site-admin/",
        data={"_sitenonce": hidden_field(html, "_sitenonce"), "action": "create_app_password",
              "name": "copy"},
        base_url=MOUNTED,
    )  # fmt: skip
    assert created.status_code == 303  # POST-redirect-GET, back under the mount
    location = created.headers["Location"]
    assert location.startswith("/cache-admin/site-admin/?done=")
    shown = client.get(location.removeprefix("/cache-admin"), base_url=MOUNTED).text
    assert '<script src="/cache-admin/site-admin/copy.js" defer>' in shown


def test_under_a_mount_logging_out_returns_to_the_mounted_login_form(site: Site) -> None:
    client = site.logged_in("subscriber")
    html = client.get("/logout", base_url=MOUNTED).text
    assert re.search(r'<form method="post" action="/cache-admin/logout"', html)
    response = client.post(
        "/logout", data={"_sitenonce": hidden_field(html, "_sitenonce")}, base_url=MOUNTED
    )
    assert response.headers["Location"] == "/cache-admin/login?loggedout=true"
    assert client.get("/logout", base_url=MOUNTED).headers["Location"] == "/cache-admin/login"
