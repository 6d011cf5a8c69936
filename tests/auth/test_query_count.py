"""SQLite queries per authenticated REST GET (counted with ``set_trace_callback``).

An application-password GET reads the user by login with their application passwords (one
query; on SQLite, after the store's change stamp, and only when the stamp moved since the last
read, `tests.auth.test_kept_credentials`), and then whatever the handler needs: the current
user is not read again by each permission callback, the ``Allow`` header or the items' target
hints. Counts are taken after a first request, which may
record the password's use (a write at most once a minute).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.auth.conftest import Site, basic
from tests.auth.test_rest_routes import url
from tests.conftest import traceable


@contextmanager
def traced(site: Site) -> Iterator[list[str]]:
    statements: list[str] = []
    connection = traceable(site.app.auth.store.connection())
    connection.set_trace_callback(statements.append)
    try:
        yield statements
    finally:
        connection.set_trace_callback(None)


def queries_for(site: Site, path: str, headers: dict[str, str]) -> list[str]:
    client = site.client()
    assert client.get(path, headers=headers).status_code == 200  # records the use
    with traced(site) as statements:
        response = client.get(path, headers=headers)
    assert response.status_code == 200, response.text
    return statements


def test_listing_my_application_passwords_takes_at_most_three_queries(site: Site) -> None:
    sam = site.users["subscriber"]
    for name in ("Phone", "Laptop", "Backup"):
        site.app.auth.app_passwords.create(sam, name)
    statements = queries_for(site, url("me"), site.basic("subscriber"))
    assert len(statements) <= 3, statements
    assert not any("FROM users WHERE id" in statement for statement in statements)


def test_an_administrator_only_route_takes_at_most_three_queries(site: Site) -> None:
    statements = queries_for(
        site, "/site-json/auth-test/v1/admin-only", site.basic("administrator")
    )
    assert len(statements) <= 3, statements


def test_another_users_passwords_read_that_user_once(site: Site) -> None:
    sam = site.users["subscriber"]
    site.app.auth.app_passwords.create(sam, "Phone")
    statements = queries_for(site, url(sam.id), site.basic("administrator"))
    reads = [statement for statement in statements if "FROM users WHERE id" in statement]
    assert len(reads) == 1, statements


def test_a_deleted_current_user_is_not_served_from_a_stale_read(site: Site) -> None:
    password = site.app_password("subscriber")
    headers = basic(site.users["subscriber"].login, password)
    client = site.client()
    assert client.get(url("me"), headers=headers).status_code == 200
    with site.app.auth.store.transaction() as db:
        db.execute("DELETE FROM users WHERE id = ?", (site.users["subscriber"].id,))
    assert client.get(url("me"), headers=headers).status_code == 401


def test_an_administrator_route_reads_only_the_user_and_their_passwords(site: Site) -> None:
    # The first request wrote the use, so this one reads again: the store's change stamp, then
    # the user and their passwords in one query, then the login throttle's buckets of this
    # account and address in one (#29: Basic is throttled as the login form is).
    statements = queries_for(
        site, "/site-json/auth-test/v1/admin-only", site.basic("administrator")
    )
    assert statements[0] == "PRAGMA data_version"
    (read, throttle) = statements[1:]
    assert "FROM users u LEFT JOIN app_passwords p" in read
    assert "WHERE lower(u.login)" in read
    assert throttle.startswith("SELECT scope, next_allowed FROM login_throttle")


def test_an_email_address_still_authenticates(site: Site) -> None:
    ada = site.users["administrator"]
    password = site.app_password("administrator", name="by-mail")
    response = site.client().get(
        "/site-json/auth-test/v1/whoami", headers=basic(ada.email, password)
    )
    assert response.status_code == 200
    assert response.get_json()["id"] == ada.id
