"""Fixtures and helpers of the authentication tests.

Requests go to ``http://localhost`` (the test client's default host, where its cookies live)
unless a test passes another ``base_url``; werkzeug's client sets no ``REMOTE_ADDR``, so every
client here is built with `client_for`, which supplies one (loopback unless told otherwise).

Applications come from the shared ``app_factory`` (scrypt cost 1024, site ``http://example.org``).
On top of it this package adds: a fake clock wired into every time-dependent service of an
application, clients that appear to come from a loopback, a remote or a TLS address, users of
every role, and two probe routes (``auth-test/v1/whoami`` and ``auth-test/v1/admin-only``) that
show who the REST server thinks the caller is.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.auth import require_site_admin
from sitecache.auth.passwords import PasswordHasher
from sitecache.auth.roles import SiteUser
from sitecache.auth.sessions import COOKIE_NAME
from sitecache.rest import RestRequest, RestServer, return_true
from tests.conftest import AppFactory

PASSWORD = "correct horse battery"
"""The password of every user the fixtures create."""
START = 1_700_000_000.0
"""When the fake clock starts (2023-11-14 22:13:20 UTC)."""
LOOPBACK = "127.0.0.1"
REMOTE = "10.0.0.5"
WHOAMI = "/site-json/auth-test/v1/whoami"
ADMIN_ONLY = "/site-json/auth-test/v1/admin-only"
APP_PASSWORDS = "/site-json/site/v2/users/{user}/application-passwords"
AUTHORIZE = "/site-admin/authorize-application"
NONCE_PATH = "/site-admin/rest-nonce"

StartResponse = Callable[..., Any]


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds``."""
        self.now += seconds


class FromAddress:
    """A WSGI wrapper that gives requests a ``REMOTE_ADDR`` unless the request sets its own."""

    def __init__(self, app: App, address: str) -> None:
        self.app = app
        self.address = address

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        environ.setdefault("REMOTE_ADDR", self.address)
        return self.app(environ, start_response)


def client_for(app: App, address: str = LOOPBACK) -> Client:
    """A cookie-keeping test client whose requests come from ``address``."""
    return Client(FromAddress(app, address))


def basic(login: str, password: str) -> dict[str, str]:
    """An ``Authorization: Basic`` header."""
    token = base64.b64encode(f"{login}:{password}".encode()).decode("ascii")
    return {"Authorization": f"Basic {token}"}


def log_in(
    client: Client,
    login: str,
    password: str = PASSWORD,
    base_url: str = "http://localhost",
    **fields: str,
) -> TestResponse:
    """``POST /login``; the client keeps the session cookie."""
    return client.post("/login", data={"log": login, "pwd": password, **fields}, base_url=base_url)


def session_token(client: Client, domain: str = "localhost") -> str:
    """The session token in the client's cookie jar."""
    cookie = client.get_cookie(COOKIE_NAME, domain=domain)
    assert cookie is not None, "the client has no session cookie"
    return cookie.value


def rest_nonce(client: Client, base_url: str = "http://localhost") -> str:
    """A ``site_rest`` nonce from ``GET /site-admin/rest-nonce``."""
    response = client.get(NONCE_PATH, base_url=base_url)
    assert response.status_code == 200, response.text
    return response.text.strip()


def set_cookie_headers(response: TestResponse) -> list[str]:
    """Every ``Set-Cookie`` header of a response."""
    return response.headers.getlist("Set-Cookie")


def cookie_attributes(header: str) -> dict[str, str]:
    """The attributes of one ``Set-Cookie`` header, lower-cased names (flags map to "")."""
    attributes: dict[str, str] = {}
    for part in header.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        attributes[name.lower()] = value
    return attributes


def hidden_field(html: str, name: str) -> str:
    """The value of a hidden form field of a page."""
    match = re.search(rf'<input type="hidden" name="{re.escape(name)}" value="([^"]*)"', html)
    assert match is not None, f"no hidden field {name!r} in the page"
    return match.group(1)


