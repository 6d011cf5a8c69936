"""The application-password routes under ``site/v2/users/<id>|me/application-passwords``.

List, create (201 with the password, shown once, and ``Location``), read, rename, delete one
(``{"deleted": true, "previous": item}``), delete all (``{"deleted": true, "count": n}``) and
introspect, with their schema shown by OPTIONS. A user manages their own passwords and an
administrator anyone's; an anonymous caller gets 401 ``rest_not_logged_in``, a logged-in caller
without the right 403 with the route's own code, and an administrator naming an unknown user 404.
"""

from __future__ import annotations

import re
import uuid
from typing import Any
from urllib.parse import urlsplit

import pytest
from werkzeug.test import TestResponse

from tests.auth.conftest import APP_PASSWORDS, REMOTE, Site, basic, rest_nonce
from tests.conftest import both_engines

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


ITEM_FIELDS = {"uuid", "app_id", "name", "created", "last_used", "last_ip", "_links"}
APP_ID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
CHUNKED = re.compile(r"[A-Za-z0-9]{4}( [A-Za-z0-9]{4}){5}")


def url(user: int | str, suffix: str = "") -> str:
    return APP_PASSWORDS.format(user=user) + suffix


def call(site: Site, role: str | None, method: str, path: str, json: Any = None) -> TestResponse:
    headers = site.basic(role) if role else {}
    return site.client().open(path, method=method, headers=headers, json=json)


def create(site: Site, role: str, name: str = "My app", **fields: Any) -> dict[str, Any]:
    response = call(site, role, "POST", url("me"), json={"name": name, **fields})
    assert response.status_code == 201, response.text
    return dict(response.get_json())


# ---------------------------------------------------------------------- listing
@pytest.mark.parametrize("who", ["me", "id"])
def test_a_user_lists_their_application_passwords(site: Site, who: str) -> None:
    sam = site.users["subscriber"]
    site.app.auth.app_passwords.create(sam, "Phone")
    headers = site.basic("subscriber")
    response = site.client().get(url("me" if who == "me" else sam.id), headers=headers)
    assert response.status_code == 200
    items = response.get_json()
    assert [item["name"] for item in items] == ["Phone", "auth-subscriber"]
    for item in items:
        assert set(item) == ITEM_FIELDS
        assert "password" not in item


def test_a_listed_item_describes_the_password(site: Site) -> None:
    sam = site.users["subscriber"]
    _, record = site.app.auth.app_passwords.create(sam, "Phone", APP_ID)
    response = call(site, "subscriber", "GET", url("me"))
    (item,) = [item for item in response.get_json() if item["uuid"] == record.uuid]
    assert item["app_id"] == APP_ID
    assert item["created"] == "2023-11-14T22:13:20"
    assert item["last_used"] is None
    assert item["last_ip"] is None
    assert item["_links"]["self"][0]["href"] == (
        f"http://example.org/site-json/site/v2/users/{sam.id}/application-passwords/{record.uuid}"
    )


def test_the_edit_context_does_not_reveal_passwords_either(site: Site) -> None:
    response = call(site, "subscriber", "GET", url("me") + "?context=edit")
    assert response.status_code == 200
    assert all("password" not in item for item in response.get_json())


# ---------------------------------------------------------------------- creating
def test_creating_answers_201_with_the_password_once_and_a_location(site: Site) -> None:
    sam = site.users["subscriber"]
    response = call(site, "subscriber", "POST", url("me"), json={"name": "CLI", "app_id": APP_ID})
    assert response.status_code == 201
    body = response.get_json()
    assert CHUNKED.fullmatch(body["password"])
    assert len(body["password"].replace(" ", "")) == 24
    assert body["name"] == "CLI"
    assert body["app_id"] == APP_ID
    assert uuid.UUID(body["uuid"]).version == 4
    assert body["created"] == "2023-11-14T22:13:20"
    assert (body["last_used"], body["last_ip"]) == (None, None)
    location = response.headers["Location"]
    assert location == (
        f"http://example.org/site-json/site/v2/users/{sam.id}/application-passwords/{body['uuid']}"
    )
    again = site.client().get(urlsplit(location).path, headers=basic("sam", body["password"]))
    assert again.status_code == 200
    assert again.get_json()["uuid"] == body["uuid"]
    assert "password" not in again.get_json()


def test_a_created_password_authenticates_with_or_without_spaces(site: Site) -> None:
    password = create(site, "subscriber")["password"]
    for presented in (password, password.replace(" ", "")):
        response = site.client().get(url("me"), headers=basic("sam", presented))
        assert response.status_code == 200


