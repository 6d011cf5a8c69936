"""What authentication keeps of an application password's read, and when it reads again (#18).

An application-password request reads the user and their passwords (hashes included) in one
query; on SQLite that read is kept per login and connection and given back only while the
store's change stamp (``PRAGMA data_version`` and the connection's own writes) says nothing was
written to the database since, by anyone. So a revoked password, a new one, a changed role or
a deleted user counts from the very next request, whichever worker or process wrote it, while
a run of requests with nothing written in between reads only the stamp. On PostgreSQL there is
no such stamp and every request reads (one query).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from sitecache.auth.app_passwords import ApplicationPasswords, BasicCredentials
from sitecache.auth.store import SiteStore
from sitecache.domain_errors import UnauthorizedError
from tests.auth.conftest import ADMIN_ONLY, Site, basic
from tests.auth.test_query_count import traced
from tests.auth.test_rest_routes import url
from tests.conftest import both_engines

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


@contextmanager
def other_worker(site: Site) -> Iterator[SiteStore]:
    """The site's database as another worker (or node) sees it: a store of its own, with its
    own connection."""
    auth = site.app.auth.store
    store = SiteStore(auth.path, url=auth.url, auto_migrate=False)
    try:
        yield store
    finally:
        store.close()


def write_elsewhere(site: Site, sql: str, parameters: tuple[Any, ...]) -> None:
    """Run one write on another worker's connection."""
    with other_worker(site) as store, store.transaction() as db:
        assert db.execute(sql, parameters).rowcount == 1


def used_twice(site: Site, headers: dict[str, str], path: str = url("me")) -> None:
    """Two successful requests: the first records the use, the second is served by what was
    read (on SQLite, kept)."""
    client = site.client()
    for _ in range(2):
        response = client.get(path, headers=headers)
        assert response.status_code == 200, response.text


def test_a_password_revoked_by_another_worker_is_refused_at_once(site: Site) -> None:
    headers = site.basic("subscriber")
    used_twice(site, headers)
    sam = site.users["subscriber"]
    write_elsewhere(site, "DELETE FROM app_passwords WHERE user_id = ?", (sam.id,))
    response = site.client().get(url("me"), headers=headers)
    assert response.status_code == 401
    assert response.get_json()["code"] == "incorrect_password"


def test_a_password_revoked_on_this_connection_is_refused_at_once(site: Site) -> None:
    headers = site.basic("subscriber")
    used_twice(site, headers)
    sam = site.users["subscriber"]
    (record,) = site.app.auth.app_passwords.list(sam)
    assert site.app.auth.app_passwords.delete(sam, record.uuid)
    assert site.client().get(url("me"), headers=headers).status_code == 401


def test_a_password_revoked_through_the_api_is_refused_on_the_next_request(site: Site) -> None:
    headers = site.basic("subscriber")
    client = site.client()
    (item,) = client.get(url("me"), headers=headers).get_json()
    deleted = client.delete(f"{url('me')}/{item['uuid']}", headers=headers)
    assert deleted.status_code == 200, deleted.text
    assert client.get(url("me"), headers=headers).status_code == 401


def test_a_password_created_by_another_worker_works_at_once(site: Site) -> None:
    headers = site.basic("subscriber")
    used_twice(site, headers)
    sam = site.users["subscriber"]
    with other_worker(site) as store:
        auth = site.app.auth
        secret, _ = ApplicationPasswords(store, auth.users, auth.key, site.clock).create(
            sam, "made elsewhere"
        )
    response = site.client().get(url("me"), headers=basic(sam.login, secret))
    assert response.status_code == 200, response.text
    assert sorted(item["name"] for item in response.get_json()) == [
        "auth-subscriber",
        "made elsewhere",
    ]


def test_a_role_changed_by_another_worker_counts_at_once(site: Site) -> None:
    headers = site.basic("administrator")
    used_twice(site, headers, ADMIN_ONLY)
    ada = site.users["administrator"]
    write_elsewhere(site, "UPDATE users SET role = ? WHERE id = ?", ("subscriber", ada.id))
    response = site.client().get(ADMIN_ONLY, headers=headers)
    assert response.status_code == 403, response.text
    write_elsewhere(site, "UPDATE users SET role = ? WHERE id = ?", ("administrator", ada.id))
    assert site.client().get(ADMIN_ONLY, headers=headers).status_code == 200


def test_a_user_deleted_by_another_worker_is_unknown_at_once(site: Site) -> None:
    headers = site.basic("subscriber")
    used_twice(site, headers)
    write_elsewhere(site, "DELETE FROM users WHERE id = ?", (site.users["subscriber"].id,))
    response = site.client().get(url("me"), headers=headers)
    assert response.status_code == 401
    # Unknown now, answered as a wrong password is (no user enumeration, #29).
    assert response.get_json()["code"] == "incorrect_password"


def test_a_password_revoked_by_another_process_is_refused_at_once(
    site: Site, database_url: str
) -> None:
    if database_url:
        pytest.skip("another process's SQLite connection: the PostgreSQL case reads every time")
    headers = site.basic("subscriber")
    used_twice(site, headers)
    script = (
        "import sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA busy_timeout = 10000')\n"
        "assert db.execute('DELETE FROM app_passwords').rowcount == 1\n"
    )
    path = str(site.app.auth.store.path)
    subprocess.run([sys.executable, "-c", script, path], check=True, timeout=60)
    assert site.client().get(url("me"), headers=headers).status_code == 401