@dataclass
class Site:
    """An application with a fake clock, its users (one per role) and client helpers."""

    app: App
    clock: FakeClock
    users: dict[str, SiteUser]
    credentials: dict[str, dict[str, str]] = field(default_factory=dict)

    def client(self, address: str = LOOPBACK) -> Client:
        """A new client from ``address``."""
        return client_for(self.app, address)

    def logged_in(self, role: str, address: str = LOOPBACK, **fields: str) -> Client:
        """A client holding a session of the user with ``role``."""
        client = self.client(address)
        response = log_in(client, self.users[role].login, **fields)
        assert response.status_code == 303, response.text
        return client

    def app_password(self, role: str, name: str = "probe") -> str:
        """A new application password for the user with ``role`` (as shown once)."""
        password, _ = self.app.auth.app_passwords.create(self.users[role], name)
        return password

    def basic(self, role: str) -> dict[str, str]:
        """Basic credentials of an application password of the user with ``role`` (one per
        role, named ``auth-<role>``, created on first use)."""
        if role not in self.credentials:
            password = self.app_password(role, name=f"auth-{role}")
            self.credentials[role] = basic(self.users[role].login, password)
        return self.credentials[role]


ROLE_LOGINS: Mapping[str, str] = {
    "administrator": "ada",
    "editor": "eddie",
    "author": "aurora",
    "contributor": "connie",
    "subscriber": "sam",
}


def use_clock(app: App, clock: FakeClock) -> None:
    """Make every time-dependent service of ``app`` read ``clock``."""
    auth = app.auth
    for service in (auth.users, auth.sessions, auth.nonces, auth.throttle, auth.app_passwords):
        service.clock = clock


def register_probes(server: RestServer) -> None:
    """``rest_api_init``: the probe routes."""

    def whoami(request: RestRequest) -> dict[str, Any]:
        return {
            "id": request.user.id,
            "method": request.authentication_method,
            "app_password": request.app_password,
        }

    server.register_rest_route(
        "auth-test/v1",
        "/whoami",
        {"methods": "GET, POST", "callback": whoami, "permission_callback": return_true},
    )
    server.register_rest_route(
        "auth-test/v1",
        "/admin-only",
        {
            "methods": "GET, POST",
            "callback": lambda request: {"ok": True},
            "permission_callback": require_site_admin,
        },
    )


def build_site(app: App, clock: FakeClock | None = None) -> Site:
    """Wire a fake clock and the probe routes into ``app`` and create one user per role."""
    clock = clock or FakeClock()
    use_clock(app, clock)
    app.hooks.add_action("rest_api_init", register_probes)
    # One scrypt hash of PASSWORD for the five users (the same salt for each: nothing here
    # compares users' hashes), not five: the fixture builds some 1,400 sites in `make check`.
    real = app.auth.users.hasher
    app.auth.users.hasher = _HashedOnce(real.n, real.r, real.p)
    try:
        users = {
            role: app.auth.users.create(login, PASSWORD, role, f"{login}@example.org")
            for role, login in ROLE_LOGINS.items()
        }
    finally:
        app.auth.users.hasher = real
    return Site(app, clock, users)


@dataclass(frozen=True, slots=True)
class _HashedOnce(PasswordHasher):
    """A hasher giving the same stored hash each time a password is hashed again."""

    kept: dict[str, str] = field(default_factory=dict, compare=False)

    def hash(self, password: str) -> str:
        stored = self.kept.get(password)
        if stored is None:
            stored = self.kept[password] = PasswordHasher.hash(self, password)
        return stored


@pytest.fixture
def clock() -> FakeClock:
    """A fake clock at `START`."""
    return FakeClock()


@pytest.fixture
def site(app_factory: AppFactory, clock: FakeClock) -> Site:
    """An application (``application_passwords = auto``) with users of every role."""
    return build_site(app_factory(), clock)


@pytest.fixture
def site_factory(app_factory: AppFactory, clock: FakeClock, tmp_path: Path) -> Callable[..., Site]:
    """Build sites with configuration overrides (each in its own data directory)."""
    count = 0

    def factory(**overrides: Any) -> Site:
        nonlocal count
        count += 1
        data_dir = tmp_path / f"site-{count}"
        return build_site(app_factory(data_dir=str(data_dir), **overrides), clock)

    return factory