def test_a_created_password_is_stored_hashed(site: Site) -> None:
    password = create(site, "subscriber")["password"]
    rows = site.app.auth.store.connection().execute("SELECT * FROM app_passwords").fetchall()
    for row in rows:
        for value in dict(row).values():
            assert password not in str(value)
            assert password.replace(" ", "") not in str(value)


def test_each_created_password_is_different(site: Site) -> None:
    passwords = {create(site, "subscriber", name=f"app {n}")["password"] for n in range(5)}
    assert len(passwords) == 5


def test_a_duplicate_name_is_refused_with_409(site: Site) -> None:
    create(site, "subscriber", name="CLI")
    response = call(site, "subscriber", "POST", url("me"), json={"name": "CLI"})
    assert response.status_code == 409
    assert response.get_json()["code"] == "application_password_duplicate_name"


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({}, "rest_missing_callback_param"),
        ({"name": ""}, "rest_invalid_param"),
        ({"name": "   "}, "rest_invalid_param"),
        ({"name": "x", "app_id": "not-a-uuid"}, "rest_invalid_param"),
        ({"name": 12}, "rest_invalid_param"),
    ],
)
def test_an_invalid_creation_is_refused_with_400(
    site: Site, payload: dict[str, Any], code: str
) -> None:
    response = call(site, "subscriber", "POST", url("me"), json=payload)
    assert response.status_code == 400
    assert response.get_json()["code"] == code
    assert len(site.app.auth.app_passwords.list(site.users["subscriber"])) == 1


# ---------------------------------------------------------------------- one item
def test_reading_one_password(site: Site) -> None:
    created = create(site, "subscriber")
    response = call(site, "subscriber", "GET", url("me", f"/{created['uuid']}"))
    assert response.status_code == 200
    assert set(response.get_json()) == ITEM_FIELDS
    assert response.get_json()["name"] == created["name"]


def test_reading_an_unknown_uuid_is_404(site: Site) -> None:
    response = call(site, "subscriber", "GET", url("me", f"/{uuid.uuid4()}"))
    assert response.status_code == 404
    assert response.get_json()["code"] == "rest_application_password_not_found"


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_renaming_a_password(site: Site, method: str) -> None:
    created = create(site, "subscriber")
    path = url("me", f"/{created['uuid']}")
    response = call(site, "subscriber", method, path, json={"name": "Renamed"})
    assert response.status_code == 200
    assert response.get_json()["name"] == "Renamed"
    assert "password" not in response.get_json()
    assert call(site, "subscriber", "GET", path).get_json()["name"] == "Renamed"


def test_renaming_to_a_name_in_use_is_refused(site: Site) -> None:
    create(site, "subscriber", name="Taken")
    created = create(site, "subscriber", name="Other")
    path = url("me", f"/{created['uuid']}")
    response = call(site, "subscriber", "PUT", path, json={"name": "Taken"})
    assert response.status_code == 409
    assert call(site, "subscriber", "GET", path).get_json()["name"] == "Other"


def test_deleting_one_password_returns_it_as_previous(site: Site) -> None:
    created = create(site, "subscriber")
    path = url("me", f"/{created['uuid']}")
    response = call(site, "subscriber", "DELETE", path)
    assert response.status_code == 200
    body = response.get_json()
    assert body["deleted"] is True
    assert body["previous"]["uuid"] == created["uuid"]
    assert body["previous"]["name"] == created["name"]
    assert "password" not in body["previous"]
    assert call(site, "subscriber", "GET", path).status_code == 404
    stale = site.client().get(url("me"), headers=basic("sam", created["password"]))
    assert stale.status_code == 401


def test_deleting_an_unknown_password_is_404(site: Site) -> None:
    response = call(site, "subscriber", "DELETE", url("me", f"/{uuid.uuid4()}"))
    assert response.status_code == 404
    assert response.get_json()["code"] == "rest_application_password_not_found"


def test_deleting_all_passwords_returns_the_count(site: Site) -> None:
    sam = site.users["subscriber"]
    site.app.auth.app_passwords.create(sam, "one")
    site.app.auth.app_passwords.create(sam, "two")
    response = call(site, "subscriber", "DELETE", url("me"))  # + the caller's own: 3
    assert response.status_code == 200
    assert response.get_json() == {"deleted": True, "count": 3}
    assert site.app.auth.app_passwords.list(sam) == []