def test_what_another_thread_kept_is_not_served_on_this_one(site: Site) -> None:
    passwords = site.app.auth.app_passwords
    sam = site.users["subscriber"]
    secret, record = passwords.create(sam, "threaded")
    credentials = BasicCredentials(sam.login, secret)
    seen: list[str] = []

    def on_a_thread() -> None:
        try:
            seen.append(passwords.authenticate(credentials, "")[1].uuid)
        except UnauthorizedError as refused:
            seen.append(refused.code)

    def twice_on_a_thread() -> None:
        on_a_thread()
        on_a_thread()

    worker = threading.Thread(target=twice_on_a_thread)
    worker.start()
    worker.join()
    assert seen == [record.uuid, record.uuid]
    assert passwords.authenticate(credentials, "")[1].uuid == record.uuid  # kept on this one
    assert passwords.delete(sam, record.uuid)  # on this thread's connection
    with pytest.raises(UnauthorizedError):
        passwords.authenticate(credentials, "")
    worker = threading.Thread(target=on_a_thread)
    worker.start()
    worker.join()
    assert seen == [record.uuid, record.uuid, "incorrect_password"]


def test_an_unchanged_database_is_read_once_then_only_stamped(
    site: Site, database_url: str
) -> None:
    headers = site.basic("administrator")
    used_twice(site, headers, ADMIN_ONLY)
    with traced(site) as statements:
        assert site.client().get(ADMIN_ONLY, headers=headers).status_code == 200
    if database_url:
        # PostgreSQL (no change stamp): the user and passwords, joined, and the login
        # throttle's buckets of this account and address (#29).
        assert len(statements) == 2, statements
        assert "LEFT JOIN app_passwords" in statements[0]
        assert "FROM login_throttle" in statements[1]
    else:
        assert statements == ["PRAGMA data_version"]  # the throttle shares the stamp


def test_a_wrong_password_is_refused_when_the_read_is_kept(site: Site) -> None:
    headers = site.basic("subscriber")
    used_twice(site, headers)
    response = site.client().get(url("me"), headers=basic(site.users["subscriber"].login, "x" * 24))
    assert response.status_code == 401
    assert response.get_json()["code"] == "incorrect_password"
    assert site.client().get(url("me"), headers=headers).status_code == 200


def test_what_is_kept_holds_no_presented_secret(site: Site) -> None:
    passwords = site.app.auth.app_passwords
    sam = site.users["subscriber"]
    secret, _ = passwords.create(sam, "kept")
    passwords.authenticate(BasicCredentials(sam.login, secret), "")
    kept = repr(passwords._kept)
    assert secret.replace(" ", "") not in kept
    assert secret not in kept


@contextmanager
def counted_hashes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The application-password keyed hashes computed inside the block."""
    import sitecache.auth.app_passwords as module
    from sitecache.auth.passwords import keyed_hash as real

    calls: list[str] = []

    def counting(key: bytes, secret: str, purpose: str) -> str:
        calls.append(purpose)
        return real(key, secret, purpose)

    monkeypatch.setattr(module, "keyed_hash", counting)
    yield calls


def test_a_verified_secret_is_not_hashed_again_until_anything_is_written(
    site: Site, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers = site.basic("subscriber")
    used_twice(site, headers)  # the first records the use (a write): the second verifies again
    with counted_hashes(monkeypatch) as hashed:
        for _ in range(2):
            assert site.client().get(url("me"), headers=headers).status_code == 200
    # PostgreSQL has no change stamp: every request verifies against the stored hashes.
    assert len(hashed) == (2 if database_url else 0)


def test_a_password_revoked_after_a_verified_request_is_refused_at_once(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers = site.basic("subscriber")
    sam = site.users["subscriber"]
    used_twice(site, headers)
    assert site.client().get(url("me"), headers=headers).status_code == 200
    with other_worker(site) as store:
        auth = site.app.auth
        secret, _ = ApplicationPasswords(store, auth.users, auth.key, site.clock).create(
            sam, "the new one"
        )
    write_elsewhere(site, "DELETE FROM app_passwords WHERE name = ?", ("auth-subscriber",))
    with counted_hashes(monkeypatch) as hashed:
        refused = site.client().get(url("me"), headers=headers)
    assert refused.status_code == 401
    assert refused.get_json()["code"] == "incorrect_password"
    assert len(hashed) == 1  # verified against the stored hashes, not the memo
    assert site.client().get(url("me"), headers=basic(sam.login, secret)).status_code == 200


def test_another_secret_for_a_verified_login_is_still_refused(site: Site) -> None:
    headers = site.basic("subscriber")
    used_twice(site, headers)
    assert site.client().get(url("me"), headers=headers).status_code == 200
    wrong = basic(site.users["subscriber"].login, "A" * 24)
    for _ in range(2):
        response = site.client().get(url("me"), headers=wrong)
        assert response.status_code == 401
        assert response.get_json()["code"] == "incorrect_password"
    assert site.client().get(url("me"), headers=headers).status_code == 200


def test_what_is_verified_holds_no_presented_secret(site: Site, database_url: str) -> None:
    if database_url:
        pytest.skip("no change stamp on PostgreSQL: nothing verified is kept")
    passwords = site.app.auth.app_passwords
    sam = site.users["subscriber"]
    secret, _ = passwords.create(sam, "verified")
    credentials = BasicCredentials(sam.login, secret)
    for _ in range(3):
        passwords.authenticate(credentials, "")
    entries = passwords._verified._entries
    assert list(entries) == [sam.login]  # remembered: the check below looks at something
    kept = repr(entries)
    assert secret.replace(" ", "") not in kept
    assert secret not in kept
