"""Authentication end to end: a real gunicorn, users made with the real command line.

Logs in with the form, reads the REST nonce, calls an admin-only route with and without the
nonce and with a bad one, with good and bad application passwords, and as a subscriber.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.e2e.server import REPOSITORY, LiveServer, Response

ADMIN_ONLY = "/site-json/e2e/v1/admin-only"


def cli(live_server: LiveServer, *arguments: str) -> str:
    """Run ``sitecache`` against the live server's data directory; return its output."""
    # Only what the command line says: nothing of this process's SITECACHE_* settings.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "sitecache.cli",
            "--data-dir",
            str(live_server.data_dir),
            *arguments,
        ],
        env=environment,
        capture_output=True,
        text=True,
        cwd=REPOSITORY,
        check=True,
        timeout=60,
    )
    return completed.stdout


def body(response: Response) -> Any:
    return json.loads(response.body)


def basic(login: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{login}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def log_in(live_server: LiveServer, login: str, password: str) -> str:
    """Log in with the form; return the Cookie header value of the session."""
    response = live_server.request(
        "POST",
        "/login",
        urlencode({"log": login, "pwd": password, "redirect_to": "/site-admin/"}),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status == 303, response.body
    assert response.headers["location"] == "/site-admin/"
    cookie = SimpleCookie()
    for value in response.header_values("Set-Cookie"):
        cookie.load(value)
    morsel = cookie["sitecache_session"]
    assert morsel["httponly"] is True
    assert morsel["samesite"] == "Lax"
    return f"sitecache_session={morsel.value}"


@pytest.fixture(scope="module")
def accounts(live_server: LiveServer) -> dict[str, str]:
    """An administrator and a subscriber, created with the command line."""
    cli(
        live_server,
        "user",
        "create",
        "ada",
        "--role",
        "administrator",
        "--password",
        "ada-password",
    )
    cli(live_server, "user", "create", "sam", "--role", "subscriber", "--password", "sam-password")
    return {"ada": "ada-password", "sam": "sam-password"}


def test_the_login_form_is_an_accessible_page(live_server: LiveServer) -> None:
    response = live_server.request("GET", "/login")
    assert response.status == 200
    assert response.headers["cache-control"] == "no-store, private"
    page = response.body.decode()
    assert '<label for="log">' in page
    assert '<label for="pwd">' in page
    assert 'autocomplete="current-password"' in page


def test_a_wrong_password_gets_the_generic_message(
    live_server: LiveServer, accounts: dict[str, str]
) -> None:
    for login in ("ada", "nobody"):
        response = live_server.request(
            "POST",
            "/login",
            urlencode({"log": login, "pwd": "wrong-password"}),
            {"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert response.status == 200
        assert b"The username or password you entered is incorrect." in response.body
        assert "set-cookie" not in response.headers


def test_an_admin_only_route_needs_the_cookie_and_a_valid_nonce(
    live_server: LiveServer, accounts: dict[str, str]
) -> None:
    cookie = log_in(live_server, "ada", accounts["ada"])
    nonce_response = live_server.request(
        "GET", "/site-admin/rest-nonce", headers={"Cookie": cookie}
    )
    assert nonce_response.status == 200
    nonce = nonce_response.body.decode()
    assert re.fullmatch(r"[0-9a-f]{10}", nonce)

    without = live_server.request("GET", ADMIN_ONLY, headers={"Cookie": cookie})
    assert (without.status, body(without)["code"]) == (401, "rest_forbidden")

    with_header = live_server.request(
        "GET", ADMIN_ONLY, headers={"Cookie": cookie, "X-Site-Nonce": nonce}
    )
    assert (with_header.status, body(with_header)) == (200, {"ok": True, "user": "ada"})
    assert re.fullmatch(r"[0-9a-f]{10}", with_header.headers["x-site-nonce"])
    assert with_header.headers["cache-control"] == (
        "no-cache, must-revalidate, max-age=0, no-store, private"
    )

    with_parameter = live_server.request(
        "GET", f"{ADMIN_ONLY}?_sitenonce={nonce}", headers={"Cookie": cookie}
    )
    assert with_parameter.status == 200

    bad = live_server.request(
        "GET", ADMIN_ONLY, headers={"Cookie": cookie, "X-Site-Nonce": "0" * 10}
    )
    assert bad.status == 403
    assert body(bad) == {
        "code": "rest_cookie_invalid_nonce",
        "message": "Cookie nonce is invalid",
        "data": {"status": 403},
    }


def test_a_subscriber_is_refused_with_403(
    live_server: LiveServer, accounts: dict[str, str]
) -> None:
    cookie = log_in(live_server, "sam", accounts["sam"])
    nonce = live_server.request("GET", "/site-admin/rest-nonce", headers={"Cookie": cookie}).body
    response = live_server.request(
        "GET", ADMIN_ONLY, headers={"Cookie": cookie, "X-Site-Nonce": nonce.decode()}
    )
    assert (response.status, body(response)["code"]) == (403, "rest_forbidden")


def test_the_rest_nonce_page_refuses_a_visitor_without_a_session(live_server: LiveServer) -> None:
    assert live_server.request("GET", "/site-admin/rest-nonce").status == 403


def test_application_passwords_authenticate_rest_requests(
    live_server: LiveServer, accounts: dict[str, str]
) -> None:
    output = cli(live_server, "app-password", "create", "ada", "--name", "e2e deploy")
    password = re.search(r"password: ((?:\w{4} ){5}\w{4})", output)
    assert password is not None, output
    chunked = password.group(1)

    for presented in (chunked, chunked.replace(" ", "")):
        response = live_server.request("GET", ADMIN_ONLY, headers=basic("ada", presented))
        assert (response.status, body(response)) == (200, {"ok": True, "user": "ada"})
        assert "x-site-nonce" not in response.headers  # no cookie check once Basic succeeded

    wrong = live_server.request("GET", ADMIN_ONLY, headers=basic("ada", "a" * 24))
    assert wrong.status == 401
    assert body(wrong)["code"] == "incorrect_password"
    unknown = live_server.request("GET", ADMIN_ONLY, headers=basic("nobody", chunked))
    # The same answer as a wrong password: no user enumeration (#29).
    assert (unknown.status, body(unknown)) == (401, body(wrong))

    listed = live_server.request(
        "GET", "/site-json/site/v2/users/me/application-passwords", headers=basic("ada", chunked)
    )
    assert listed.status == 200
    (item,) = body(listed)
    assert item["name"] == "e2e deploy"
    assert item["last_ip"] == "127.0.0.1"
    assert "password" not in item

    introspect = live_server.request(
        "GET",
        "/site-json/site/v2/users/me/application-passwords/introspect",
        headers=basic("ada", chunked),
    )
    assert body(introspect)["uuid"] == item["uuid"]


def test_a_subscriber_with_an_application_password_still_gets_403_on_admin_routes(
    live_server: LiveServer, accounts: dict[str, str]
) -> None:
    output = cli(live_server, "app-password", "create", "sam", "--name", "sam's phone")
    password = re.search(r"password: ((?:\w{4} ){5}\w{4})", output)
    assert password is not None
    response = live_server.request("GET", ADMIN_ONLY, headers=basic("sam", password.group(1)))
    assert (response.status, body(response)["code"]) == (403, "rest_forbidden")


def test_the_index_advertises_the_authorization_screen(live_server: LiveServer) -> None:
    index = body(live_server.request("GET", "/site-json/"))
    assert index["authentication"] == {
        "application-passwords": {
            "endpoints": {
                "authorization": f"{live_server.base_url}/site-admin/authorize-application"
            }
        }
    }


def test_an_application_is_authorized_through_the_screen(
    live_server: LiveServer, accounts: dict[str, str]
) -> None:
    cookie = log_in(live_server, "ada", accounts["ada"])
    query = urlencode({"app_name": "Feed Reader", "success_url": "https://reader.example/done"})
    screen = live_server.request(
        "GET", f"/site-admin/authorize-application?{query}", headers={"Cookie": cookie}
    )
    assert screen.status == 200
    assert screen.headers["x-frame-options"] == "DENY"
    nonce = re.search(rb'name="_sitenonce" value="([0-9a-f]+)"', screen.body)
    assert nonce is not None
    approved = live_server.request(
        "POST",
        "/site-admin/authorize-application",
        urlencode(
            {
                "_sitenonce": nonce.group(1).decode(),
                "app_name": "Feed Reader",
                "success_url": "https://reader.example/done",
                "new_application_password_name": "Feed Reader",
                "approve": "1",
            }
        ),
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
    )
    assert approved.status == 303
    location = approved.headers["location"]
    assert location.startswith("https://reader.example/done?")
    from urllib.parse import parse_qs, urlsplit

    granted = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
    assert granted["site_url"] == live_server.base_url
    assert granted["user_login"] == "ada"
    response = live_server.request("GET", ADMIN_ONLY, headers=basic("ada", granted["password"]))
    assert response.status == 200


def test_logging_out_revokes_the_session(live_server: LiveServer, accounts: dict[str, str]) -> None:
    cookie = log_in(live_server, "ada", accounts["ada"])
    confirm = live_server.request("GET", "/logout", headers={"Cookie": cookie})
    nonce = re.search(rb'name="_sitenonce" value="([0-9a-f]+)"', confirm.body)
    assert nonce is not None
    forged = live_server.request(
        "POST",
        "/logout",
        urlencode({"_sitenonce": "0" * 10}),
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
    )
    assert forged.status == 403
    done = live_server.request(
        "POST",
        "/logout",
        urlencode({"_sitenonce": nonce.group(1).decode()}),
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
    )
    assert done.status == 303
    assert done.headers["location"] == "/login?loggedout=true"
    assert (
        live_server.request("GET", "/site-admin/rest-nonce", headers={"Cookie": cookie}).status
        == 403
    )


def test_no_secret_reaches_the_server_log(
    live_server: LiveServer, accounts: dict[str, str]
) -> None:
    log = live_server.log()
    for secret in (accounts["ada"], accounts["sam"], "sitecache_session=", "Basic "):
        assert secret not in log
