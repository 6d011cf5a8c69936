"""Who the REST server thinks the caller is: the cookie-and-nonce check and HTTP Basic.

As in WordPress: a logged-in cookie counts only with a valid ``site_rest`` nonce
(``_sitenonce`` parameter or ``X-Site-Nonce`` header). No nonce: anonymous, and the request goes
on. Invalid nonce: 403 ``rest_cookie_invalid_nonce`` "Cookie nonce is invalid". Valid nonce: the
response carries a refreshed nonce in ``X-Site-Nonce``. The check is skipped when an application
password authenticated the request. Application passwords (HTTP Basic) that fail answer 401
``invalid_username``, ``incorrect_password`` or ``application_passwords_disabled``; they are
available over TLS and from loopback by default (``application_passwords = auto|on|off``).

The probe route ``auth-test/v1/whoami`` answers the caller's id, the authentication method and
the application password's uuid.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.auth.sessions import COOKIE_NAME
from tests.auth.conftest import (
    PASSWORD,
    REMOTE,
    WHOAMI,
    Site,
    basic,
    rest_nonce,
    session_token,
)

HALF_DAY = 12 * 3600
INVALID_NONCE = {
    "code": "rest_cookie_invalid_nonce",
    "message": "Cookie nonce is invalid",
    "data": {"status": 403},
}
ANONYMOUS = {"id": 0, "method": None, "app_password": None}


def whoami(client: Client, **kwargs: Any) -> TestResponse:
    return client.get(WHOAMI, **kwargs)


def refreshed_nonce_is_valid(site: Site, response: TestResponse, client: Client) -> bool:
    nonce = response.headers.get("X-Site-Nonce")
    token = session_token(client)
    session = site.app.auth.sessions.find(token)
    assert session is not None
    return site.app.auth.nonces.verify(nonce, "site_rest", session.user.id, token) == 1


# ---------------------------------------------------------------------- the cookie check
def test_a_logged_in_cookie_without_a_nonce_is_treated_as_anonymous(site: Site) -> None:
    response = whoami(site.logged_in("administrator"))
    assert response.status_code == 200
    assert response.get_json()["id"] == 0
    assert "X-Site-Nonce" not in response.headers


def test_a_logged_in_cookie_with_a_nonce_header_is_the_user(site: Site) -> None:
    client = site.logged_in("editor")
    response = whoami(client, headers={"X-Site-Nonce": rest_nonce(client)})
    assert response.status_code == 200
    assert response.get_json() == {
        "id": site.users["editor"].id,
        "method": "cookie",
        "app_password": None,
    }


def test_the_nonce_header_name_is_case_insensitive(site: Site) -> None:
    client = site.logged_in("editor")
    response = whoami(client, headers={"x-site-nonce": rest_nonce(client)})
    assert response.get_json()["id"] == site.users["editor"].id


def test_a_nonce_in_the_query_string_is_accepted(site: Site) -> None:
    client = site.logged_in("editor")
    response = client.get(WHOAMI, query_string={"_sitenonce": rest_nonce(client)})
    assert response.status_code == 200
    assert response.get_json()["id"] == site.users["editor"].id


def test_a_nonce_in_a_posted_form_is_accepted(site: Site) -> None:
    client = site.logged_in("editor")
    response = client.post(WHOAMI, data={"_sitenonce": rest_nonce(client)})
    assert response.status_code == 200
    assert response.get_json()["id"] == site.users["editor"].id


def test_a_valid_nonce_gets_a_refreshed_nonce_in_the_response(site: Site) -> None:
    client = site.logged_in("editor")
    nonce = rest_nonce(client)
    site.clock.advance(HALF_DAY)  # the nonce is now from the previous tick
    response = whoami(client, headers={"X-Site-Nonce": nonce})
    assert response.status_code == 200
    assert response.headers["X-Site-Nonce"] != nonce
    assert refreshed_nonce_is_valid(site, response, client)


def test_a_nonce_two_ticks_old_is_refused(site: Site) -> None:
    client = site.logged_in("editor")
    nonce = rest_nonce(client)
    site.clock.advance(2 * HALF_DAY + 1)
    response = whoami(client, headers={"X-Site-Nonce": nonce})
    assert response.status_code == 403
    assert response.get_json() == INVALID_NONCE


NonceMaker = Callable[[Site, Client], str]


def _nonce_of_another_session(site: Site, client: Client) -> str:
    return rest_nonce(site.logged_in("editor"))


def _nonce_of_another_user(site: Site, client: Client) -> str:
    return rest_nonce(site.logged_in("administrator"))


def _nonce_for_another_action(site: Site, client: Client) -> str:
    user = site.users["editor"]
    return site.app.auth.nonces.create("log-out", user.id, session_token(client))


def _nonce_of_the_anonymous_visitor(site: Site, client: Client) -> str:
    return site.app.auth.nonces.create("site_rest", 0)


@pytest.mark.parametrize(
    "make_nonce",
    [
        lambda site, client: "0123456789",
        lambda site, client: "",
        lambda site, client: "not a nonce at all",
        _nonce_of_another_session,
        _nonce_of_another_user,
        _nonce_for_another_action,
        _nonce_of_the_anonymous_visitor,
    ],
    ids=[
        "made-up",
        "empty",
        "garbage",
        "another-session",
        "another-user",
        "another-action",
        "anonymous-nonce",
    ],
)
def test_an_invalid_nonce_is_refused_with_403(site: Site, make_nonce: NonceMaker) -> None:
    client = site.logged_in("editor")
    response = whoami(client, headers={"X-Site-Nonce": make_nonce(site, client)})
    assert response.status_code == 403
    assert response.get_json() == INVALID_NONCE
    assert "no-store" in response.headers["Cache-Control"]


def test_an_invalid_nonce_in_the_query_string_is_refused(site: Site) -> None:
    client = site.logged_in("editor")
    response = client.get(WHOAMI, query_string={"_sitenonce": "0123456789"})
    assert response.status_code == 403
    assert response.get_json() == INVALID_NONCE


def test_a_bogus_nonce_parameter_is_refused_even_with_a_valid_header(site: Site) -> None:
    client = site.logged_in("editor")
    response = client.get(
        WHOAMI,
        query_string={"_sitenonce": "0123456789"},
        headers={"X-Site-Nonce": rest_nonce(client)},
    )
    assert response.status_code == 403
    assert response.get_json() == INVALID_NONCE


def test_a_valid_cookie_with_a_bad_nonce_is_refused_as_a_logged_in_request(site: Site) -> None:
    # WordPress keeps the cookie's user current when the nonce fails: the 403 is built for a
    # logged-in user, so the anonymous "Vary: Origin" is not sent.
    client = site.logged_in("editor")
    response = whoami(client, headers={"X-Site-Nonce": "0123456789"})
    assert response.status_code == 403
    assert response.get_json() == INVALID_NONCE
    assert "Vary" not in response.headers


def test_a_bad_nonce_without_a_valid_cookie_is_refused_as_an_anonymous_request(
    site: Site,
) -> None:
    client = site.client()
    client.set_cookie(COOKIE_NAME, "forged")
    response = whoami(client, headers={"X-Site-Nonce": "0123456789"})
    assert response.status_code == 403
    assert response.headers.getlist("Vary") == ["Origin"]


def test_a_refused_cookie_user_never_reaches_the_handler(site: Site) -> None:
    # Even when a filter clears the refusal, the request goes on as the anonymous user.
    site.app.hooks.add_filter("rest_authentication_errors", lambda error, request: None, 20)
    client = site.logged_in("editor")
    response = whoami(client, headers={"X-Site-Nonce": "0123456789"})
    assert response.status_code == 200
    assert response.get_json() == ANONYMOUS


def test_a_request_without_a_cookie_and_with_a_bogus_nonce_is_refused(site: Site) -> None:
    response = whoami(site.client(), headers={"X-Site-Nonce": "0123456789"})
    assert response.status_code == 403
    assert response.get_json() == INVALID_NONCE


def test_an_expired_session_with_its_old_nonce_is_refused(site: Site) -> None:
    client = site.logged_in("editor")
    nonce = rest_nonce(client)
    site.clock.advance(2 * 24 * 3600 - 1)
    assert whoami(client, headers={"X-Site-Nonce": nonce}).status_code == 403


def test_a_forged_cookie_without_a_nonce_is_anonymous(site: Site) -> None:
    client = site.client()
    client.set_cookie(COOKIE_NAME, "forged")
    response = whoami(client)
    assert response.status_code == 200
    assert response.get_json() == ANONYMOUS


def test_a_valid_anonymous_nonce_without_a_cookie_passes_as_anonymous(site: Site) -> None:
    nonce = site.app.auth.nonces.create("site_rest", 0)
    response = whoami(site.client(), headers={"X-Site-Nonce": nonce})
    assert response.status_code == 200
    assert response.get_json()["id"] == 0
    assert "X-Site-Nonce" in response.headers


def test_a_logged_out_session_with_its_nonce_is_refused(site: Site) -> None:
    client = site.logged_in("editor")
    nonce = rest_nonce(client)
    site.app.auth.sessions.revoke(session_token(client))
    response = whoami(client, headers={"X-Site-Nonce": nonce})
    assert response.status_code == 403
    assert response.get_json() == INVALID_NONCE


def test_the_nonce_is_not_checked_when_an_application_password_authenticated(
    site: Site,
) -> None:
    password = site.app_password("editor")
    response = whoami(
        site.client(), headers={**basic("eddie", password), "X-Site-Nonce": "0123456789"}
    )
    assert response.status_code == 200
    assert response.get_json()["id"] == site.users["editor"].id
    assert response.get_json()["method"] == "application_password"
    assert "X-Site-Nonce" not in response.headers


# ---------------------------------------------------------------------- HTTP Basic
def test_an_application_password_authenticates_a_rest_request(site: Site) -> None:
    password, record = site.app.auth.app_passwords.create(site.users["author"], "cli")
    response = whoami(site.client(), headers=basic("aurora", password))
    assert response.status_code == 200
    assert response.get_json() == {
        "id": site.users["author"].id,
        "method": "application_password",
        "app_password": record.uuid,
    }


@pytest.mark.parametrize(
    "present",
    [
        lambda password: password,
        lambda password: password.replace(" ", ""),
        lambda password: password.replace(" ", "-"),
        lambda password: f"  {password}  ",
    ],
    ids=["grouped", "without-spaces", "dashes", "padded"],
)
def test_an_application_password_is_accepted_with_or_without_spaces(
    site: Site, present: Callable[[str], str]
) -> None:
    password = site.app_password("author")
    response = whoami(site.client(), headers=basic("aurora", present(password)))
    assert response.status_code == 200
    assert response.get_json()["id"] == site.users["author"].id


def test_an_application_password_is_accepted_in_unpadded_base64(site: Site) -> None:
    password = site.app_password("author")
    login_password = f"aurora:{password.replace(' ', '')}"  # 31 bytes: two "=" of padding
    credentials = base64.b64encode(login_password.encode()).decode()
    unpadded = credentials.rstrip("=")
    assert unpadded != credentials
    response = whoami(site.client(), headers={"Authorization": f"Basic {unpadded}"})
    assert response.status_code == 200
    assert response.get_json()["id"] == site.users["author"].id


def test_the_login_may_be_the_email_address(site: Site) -> None:
    password = site.app_password("author")
    response = whoami(site.client(), headers=basic("aurora@example.org", password))
    assert response.get_json()["id"] == site.users["author"].id


def app_password_failure(code: str) -> dict[str, Any]:
    messages = {
        # wp_authenticate_application_password's messages, word for word.
        "invalid_username": (
            "<strong>Error:</strong> Unknown username. Check again or try your email address."
        ),
        "invalid_email": (
            "<strong>Error:</strong> Unknown email address. Check again or try your username."
        ),
        "incorrect_password": "The provided password is an invalid application password.",
    }
    return {"code": code, "message": messages[code], "data": {"status": 401}}


@pytest.mark.parametrize(
    ("login", "present", "code"),
    [
        ("nobody", lambda site, password: password, "invalid_username"),
        ("nobody@example.org", lambda site, password: password, "invalid_email"),
        ("nobody@localhost", lambda site, password: password, "invalid_username"),
        ("aurora", lambda site, password: "abcd efgh ijkl mnop qrst uvwx", "incorrect_password"),
        ("aurora", lambda site, password: password.lower(), "incorrect_password"),
        ("aurora", lambda site, password: password[:-1], "incorrect_password"),
        ("aurora", lambda site, password: "", "incorrect_password"),
        ("aurora", lambda site, password: PASSWORD, "incorrect_password"),
        ("aurora", lambda site, password: site.app_password("editor"), "incorrect_password"),
    ],
    ids=[
        "unknown-login",
        "unknown-email",
        "unknown-login-with-an-at-sign-that-is-no-email",
        "made-up",
        "wrong-case",
        "truncated",
        "empty",
        "login-password",
        "another-users",
    ],
)
def test_bad_basic_credentials_are_answered_401(
    site: Site, login: str, present: Callable[[Site, str], str], code: str
) -> None:
    password = site.app_password("author")
    response = whoami(site.client(), headers=basic(login, present(site, password)))
    assert response.status_code == 401
    body = response.get_json()
    assert body["code"] == code
    assert body["data"]["status"] == 401
    if code == "incorrect_password":
        assert body == app_password_failure(code)
    else:
        assert body["message"].endswith(app_password_failure(code)["message"])


def test_a_deleted_application_password_no_longer_works(site: Site) -> None:
    password, record = site.app.auth.app_passwords.create(site.users["author"], "cli")
    site.app.auth.app_passwords.delete(site.users["author"], record.uuid)
    response = whoami(site.client(), headers=basic("aurora", password))
    assert response.status_code == 401
    assert response.get_json()["code"] == "incorrect_password"


def test_each_of_a_users_application_passwords_works(site: Site) -> None:
    first = site.app_password("author", name="one")
    second = site.app_password("author", name="two")
    for password in (first, second):
        assert whoami(site.client(), headers=basic("aurora", password)).get_json()["id"] != 0


@pytest.mark.parametrize(
    "authorization",
    ["Bearer abc.def", "Digest username=aurora", ""],
    ids=["bearer", "digest", "empty"],
)
def test_an_authorization_header_that_is_not_a_basic_attempt_is_anonymous(
    site: Site, authorization: str
) -> None:
    response = whoami(site.client(), headers={"Authorization": authorization})
    assert response.status_code == 200
    assert response.get_json() == ANONYMOUS


@pytest.mark.parametrize(
    "authorization",
    ["Basic YXVyb3Jh", "Basic", "Basic %%%", "Basic " + base64.b64encode(b"\xe9:x").decode()],
    ids=["login-only", "no-credentials", "bad-base64", "not-utf-8"],
)
def test_a_malformed_basic_header_is_refused_with_401_not_served_anonymously(
    site: Site, authorization: str
) -> None:
    response = whoami(site.client(), headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.get_json()["code"] == "invalid_authorization_header"


def test_using_an_application_password_records_when_and_from_where(site: Site) -> None:
    author = site.users["author"]
    password, record = site.app.auth.app_passwords.create(author, "cli")
    assert (record.last_used, record.last_ip) == (None, None)
    site.clock.advance(3600)
    whoami(site.client("::1"), headers=basic("aurora", password))
    used = site.app.auth.app_passwords.get(author, record.uuid)
    assert used is not None
    assert used.last_used == int(site.clock.now)
    assert used.last_ip == "::1"


# ---------------------------------------------------------------------- availability
@pytest.mark.parametrize(
    ("mode", "address", "base_url", "available"),
    [
        ("auto", "127.0.0.1", "http://localhost", True),
        ("auto", "::1", "http://localhost", True),
        ("auto", REMOTE, "https://example.org", True),
        ("auto", REMOTE, "http://example.org", False),
        ("auto", "203.0.113.7", "http://localhost", False),
        ("on", REMOTE, "http://example.org", True),
        ("off", "127.0.0.1", "https://example.org", False),
        ("off", REMOTE, "https://example.org", False),
    ],
)
def test_application_passwords_are_available_over_tls_and_loopback_by_default(
    site_factory: Callable[..., Site], mode: str, address: str, base_url: str, available: bool
) -> None:
    site = site_factory(application_passwords=mode)
    password = site.app_password("author")
    response = site.client(address).get(
        WHOAMI, base_url=base_url, headers=basic("aurora", password)
    )
    if available:
        assert response.status_code == 200
        assert response.get_json()["id"] == site.users["author"].id
    else:
        assert response.status_code == 401
        assert response.get_json()["code"] == "application_passwords_disabled"
        assert response.get_json()["data"]["status"] == 401


def test_unavailable_application_passwords_refuse_even_unknown_logins(site: Site) -> None:
    response = site.client(REMOTE).get(WHOAMI, headers=basic("nobody", "whatever"))
    assert response.status_code == 401
    assert response.get_json()["code"] == "application_passwords_disabled"
