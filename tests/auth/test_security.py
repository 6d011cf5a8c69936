"""Secrets stay secret: never logged, never echoed, always compared in constant time.

Over a whole flow (logging in, fetching a REST nonce, creating and using application passwords,
failed attempts, authorizing an application, logging out) the log holds no password, session
token, cookie value, ``Authorization`` value or secret key, and no response other than the
creation of an application password (and the login's own ``Set-Cookie``) carries a secret.
Password, application-password and nonce checks go through ``hmac.compare_digest``.
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.auth import PasswordHasher
from sitecache.auth.sessions import COOKIE_NAME
from tests.auth.conftest import (
    APP_PASSWORDS,
    AUTHORIZE,
    NONCE_PATH,
    PASSWORD,
    WHOAMI,
    Site,
    basic,
    hidden_field,
    log_in,
    rest_nonce,
    session_token,
)
from tests.conftest import both_engines

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


WRONG_PASSWORD = "not-the-password-42"
ME = APP_PASSWORDS.format(user="me")


@dataclass
class Flow:
    """Everything a full authentication flow produced."""

    secrets: set[str] = field(default_factory=set)
    responses: list[tuple[str, TestResponse]] = field(default_factory=list)
    one_time: list[TestResponse] = field(default_factory=list)

    def keep(self, label: str, response: TestResponse) -> TestResponse:
        self.responses.append((label, response))
        return response

    def add_password(self, password: str) -> None:
        self.secrets |= {password, password.replace(" ", "")}


def run_flow(site: Site) -> Flow:
    flow = Flow()
    flow.secrets |= {PASSWORD, WRONG_PASSWORD, site.app.auth.key.hex()}
    client = site.client()

    flow.keep("failed login", log_in(client, "ada", WRONG_PASSWORD))
    login = log_in(client, "ada", remember="forever")
    token = session_token(client)
    flow.secrets.add(token)
    flow.keep("login page", client.get("/login"))
    flow.keep("account", client.get("/site-admin/"))
    nonce = rest_nonce(client)
    headers = {"X-Site-Nonce": nonce}

    created = client.post(ME, json={"name": "Flow"}, headers=headers)
    assert created.status_code == 201
    flow.one_time.append(created)
    app_password = created.get_json()["password"]
    flow.add_password(app_password)
    authorization = basic("ada", app_password)
    wrong_authorization = basic("ada", "abcd efgh ijkl mnop qrst uvwx")
    login_authorization = basic("ada", PASSWORD)
    for value in (authorization, wrong_authorization, login_authorization):
        flow.secrets |= {value["Authorization"], value["Authorization"].split(" ", 1)[1]}

    api = site.client()
    flow.keep("whoami", api.get(WHOAMI, headers=authorization))
    flow.keep("list", api.get(ME, headers=authorization))
    flow.keep("list edit", api.get(ME + "?context=edit", headers=authorization))
    flow.keep("introspect", api.get(ME + "/introspect", headers=authorization))
    flow.keep("wrong app password", api.get(WHOAMI, headers=wrong_authorization))
    flow.keep("login password as basic", api.get(WHOAMI, headers=login_authorization))
    flow.keep("index", api.get("/site-json/", headers=authorization))
    uuid = created.get_json()["uuid"]
    flow.keep("rename", api.put(f"{ME}/{uuid}", json={"name": "Renamed"}, headers=authorization))
    flow.keep("cookie list", client.get(ME, headers=headers))
    flow.keep("bad nonce", client.get(WHOAMI, headers={"X-Site-Nonce": "0123456789"}))
    flow.keep("basic on a page", site.client().get("/site-admin/", headers=authorization))

    params = {"app_name": "Authorized", "success_url": "https://app.example/cb"}
    page = flow.keep("authorize screen", client.get(f"{AUTHORIZE}?{urlencode(params)}"))
    approved = client.post(
        AUTHORIZE,
        data={**params, "_sitenonce": hidden_field(page.text, "_sitenonce"), "approve": "1"},
    )
    flow.one_time.append(approved)
    (granted,) = parse_qs(urlsplit(approved.headers["Location"]).query)["password"]
    flow.add_password(granted)
    flow.keep("account after", client.get("/site-admin/"))
    flow.keep("delete", api.delete(f"{ME}/{uuid}", headers=authorization))

    logout_page = flow.keep("logout page", client.get("/logout"))
    flow.keep(
        "logout",
        client.post("/logout", data={"_sitenonce": hidden_field(logout_page.text, "_sitenonce")}),
    )
    flow.keep("nonce after logout", client.get(NONCE_PATH))
    assert login.status_code == 303
    return flow


def everything_logged(caplog: pytest.LogCaptureFixture) -> str:
    parts = [caplog.text]
    for record in caplog.records:
        parts += [record.getMessage(), repr(record.args), str(record.exc_text or "")]
        parts.append(repr({key: value for key, value in vars(record).items() if key != "msg"}))
    return "\n".join(parts)


def response_text(response: TestResponse) -> str:
    headers = [(name, value) for name, value in response.headers.items()]
    return response.get_data(as_text=True) + "\n" + repr(headers)


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    for name in ("sitecache", "sitecache.rest", "sitecache.auth", "werkzeug"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def test_no_secret_is_ever_logged(site: Site, debug_logs: pytest.LogCaptureFixture) -> None:
    flow = run_flow(site)
    logged = everything_logged(debug_logs)
    for secret in flow.secrets:
        assert secret not in logged


def test_no_response_but_the_one_time_password_carries_a_secret(site: Site) -> None:
    flow = run_flow(site)
    for label, response in flow.responses:
        text = response_text(response)
        for secret in flow.secrets:
            assert secret not in text, label


def test_the_session_token_travels_only_in_the_login_set_cookie(site: Site) -> None:
    client = site.client()
    login = log_in(client, "ada")
    token = session_token(client)
    cookies = login.headers.getlist("Set-Cookie")
    assert any(header.startswith(f"{COOKIE_NAME}={token}") for header in cookies)
    assert token not in login.get_data(as_text=True)
    assert token not in login.headers.get("Location", "")
    for path in ("/site-admin/", NONCE_PATH, "/logout", WHOAMI):
        response = client.get(path)
        assert token not in response_text(response), path


def test_no_stored_hash_reaches_a_response(site: Site) -> None:
    flow = run_flow(site)
    connection = site.app.auth.store.connection()
    hashes = [str(row[0]) for row in connection.execute("SELECT password_hash FROM users")]
    hashes += [str(row[0]) for row in connection.execute("SELECT password_hash FROM app_passwords")]
    hashes += [str(row[0]) for row in connection.execute("SELECT token_hash FROM sessions")]
    for label, response in flow.responses + [("one-time", r) for r in flow.one_time]:
        text = response_text(response)
        for stored in hashes:
            assert stored not in text, label


# ---------------------------------------------------------------------- constant time
class Spy:
    """Wraps ``hmac.compare_digest`` and counts the calls."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.calls = 0

    def __call__(self, a: Any, b: Any) -> bool:
        self.calls += 1
        return bool(self.real(a, b))


