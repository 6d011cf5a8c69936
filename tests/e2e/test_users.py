"""The user routes end to end: a real gunicorn, an administrator and an application password
made with the real command line, a user created and deleted over REST."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.e2e.server import LiveServer
from tests.e2e.test_auth import basic, cli

USERS = "/site-json/site/v2/users"


def body(raw: bytes) -> Any:
    return json.loads(raw)


def test_an_application_password_creates_lists_and_deletes_a_user(live_server: LiveServer) -> None:
    init = cli(live_server, "init", "--login", "owner")
    assert "Administrator created." in init
    output = cli(live_server, "app-password", "create", "owner", "--name", "e2e users")
    match = re.search(r"password:\s+((?:\w{4} ){5}\w{4})", output)
    assert match is not None, output
    auth = basic("owner", match.group(1))

    created = live_server.request(
        "POST",
        USERS,
        json.dumps(
            {
                "username": "writer",
                "email": "writer@example.org",
                "password": "writer-password",
                "roles": ["author"],
            }
        ),
        {**auth, "Content-Type": "application/json"},
    )
    assert created.status == 201, created.body
    user = body(created.body)
    assert user["roles"] == ["author"]
    assert created.headers["location"].endswith(f"{USERS}/{user['id']}")

    listing = live_server.request("GET", f"{USERS}?per_page=1&orderby=id", headers=auth)
    assert listing.status == 200
    assert listing.headers["x-site-total"] == "2"
    assert listing.headers["x-site-totalpages"] == "2"
    assert 'rel="next"' in listing.headers["link"]

    anonymous = live_server.request("GET", f"{USERS}/{user['id']}")
    assert anonymous.status == 401

    deleted = live_server.request(
        "DELETE", f"{USERS}/{user['id']}?force=true&reassign=false", headers=auth
    )
    assert deleted.status == 200, deleted.body
    assert body(deleted.body)["previous"]["username"] == "writer"

    users = json.loads(cli(live_server, "user", "list", "--json"))
    assert [entry["username"] for entry in users] == ["owner"]
    gone = live_server.request("GET", f"{USERS}/{user['id']}", headers=auth)
    assert gone.status == 404
