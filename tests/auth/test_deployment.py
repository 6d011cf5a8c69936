"""Deployment-sensitive rules: https-only admin, Secure cookies, and trusted reverse proxies."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest
from werkzeug.test import Client

from sitecache.app import App
from tests.auth.conftest import FakeClock, use_clock

PASSWORD = "correct horse battery"


def with_admin(app: App) -> App:
    app.auth.users.create("ada", PASSWORD, "administrator", "ada@example.org")
    return app


def basic(login: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{login}:{password}".encode()).decode()}


def session_cookie(response: object) -> str:
    cookies = [v for k, v in response.headers.items() if k == "Set-Cookie"]  # type: ignore[attr-defined]
    (cookie,) = [c for c in cookies if c.startswith("sitecache_session=")]
    return str(cookie)


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/login"), ("POST", "/login"), ("GET", "/site-admin/"), ("GET", "/logout")],
)
def test_force_ssl_admin_sends_the_admin_pages_to_https(
    app_factory: Callable[..., App], method: str, path: str
) -> None:
    client = Client(app_factory(force_ssl_admin=True))
    response = client.open(f"{path}?redirect_to=/site-admin/", method=method)
    assert response.status_code == 308
    assert response.headers["Location"] == f"https://localhost{path}?redirect_to=/site-admin/"


def test_force_ssl_admin_serves_the_admin_pages_over_https(app_factory: Callable[..., App]) -> None:
    client = Client(with_admin(app_factory(force_ssl_admin=True)))
    assert client.get("/login", base_url="https://example.org").status_code == 200
    response = client.post(
        "/login", data={"log": "ada", "pwd": PASSWORD}, base_url="https://example.org"
    )
    assert response.status_code == 303
    assert "; Secure" in session_cookie(response)


@pytest.mark.parametrize(
    ("config", "secure"),
    [
        ({}, False),
        ({"site_url": "https://example.org"}, True),  # TLS ends at a proxy in front of us
        ({"force_ssl_admin": True}, True),
    ],
)
def test_the_session_cookie_is_secure_whenever_the_site_is_https(
    app_factory: Callable[..., App], config: dict[str, object], secure: bool
) -> None:
    app = with_admin(app_factory(**config))
    base_url = "https://example.org" if config.get("force_ssl_admin") else "http://example.org"
    response = Client(app).post("/login", data={"log": "ada", "pwd": PASSWORD}, base_url=base_url)
    assert ("; Secure" in session_cookie(response)) is secure


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("X-Forwarded-For", "203.0.113.5"),
        ("Forwarded", "for=203.0.113.5"),
        ("X-Real-IP", "203.0.113.5"),
    ],
)
def test_a_local_proxy_forwarding_a_remote_client_does_not_make_passwords_available(
    app_factory: Callable[..., App], header: str, value: str
) -> None:
    app = with_admin(app_factory())
    password, _ = app.auth.app_passwords.create(app.auth.users.find("ada"), "ci")  # type: ignore[arg-type]
    client = Client(app)
    local = {"REMOTE_ADDR": "127.0.0.1"}
    direct = client.get("/site-json/site/v2/users/me/application-passwords",
                        headers=basic("ada", password), environ_base=local)  # fmt: skip
    assert direct.status_code == 200
    forwarded = client.get(
        "/site-json/site/v2/users/me/application-passwords",
        headers={**basic("ada", password), header: value},
        environ_base=local,
    )
    assert forwarded.status_code == 401
    assert forwarded.get_json()["code"] == "application_passwords_disabled"


def test_trusted_proxies_give_the_real_client_address_and_scheme(
    app_factory: Callable[..., App],
) -> None:
    app = with_admin(app_factory(proxy_count=1))
    password, _ = app.auth.app_passwords.create(app.auth.users.find("ada"), "ci")  # type: ignore[arg-type]
    client = Client(app)
    proxy = {"REMOTE_ADDR": "127.0.0.1"}
    over_http = client.get(
        "/site-json/site/v2/users/me/application-passwords",
        headers={**basic("ada", password), "X-Forwarded-For": "203.0.113.5"},
        environ_base=proxy,
    )
    assert over_http.get_json()["code"] == "application_passwords_disabled"
    over_tls = client.get(
        "/site-json/site/v2/users/me/application-passwords",
        headers={
            **basic("ada", password),
            "X-Forwarded-For": "203.0.113.5",
            "X-Forwarded-Proto": "https",
        },
        environ_base=proxy,
    )
    assert over_tls.status_code == 200
    (item,) = over_tls.get_json()
    assert item["last_ip"] == "203.0.113.5"
    assert item["_links"]["self"][0]["href"].startswith("https://")


def test_the_login_slowdown_counts_the_real_client_behind_a_trusted_proxy(
    app_factory: Callable[..., App],
) -> None:
    app = with_admin(app_factory(proxy_count=1))
    use_clock(app, FakeClock())  # the slowdown is not waited out, however slow the machine
    client = Client(app)
    for _ in range(5):
        client.post(
            "/login",
            data={"log": "ada", "pwd": "wrong"},
            headers={"X-Forwarded-For": "203.0.113.5"},
            environ_base={"REMOTE_ADDR": "127.0.0.1"},
        )
    attacker = client.post(
        "/login",
        data={"log": "ada", "pwd": PASSWORD},
        headers={"X-Forwarded-For": "203.0.113.5"},
        environ_base={"REMOTE_ADDR": "127.0.0.1"},
    )
    assert attacker.status_code == 429
    owner = Client(app).post(
        "/login",
        data={"log": "ada", "pwd": PASSWORD},
        headers={"X-Forwarded-For": "198.51.100.20"},
        environ_base={"REMOTE_ADDR": "127.0.0.1"},
    )
    assert owner.status_code == 303