@pytest.fixture
def password_spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    spy = Spy(hmac.compare_digest)
    monkeypatch.setattr("sitecache.auth.passwords.hmac.compare_digest", spy)
    return spy


@pytest.fixture
def nonce_spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    spy = Spy(hmac.compare_digest)
    monkeypatch.setattr("sitecache.auth.nonces.hmac.compare_digest", spy)
    return spy


@pytest.mark.parametrize("password", [PASSWORD, WRONG_PASSWORD])
def test_a_login_password_is_compared_in_constant_time(
    site: Site, password_spy: Spy, password: str
) -> None:
    log_in(site.client(), "ada", password)
    assert password_spy.calls >= 1


@pytest.mark.parametrize("correct", [True, False])
def test_an_application_password_is_compared_in_constant_time(
    site: Site, password_spy: Spy, correct: bool
) -> None:
    password = site.app_password("author")
    presented = password if correct else "abcd efgh ijkl mnop qrst uvwx"
    response = site.client().get(WHOAMI, headers=basic("aurora", presented))
    assert response.status_code == (200 if correct else 401)
    assert password_spy.calls >= 1


@pytest.mark.parametrize("valid", [True, False])
def test_a_rest_nonce_is_compared_in_constant_time(
    site: Site, monkeypatch: pytest.MonkeyPatch, valid: bool
) -> None:
    client = site.logged_in("author")
    nonce = rest_nonce(client) if valid else "0123456789"
    spy = Spy(hmac.compare_digest)
    monkeypatch.setattr("sitecache.auth.nonces.hmac.compare_digest", spy)
    response = client.get(WHOAMI, headers={"X-Site-Nonce": nonce})
    assert response.status_code == (200 if valid else 403)
    assert spy.calls >= 1


def test_an_unknown_login_costs_as_much_scrypt_work_as_a_wrong_password(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    derivations: list[int] = []
    real = PasswordHasher._derive

    def counting(self: PasswordHasher, password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
        derivations.append(n)
        return real(self, password, salt, n, r, p)

    monkeypatch.setattr(PasswordHasher, "_derive", counting)
    log_in(site.client(), "ada", WRONG_PASSWORD)
    wrong = list(derivations)
    derivations.clear()
    log_in(site.client(), "nobody", WRONG_PASSWORD)
    assert wrong
    assert derivations == wrong


def test_a_logout_nonce_is_compared_in_constant_time(site: Site, nonce_spy: Spy) -> None:
    client: Client = site.logged_in("author")
    nonce = hidden_field(client.get("/logout").text, "_sitenonce")
    nonce_spy.calls = 0
    client.post("/logout", data={"_sitenonce": nonce})
    assert nonce_spy.calls >= 1