# ---------------------------------------------------------------------- introspection
def test_introspect_shows_the_password_that_authenticated_the_request(site: Site) -> None:
    password, record = site.app.auth.app_passwords.create(site.users["subscriber"], "CLI")
    response = site.client().get(url("me", "/introspect"), headers=basic("sam", password))
    assert response.status_code == 200
    assert response.get_json()["uuid"] == record.uuid
    assert response.get_json()["name"] == "CLI"
    assert "password" not in response.get_json()


def test_introspect_without_an_application_password_is_404(site: Site) -> None:
    client = site.logged_in("subscriber")
    response = client.get(url("me", "/introspect"), headers={"X-Site-Nonce": rest_nonce(client)})
    assert response.status_code == 404
    assert response.get_json()["code"] == "rest_no_authenticated_app_password"


def test_introspect_when_logged_out_is_401(site: Site) -> None:
    response = site.client().get(url("me", "/introspect"))
    assert response.status_code == 401
    assert response.get_json()["code"] == "rest_not_logged_in"


def test_an_administrator_cannot_introspect_for_another_user(site: Site) -> None:
    sam = site.users["subscriber"]
    response = call(site, "administrator", "GET", url(sam.id, "/introspect"))
    assert response.status_code == 403
    assert response.get_json()["code"] == (
        "rest_cannot_introspect_app_password_for_non_authenticated_user"
    )


@pytest.mark.parametrize("role", ["editor", "subscriber"])
def test_a_non_administrator_cannot_introspect_for_another_user(site: Site, role: str) -> None:
    ada = site.users["administrator"]
    response = call(site, role, "GET", url(ada.id, "/introspect"))
    assert response.status_code == 403


# ---------------------------------------------------------------------- the schema
def test_options_shows_the_collection_schema_and_endpoints(site: Site) -> None:
    response = site.client().open(url("me"), method="OPTIONS")
    assert response.status_code == 200
    body = response.get_json()
    assert body["namespace"] == "site/v2"
    assert [endpoint["methods"] for endpoint in body["endpoints"]] == [
        ["GET"],
        ["POST"],
        ["DELETE"],
    ]
    create_args = body["endpoints"][1]["args"]
    assert create_args["name"]["required"] is True
    assert "password" not in create_args
    assert "uuid" not in create_args
    schema = body["schema"]
    assert schema["title"] == "application-password"
    properties = schema["properties"]
    assert set(properties) == ITEM_FIELDS - {"_links"} | {"password"}
    assert properties["password"]["context"] == ["edit"]
    for readonly in ("uuid", "password", "created", "last_used", "last_ip"):
        assert properties[readonly]["readonly"] is True
    assert properties["uuid"]["format"] == "uuid"


def test_options_shows_the_item_schema_and_endpoints(site: Site) -> None:
    response = site.client().open(url("me", f"/{uuid.uuid4()}"), method="OPTIONS")
    assert response.status_code == 200
    methods = [endpoint["methods"] for endpoint in response.get_json()["endpoints"]]
    assert methods == [["GET"], ["POST", "PUT", "PATCH"], ["DELETE"]]
    assert response.get_json()["schema"]["title"] == "application-password"


# ---------------------------------------------------------------------- permissions
OPERATIONS: list[tuple[str, str, str]] = [
    ("GET", "", "rest_cannot_list_application_passwords"),
    ("POST", "", "rest_cannot_create_application_passwords"),
    ("DELETE", "", "rest_cannot_delete_application_passwords"),
    ("GET", "/{uuid}", "rest_cannot_read_application_password"),
    ("PUT", "/{uuid}", "rest_cannot_edit_application_password"),
    ("POST", "/{uuid}", "rest_cannot_edit_application_password"),
    ("DELETE", "/{uuid}", "rest_cannot_delete_application_password"),
]


def _target(site: Site, role: str) -> tuple[int, str]:
    user = site.users[role]
    _, record = site.app.auth.app_passwords.create(user, "target")
    return user.id, record.uuid


@pytest.mark.parametrize(("method", "suffix", "code"), OPERATIONS)
@pytest.mark.parametrize("who", ["me", "id"])
def test_an_anonymous_caller_gets_401_not_logged_in(
    site: Site, method: str, suffix: str, code: str, who: str
) -> None:
    user_id, item = _target(site, "subscriber")
    path = url("me" if who == "me" else user_id, suffix.format(uuid=item))
    response = call(site, None, method, path, json={"name": "x"})
    assert response.status_code == 401
    assert response.get_json()["code"] == "rest_not_logged_in"


