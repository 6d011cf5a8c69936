"""The application-password authorization screen and its advertisement in the API index.

``/site-admin/authorize-application`` takes ``app_name``, ``app_id``, ``success_url`` and
``reject_url``. A logged-out visitor is sent to the login form and back; a logged-in user sees
a form and approves or rejects with a nonce-protected POST. Approval creates an application
password and redirects to ``success_url`` with ``site_url``, ``user_login`` and ``password``
(or shows the password once); rejection redirects to ``reject_url`` with ``success=false``.
``javascript:``, ``data:`` and plain-http URLs of non-loopback hosts are refused. The API index
lists the screen under ``authentication.application-passwords.endpoints.authorization`` when
application passwords are available.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from werkzeug.test import Client, TestResponse

from tests.auth.conftest import (
    AUTHORIZE,
    REMOTE,
    WHOAMI,
    Site,
    basic,
    hidden_field,
    log_in,
    rest_nonce,
)

APP_ID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
SUCCESS = "https://app.example/callback"
REJECT = "https://app.example/rejected"
PARAMS = {
    "app_name": "Desktop Publisher",
    "app_id": APP_ID,
    "success_url": SUCCESS,
    "reject_url": REJECT,
}


def screen(client: Client, params: dict[str, str] | None = None, **kwargs: Any) -> TestResponse:
    return client.get(f"{AUTHORIZE}?{urlencode(PARAMS if params is None else params)}", **kwargs)


def approve(client: Client, params: dict[str, str] | None = None, **extra: str) -> TestResponse:
    params = PARAMS if params is None else params
    nonce = hidden_field(screen(client, params).text, "_sitenonce")
    return client.post(AUTHORIZE, data={**params, "_sitenonce": nonce, "approve": "1", **extra})


def passwords_of(site: Site, role: str) -> list[Any]:
    return site.app.auth.app_passwords.list(site.users[role])


def query_of(location: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(location).query, keep_blank_values=True)


# ---------------------------------------------------------------------- the screen
def test_a_logged_out_visitor_is_sent_to_log_in_and_back(site: Site) -> None:
    client = site.client()
    response = screen(client)
    assert response.status_code in (302, 303)
    location = urlsplit(response.headers["Location"])
    assert location.path == "/login"
    (back,) = parse_qs(location.query)["redirect_to"]
    assert urlsplit(back).path == AUTHORIZE
    assert parse_qs(urlsplit(back).query)["app_name"] == [PARAMS["app_name"]]
    assert log_in(client, "sam", redirect_to=back).headers["Location"] == back
    assert client.get(back).status_code == 200


def test_a_logged_in_user_sees_the_request_and_a_nonce_protected_form(site: Site) -> None:
    response = screen(site.logged_in("subscriber"))
    assert response.status_code == 200
    html = response.text
    assert "Desktop Publisher" in html
    assert "sam" in html
    assert '<form method="post"' in html
    assert hidden_field(html, "_sitenonce")
    assert hidden_field(html, "success_url") == SUCCESS
    assert '<label for="new_application_password_name">' in html
    assert 'name="approve"' in html
    assert 'name="reject"' in html
    assert "no-store" in response.headers["Cache-Control"]
    assert passwords_of(site, "subscriber") == []


# ---------------------------------------------------------------------- approving
def test_approving_redirects_to_the_success_url_with_the_new_credentials(site: Site) -> None:
    client = site.logged_in("subscriber")
    response = approve(client)
    assert response.status_code in (302, 303)
    location = response.headers["Location"]
    assert location.startswith(SUCCESS + "?")
    query = query_of(location)
    assert query["site_url"] == ["http://example.org"]
    assert query["user_login"] == ["sam"]
    (password,) = query["password"]
    (record,) = passwords_of(site, "subscriber")
    assert (record.name, record.app_id) == ("Desktop Publisher", APP_ID)
    used = site.client().get(WHOAMI, headers=basic("sam", password))
    assert used.get_json()["id"] == site.users["subscriber"].id
    assert used.get_json()["app_password"] == record.uuid


def test_the_success_url_keeps_its_own_query(site: Site) -> None:
    params = {**PARAMS, "success_url": SUCCESS + "?state=xyz"}
    location = approve(site.logged_in("subscriber"), params).headers["Location"]
    assert query_of(location)["state"] == ["xyz"]
    assert "password" in query_of(location)


def test_the_user_may_rename_the_application_when_approving(site: Site) -> None:
    approve(site.logged_in("subscriber"), new_application_password_name="My laptop")
    assert [record.name for record in passwords_of(site, "subscriber")] == ["My laptop"]


def test_without_a_success_url_the_password_is_shown_once(site: Site) -> None:
    params = {"app_name": "Script"}
    client = site.logged_in("subscriber")
    response = approve(client, params)
    assert response.status_code == 200
    assert "no-store" in response.headers["Cache-Control"]
    (record,) = passwords_of(site, "subscriber")
    assert record.name == "Script"
    words = response.text.split("<kbd>", 1)[1].split("</kbd>", 1)[0]
    assert site.client().get(WHOAMI, headers=basic("sam", words)).get_json()["id"] != 0
    assert words not in client.get("/site-admin/").text


@pytest.mark.parametrize(
    "success_url",
    [
        "http://localhost:8080/callback",
        "http://127.0.0.1/callback",
        "http://[::1]:9000/callback",
        "https://app.example/callback",
        "com.example.app://callback",
    ],
)
def test_tls_loopback_and_app_scheme_urls_are_accepted(site: Site, success_url: str) -> None:
    params = {**PARAMS, "success_url": success_url}
    client = site.logged_in("subscriber")
    assert screen(client, params).status_code == 200
    response = approve(client, params)
    assert response.status_code in (302, 303)
    assert response.headers["Location"].startswith(success_url)


def test_a_get_request_never_approves(site: Site) -> None:
    client = site.logged_in("subscriber")
    nonce = hidden_field(screen(client).text, "_sitenonce")
    response = screen(client, {**PARAMS, "_sitenonce": nonce, "approve": "1"})
    assert response.status_code == 200
    assert "Location" not in response.headers
    assert passwords_of(site, "subscriber") == []


def test_markup_in_the_request_is_escaped_on_the_screen(site: Site) -> None:
    params = {**PARAMS, "app_name": '<script>alert("x")</script>"><img src=x onerror=alert(1)>'}
    html = screen(site.logged_in("subscriber"), params).text
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;" in html


# ---------------------------------------------------------------------- rejecting
def test_rejecting_redirects_to_the_reject_url_with_success_false(site: Site) -> None:
    client = site.logged_in("subscriber")
    nonce = hidden_field(screen(client).text, "_sitenonce")
    response = client.post(AUTHORIZE, data={**PARAMS, "_sitenonce": nonce, "reject": "1"})
    assert response.status_code in (302, 303)
    location = response.headers["Location"]
    assert location.startswith(REJECT + "?")
    assert query_of(location)["success"] == ["false"]
    assert "password" not in query_of(location)
    assert passwords_of(site, "subscriber") == []


# ---------------------------------------------------------------------- refusals
NonceMaker = Callable[[Site, Client], str | None]


@pytest.mark.parametrize(
    "make_nonce",
    [
        lambda site, client: None,
        lambda site, client: "",
        lambda site, client: "0123456789",
        lambda site, client: rest_nonce(client),
        lambda site, client: hidden_field(screen(site.logged_in("subscriber")).text, "_sitenonce"),
    ],
    ids=["missing", "empty", "made-up", "another-action", "another-session"],
)
def test_approving_without_a_valid_nonce_is_refused(site: Site, make_nonce: NonceMaker) -> None:
    client = site.logged_in("subscriber")
    nonce = make_nonce(site, client)
    data = {**PARAMS, "approve": "1"}
    if nonce is not None:
        data["_sitenonce"] = nonce
    response = client.post(AUTHORIZE, data=data)
    assert response.status_code == 403
    assert "Location" not in response.headers
    assert passwords_of(site, "subscriber") == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("success_url", "javascript:alert(document.cookie)"),
        ("success_url", "JavaScript:alert(1)"),
        ("success_url", "data:text/html,<script>alert(1)</script>"),
        ("success_url", "http://app.example/callback"),
        ("success_url", "http://192.0.2.10/callback"),
        ("success_url", "http://127.0.0.1.nip.io/callback"),
        ("success_url", "http://127.attacker.example/callback"),
        ("success_url", "http://localhost.attacker.example/callback"),
        ("reject_url", "javascript:alert(1)"),
        ("reject_url", "data:text/html,hi"),
        ("reject_url", "http://app.example/rejected"),
        ("app_id", "not-a-uuid"),
    ],
)
def test_dangerous_parameters_are_refused(site: Site, field: str, value: str) -> None:
    params = {**PARAMS, field: value}
    client = site.logged_in("subscriber")
    shown = screen(client, params)
    assert shown.status_code == 400
    assert 'name="_sitenonce"' not in shown.text
    good_nonce = hidden_field(screen(client).text, "_sitenonce")
    posted = client.post(AUTHORIZE, data={**params, "_sitenonce": good_nonce, "approve": "1"})
    assert posted.status_code == 400
    assert "Location" not in posted.headers
    assert passwords_of(site, "subscriber") == []


def test_the_screen_is_unavailable_where_application_passwords_are(site: Site) -> None:
    client = site.logged_in("subscriber", address=REMOTE)
    response = screen(client)
    assert response.status_code == 501
    assert 'name="_sitenonce"' not in response.text


def test_the_screen_is_available_to_a_remote_client_over_tls(site: Site) -> None:
    client = site.client(REMOTE)
    log_in(client, "sam", base_url="https://example.org")
    response = screen(client, base_url="https://example.org")
    assert response.status_code == 200


# ---------------------------------------------------------------------- the API index
def authorization_entry(response: TestResponse) -> Any:
    assert response.status_code == 200
    return response.get_json()["authentication"].get("application-passwords")


@pytest.mark.parametrize(
    ("mode", "address", "base_url", "advertised"),
    [
        ("auto", "127.0.0.1", "http://localhost", "http://example.org" + AUTHORIZE),
        ("auto", REMOTE, "https://example.org", "https://example.org" + AUTHORIZE),
        ("auto", REMOTE, "http://example.org", None),
        ("on", REMOTE, "http://example.org", "http://example.org" + AUTHORIZE),
        ("off", "127.0.0.1", "https://example.org", None),
    ],
)
def test_the_api_index_advertises_the_screen_when_application_passwords_are_available(
    site_factory: Callable[..., Site],
    mode: str,
    address: str,
    base_url: str,
    advertised: str | None,
) -> None:
    site = site_factory(application_passwords=mode)
    entry = authorization_entry(site.client(address).get("/site-json/", base_url=base_url))
    if advertised is None:
        assert entry is None
    else:
        assert entry == {"endpoints": {"authorization": advertised}}
