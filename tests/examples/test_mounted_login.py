"""A browser logs in through the mount of ``examples/mounted_api.py`` (werkzeug's test client,
no server): the login form, its redirect, the account page and the nonce all stay under
``/cache-admin``, and the cookie with the nonce reaches the ``site-cache/v1`` routes."""

from __future__ import annotations

import importlib.util
import re
from html.parser import HTMLParser
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import pytest
from werkzeug.test import Client, TestResponse

import sitecache
from sitecache.app import App
from tests.conftest import AppFactory
from tests.e2e.server import REPOSITORY

MOUNT = "/cache-admin"
PASSWORD = "correct horse battery staple"


class Forms(HTMLParser):
    """The forms of a page: each one's ``action`` and its named inputs' values."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, dict[str, str]]] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append((values.get("action", ""), {}))
        elif tag == "input" and self.forms and values.get("name"):
            self.forms[-1][1][values["name"]] = values.get("value", "")
        elif tag == "a" and "href" in values:
            self.links.append(values["href"])
        elif tag == "script" and "src" in values:
            self.links.append(values["src"])


def browser_for(module: ModuleType) -> Client:
    """A cookie-keeping client of the example's ``application``, from a loopback address."""
    application = module.application

    def from_loopback(environ: dict[str, Any], start_response: Any) -> Any:
        environ.setdefault("REMOTE_ADDR", "127.0.0.1")
        return application(environ, start_response)

    return Client(from_loopback)


def parsed(response: TestResponse) -> Forms:
    forms = Forms()
    forms.feed(response.get_data(as_text=True))
    return forms


@pytest.fixture
def example(app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, App]:
    """``examples/mounted_api.py`` loaded afresh, its ``create_app()`` building a test app."""
    admin = app_factory()
    admin.auth.users.create("ops", PASSWORD, "administrator", "ops@example.org")
    monkeypatch.setattr(sitecache, "create_app", lambda: admin)
    spec = importlib.util.spec_from_file_location(
        "mounted_api_under_test", REPOSITORY / "examples" / "mounted_api.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, admin


def test_a_browser_logs_in_through_the_mount_and_calls_the_cache_api(
    example: tuple[ModuleType, App],
) -> None:
    module, _ = example
    browser = browser_for(module)
    base = "http://example.org"

    form_page = browser.get(f"{base}{MOUNT}/login")
    assert form_page.status_code == 200
    [(action, fields)] = parsed(form_page).forms
    assert action == f"{MOUNT}/login"
    assert fields["redirect_to"] == f"{MOUNT}/site-admin/"

    fields.update(log="ops", pwd=PASSWORD)
    logged_in = browser.post(f"{base}{action}", data=fields)
    assert logged_in.status_code == 303, logged_in.get_data(as_text=True)
    landing = urlsplit(logged_in.headers["Location"]).path
    assert landing == f"{MOUNT}/site-admin/"

    account = browser.get(f"{base}{landing}")
    assert account.status_code == 200, account.get_data(as_text=True)[:500]
    page = parsed(account)
    # Every link and form of the account page stays under the mount, and answers there.
    local = [url for url in page.links + [action for action, _ in page.forms] if "//" not in url]
    assert f"{MOUNT}/site-admin/cache" in local
    assert all(url.startswith(f"{MOUNT}/") for url in local), local
    for url in {url for url in page.links if url.startswith(MOUNT)}:
        assert browser.get(f"{base}{url}").status_code == 200, url
    assert f"{base}{MOUNT}/site-json/" in account.get_data(as_text=True)

    nonce = browser.get(f"{base}{MOUNT}/site-admin/rest-nonce")
    assert nonce.status_code == 200
    stats = browser.get(
        f"{base}{MOUNT}/site-json/site-cache/v1/stats",
        headers={"X-Site-Nonce": nonce.get_data(as_text=True)},
    )
    assert stats.status_code == 200, stats.get_data(as_text=True)
    assert "entries" in stats.get_json()

    # Log out through the account page's own logout form: back at the mounted login form.
    [(logout, logout_fields)] = [form for form in page.forms if form[0].endswith("/logout")]
    assert logout == f"{MOUNT}/logout"
    logged_out = browser.post(f"{base}{logout}", data=logout_fields)
    assert logged_out.status_code == 303
    assert urlsplit(logged_out.headers["Location"]).path == f"{MOUNT}/login"
    again = browser.get(f"{base}{MOUNT}/site-json/site-cache/v1/stats")
    assert again.status_code == 401


def test_under_the_mount_a_logged_out_visit_of_an_account_page_logs_in_there(
    example: tuple[ModuleType, App],
) -> None:
    module, _ = example
    browser = browser_for(module)
    for page in ("/site-admin/", "/site-admin/cache"):
        answer = browser.get(f"http://example.org{MOUNT}{page}")
        assert answer.status_code == 303
        location = answer.headers["Location"]
        assert location.startswith(f"{MOUNT}/login?"), location
        assert re.search(rf"redirect_to={re.escape('%2Fcache-admin%2Fsite-admin%2F')}", location)