def test_a_cookie_without_a_nonce_is_not_logged_in_for_these_routes(site: Site) -> None:
    response = site.logged_in("subscriber").get(url("me"))
    assert response.status_code == 401
    assert response.get_json()["code"] == "rest_not_logged_in"


def test_a_logged_in_cookie_with_its_nonce_manages_its_own_passwords(site: Site) -> None:
    client = site.logged_in("subscriber")
    headers = {"X-Site-Nonce": rest_nonce(client)}
    created = client.post(url("me"), json={"name": "Browser"}, headers=headers)
    assert created.status_code == 201
    listed = client.get(url("me"), headers=headers)
    assert [item["name"] for item in listed.get_json()] == ["Browser"]


@pytest.mark.parametrize(("method", "suffix", "code"), OPERATIONS)
@pytest.mark.parametrize("role", ["editor", "author", "contributor", "subscriber"])
def test_a_user_manages_their_own_passwords_by_id(
    site: Site, role: str, method: str, suffix: str, code: str
) -> None:
    user_id, item = _target(site, role)
    response = call(site, role, method, url(user_id, suffix.format(uuid=item)), json={"name": "n"})
    assert response.status_code in (200, 201), response.text


@pytest.mark.parametrize(("method", "suffix", "code"), OPERATIONS)
@pytest.mark.parametrize("owner", ["editor", "subscriber"])
def test_an_administrator_manages_anyones_passwords(
    site: Site, owner: str, method: str, suffix: str, code: str
) -> None:
    user_id, item = _target(site, owner)
    path = url(user_id, suffix.format(uuid=item))
    response = call(site, "administrator", method, path, json={"name": "by admin"})
    assert response.status_code in (200, 201), response.text


def test_an_administrator_creates_a_password_for_another_user(site: Site) -> None:
    sam = site.users["subscriber"]
    response = call(site, "administrator", "POST", url(sam.id), json={"name": "for sam"})
    assert response.status_code == 201
    assert f"/users/{sam.id}/" in response.headers["Location"]
    names = [record.name for record in site.app.auth.app_passwords.list(sam)]
    assert names == ["for sam"]
    whoami = site.client().get(url("me"), headers=basic("sam", response.get_json()["password"]))
    assert whoami.status_code == 200


@pytest.mark.parametrize(("method", "suffix", "code"), OPERATIONS)
@pytest.mark.parametrize("role", ["editor", "author", "contributor", "subscriber"])
def test_anyone_else_gets_403_with_the_routes_code(
    site: Site, role: str, method: str, suffix: str, code: str
) -> None:
    user_id, item = _target(site, "administrator")
    path = url(user_id, suffix.format(uuid=item))
    response = call(site, role, method, path, json={"name": "hijack"})
    assert response.status_code == 403
    assert response.get_json()["code"] == code
    assert response.get_json()["data"]["status"] == 403
    remaining = site.app.auth.app_passwords.list(site.users["administrator"])
    assert [record.name for record in remaining] == ["target"]


@pytest.mark.parametrize(("method", "suffix", "code"), OPERATIONS)
def test_an_administrator_naming_an_unknown_user_gets_404(
    site: Site, method: str, suffix: str, code: str
) -> None:
    path = url(9999, suffix.format(uuid=uuid.uuid4()))
    response = call(site, "administrator", method, path, json={"name": "x"})
    assert response.status_code == 404
    assert response.get_json()["code"] == "rest_user_invalid_id"


def test_a_non_administrator_naming_an_unknown_user_gets_403(site: Site) -> None:
    response = call(site, "editor", "GET", url(9999))
    assert response.status_code == 403


def test_where_application_passwords_are_unavailable_the_routes_answer_501(site: Site) -> None:
    client = site.logged_in("subscriber", address=REMOTE)
    response = client.get(url("me"), headers={"X-Site-Nonce": rest_nonce(client)})
    assert response.status_code == 501
    assert response.get_json()["code"] == "application_passwords_disabled"


@pytest.mark.parametrize("user_id", ["99999999999999999999", "9223372036854775808"])
def test_an_id_no_user_can_have_is_unknown_rather_than_a_crash(site: Site, user_id: str) -> None:
    assert call(site, "administrator", "GET", url(user_id)).status_code == 404
    assert call(site, "editor", "GET", url(user_id)).status_code == 403
