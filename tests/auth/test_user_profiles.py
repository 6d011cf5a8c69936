"""User profiles in the repository: slugs, updates, queries, deletion and the last administrator.

Migration 2 adds the profile columns and gives every existing user a unique slug; the
repository keeps slugs unique, updates only the fields it knows, searches with LIKE wildcards
taken literally, and refuses (atomically) any change that would leave the site without an
administrator.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from sitecache.auth import AuthService, PasswordHasher
from sitecache.auth.store import MIGRATIONS, SiteStore
from sitecache.auth.users import UserQuery, slugify
from sitecache.domain_errors import DomainError
from tests.conftest import rest_error_of

PASSWORD = "correct horse battery"


@pytest.fixture
def auth(tmp_path: Path) -> AuthService:
    return AuthService(tmp_path / "var", hasher=PasswordHasher(n=1024))


@pytest.mark.parametrize(
    ("login", "slug"),
    [
        ("Jo Smith", "jo-smith"),
        ("jo.smith", "jo-smith"),
        ("a@b.org", "ab-org"),
        ("x--y", "x-y"),
        ("@@@", ""),
        ("Under_Score", "under_score"),
    ],
)
def test_slugs_are_lower_case_words_joined_by_hyphens(login: str, slug: str) -> None:
    assert slugify(login) == slug


def test_migration_2_gives_existing_users_unique_slugs_and_nicknames(tmp_path: Path) -> None:
    path = tmp_path / "site.db"
    connection = sqlite3.connect(path)
    connection.executescript(MIGRATIONS[0][1] + "; PRAGMA user_version = 1;")
    for login in ("Jo Smith", "jo.smith", "ann"):
        connection.execute(
            "INSERT INTO users (login, email, display_name, role, password_hash, registered)"
            " VALUES (?, ?, ?, 'subscriber', 'x', 0)",
            (login, f"{login.replace(' ', '')}@example.org", login),
        )
    connection.commit()
    connection.close()
    store = SiteStore(path)
    assert store.migrate() == MIGRATIONS[-1][0]  # 2, and every later one
    rows = store.connection().execute("SELECT id, slug, nickname FROM users ORDER BY id")
    assert [tuple(row) for row in rows] == [
        (1, "jo-smith-1", "Jo Smith"),
        (2, "jo-smith-2", "jo.smith"),
        (3, "ann", "ann"),
    ]


def test_new_users_get_a_free_slug(auth: AuthService) -> None:
    first = auth.users.create("Jo Smith", PASSWORD)
    second = auth.users.create("jo.smith", PASSWORD, email="jo2@example.org")
    third = auth.users.create("@@@", PASSWORD, email="at@example.org")
    assert (first.slug, second.slug, third.slug) == ("jo-smith", "jo-smith-2", "user")
    assert first.nickname == "Jo Smith"
    assert auth.users.find_by_slug("jo-smith-2") == second


def test_a_given_slug_must_be_free(auth: AuthService) -> None:
    auth.users.create("ann", PASSWORD)
    with pytest.raises(DomainError) as caught:
        auth.users.create("bob", PASSWORD, profile={"slug": "ANN"})
    assert caught.value.code == "rest_user_invalid_slug"


def test_update_changes_only_the_fields_it_is_given(auth: AuthService) -> None:
    user = auth.users.create("ann", PASSWORD, email="ann@example.org")
    updated = auth.users.update(user, {"first_name": "Ann", "url": "https://ann.example"})
    assert (updated.first_name, updated.url, updated.email) == (
        "Ann",
        "https://ann.example",
        "ann@example.org",
    )
    with pytest.raises(ValueError, match="login"):
        auth.users.update(user, {"login": "other"})


def test_update_refuses_a_taken_email_or_an_unknown_role(auth: AuthService) -> None:
    auth.users.create("ann", PASSWORD, email="ann@example.org")
    bob = auth.users.create("bob", PASSWORD)
    for change, code in (
        ({"email": "ANN@example.org"}, "existing_user_email"),
        ({"role": "overlord"}, "invalid_role"),
        ({"email": "nope"}, "invalid_email"),
    ):
        with pytest.raises(DomainError) as caught:
            auth.users.update(bob, change)
        assert caught.value.code == code


def test_search_takes_wildcards_literally(auth: AuthService) -> None:
    auth.users.create("ann_1", PASSWORD)
    auth.users.create("annx1", PASSWORD)
    found, total = auth.users.query(UserQuery(search="ann_"))
    assert ([user.login for user in found], total) == (["ann_1"], 1)
    assert auth.users.query(UserQuery(search="%"))[1] == 0


def test_the_last_administrator_can_be_neither_deleted_nor_demoted(auth: AuthService) -> None:
    root = auth.users.create("root", PASSWORD, "administrator")
    for attempt in (
        lambda: auth.users.delete(root),
        lambda: auth.users.update(root, {"role": "editor"}),
    ):
        with pytest.raises(DomainError) as caught:
            attempt()
        assert caught.value.code == "rest_user_last_administrator"
        assert rest_error_of(caught.value).data == {"status": 409}
    assert auth.users.get(root.id) == root
    second = auth.users.create("second", PASSWORD, "administrator")
    assert auth.users.update(root, {"role": "editor"}).role == "editor"
    with pytest.raises(DomainError):
        auth.users.delete(second)


def test_two_administrators_deleting_each_other_at_once_leave_one(tmp_path: Path) -> None:
    data_dir = tmp_path / "var"
    setup = AuthService(data_dir, hasher=PasswordHasher(n=1024))
    first = setup.users.create("first", PASSWORD, "administrator")
    second = setup.users.create("second", PASSWORD, "administrator")
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def delete(target_login: str) -> None:
        auth = AuthService(data_dir, hasher=PasswordHasher(n=1024))
        target = first if target_login == "first" else second
        barrier.wait()
        try:
            auth.users.delete(target)
            outcomes.append("deleted")
        except DomainError as error:
            outcomes.append(error.code)

    threads = [threading.Thread(target=delete, args=(name,)) for name in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["deleted", "rest_user_last_administrator"]
    assert setup.users.count_role("administrator") == 1
