"""Password hashing and the user repository.

User passwords are hashed with scrypt and a per-user random salt, stored as
``scrypt$n$r$p$salt$hash``, and verified with a constant-time comparison; the users table never
holds a password. Users have a unique login and e-mail address and one of the five roles.
"""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sitecache.auth import AuthService, PasswordHasher
from sitecache.auth import passwords as passwords_module
from sitecache.auth.passwords import generate_password, keyed_hash, keyed_hash_matches
from sitecache.domain_errors import DomainError
from tests.auth.conftest import FakeClock
from tests.conftest import both_engines, rest_error_of

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


PASSWORD = "correct horse battery"


@pytest.fixture
def hasher() -> PasswordHasher:
    return PasswordHasher(n=1024)


@pytest.fixture
def auth(tmp_path: Path, clock: FakeClock) -> AuthService:
    return AuthService(tmp_path / "var", hasher=PasswordHasher(n=1024), clock=clock)


def stored_hashes(auth: AuthService) -> dict[str, str]:
    rows = auth.store.connection().execute("SELECT login, password_hash FROM users").fetchall()
    return {str(row["login"]): str(row["password_hash"]) for row in rows}


# ---------------------------------------------------------------------- hashing
def test_a_hash_is_scrypt_with_its_cost_salt_and_digest(hasher: PasswordHasher) -> None:
    stored = hasher.hash(PASSWORD)
    scheme, n, r, p, salt, digest = stored.split("$")
    assert (scheme, n, r, p) == ("scrypt", "1024", "8", "1")
    assert salt
    assert digest
    assert PASSWORD not in stored


def test_the_hash_is_the_scrypt_key_of_the_password_and_salt(hasher: PasswordHasher) -> None:
    stored = hasher.hash(PASSWORD)
    _, n, r, p, salt, digest = stored.split("$")
    expected = hashlib.scrypt(
        PASSWORD.encode(),
        salt=passwords_module._unb64(salt),
        n=int(n),
        r=int(r),
        p=int(p),
        dklen=32,
    )
    assert passwords_module._unb64(digest) == expected


def test_hashing_the_same_password_twice_uses_two_salts(hasher: PasswordHasher) -> None:
    first, second = hasher.hash(PASSWORD), hasher.hash(PASSWORD)
    assert first.split("$")[4] != second.split("$")[4]
    assert first != second


@pytest.mark.parametrize(
    ("presented", "accepted"),
    [
        (PASSWORD, True),
        (PASSWORD.upper(), False),
        (PASSWORD + " ", False),
        ("", False),
        ("correct horse batter", False),
    ],
)
def test_verify_accepts_only_the_exact_password(
    hasher: PasswordHasher, presented: str, accepted: bool
) -> None:
    assert hasher.verify(presented, hasher.hash(PASSWORD)) is accepted


@pytest.mark.parametrize(
    "stored",
    ["", "plain-text", "md5$abc$def", "scrypt$x$8$1$c2FsdA$ZGlnZXN0", "scrypt$1024$8$1$salt"],
)
def test_verify_refuses_a_malformed_stored_hash(hasher: PasswordHasher, stored: str) -> None:
    assert hasher.verify(PASSWORD, stored) is False


def test_a_hash_made_at_another_cost_still_verifies(hasher: PasswordHasher) -> None:
    stronger = PasswordHasher(n=2048).hash(PASSWORD)
    assert hasher.verify(PASSWORD, stronger)


def test_verification_compares_in_constant_time(
    hasher: PasswordHasher, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    stored = hasher.hash(PASSWORD)
    monkeypatch.setattr("sitecache.auth.passwords.hmac.compare_digest", spy)
    assert hasher.verify(PASSWORD, stored)
    assert not hasher.verify("wrong password", stored)
    assert len(calls) == 2


def test_keyed_hash_matching_compares_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    key = b"k" * 32
    stored = keyed_hash(key, "secret", "purpose")
    monkeypatch.setattr("sitecache.auth.passwords.hmac.compare_digest", spy)
    assert keyed_hash_matches(key, "secret", "purpose", stored)
    assert calls


@pytest.mark.parametrize(
    ("key", "secret", "purpose"),
    [
        (b"other-key" * 4, "secret", "purpose"),
        (b"k" * 32, "Secret", "purpose"),
        (b"k" * 32, "secret", "session"),
    ],
)
def test_a_keyed_hash_depends_on_key_secret_and_purpose(
    key: bytes, secret: str, purpose: str
) -> None:
    stored = keyed_hash(b"k" * 32, "secret", "purpose")
    assert not keyed_hash_matches(key, secret, purpose, stored)
    assert "secret" not in stored


def test_a_keyed_hash_is_the_hmac_sha256_of_purpose_and_secret_under_the_key() -> None:
    # Stored hashes must keep matching: the prepared HMAC per key gives the plain HMAC's value,
    # under each of several keys used in turn (more keys than it keeps prepared).
    for round_ in range(2):
        for number in range(12):
            key = bytes([number]) * (16 + number)
            secret = f"s{round_}-{number}-\u00e9\udcff"
            message = f"purpose\0{secret}".encode("utf-8", "surrogatepass")
            expected = hmac.new(key, message, hashlib.sha256).hexdigest()
            assert keyed_hash(key, secret, "purpose") == expected


def test_generated_passwords_are_random_letters_and_digits() -> None:
    passwords = {generate_password() for _ in range(20)}
    assert len(passwords) == 20
    assert all(len(password) == 24 and password.isalnum() for password in passwords)
    assert all(password.isascii() for password in passwords)


# ---------------------------------------------------------------------- users
def test_a_created_user_has_its_role_email_and_a_hashed_password(
    auth: AuthService, clock: FakeClock
) -> None:
    user = auth.users.create("ada", PASSWORD, "administrator", "ada@example.org")
    assert (user.login, user.email, user.role, user.display_name) == (
        "ada",
        "ada@example.org",
        "administrator",
        "ada",
    )
    assert user.registered == int(clock.now)
    stored = stored_hashes(auth)["ada"]
    assert stored.startswith("scrypt$")
    assert PASSWORD not in stored


def test_two_users_with_the_same_password_get_different_hashes(auth: AuthService) -> None:
    auth.users.create("ada", PASSWORD, "administrator")
    auth.users.create("sam", PASSWORD, "subscriber")
    hashes = stored_hashes(auth)
    assert hashes["ada"] != hashes["sam"]


def test_the_database_file_never_contains_a_password(auth: AuthService, tmp_path: Path) -> None:
    auth.users.create("ada", PASSWORD, "administrator")
    auth.store.close()
    with sqlite3.connect(tmp_path / "var" / "site.db") as connection:
        connection.execute("PRAGMA wal_checkpoint(FULL)")
    for file in (tmp_path / "var").iterdir():
        assert PASSWORD.encode() not in file.read_bytes(), file.name


@pytest.mark.parametrize(
    ("call", "code", "status"),
    [
        (lambda users: users.create("", PASSWORD), "invalid_username", 400),
        (lambda users: users.create("bad<login>", PASSWORD), "invalid_username", 400),
        (lambda users: users.create("zed", PASSWORD, "superuser"), "invalid_role", 400),
        (lambda users: users.create("zed", "short"), "weak_password", 400),
        (lambda users: users.create("zed", PASSWORD, email="not-an-email"), "invalid_email", 400),
        (lambda users: users.create("ADA", PASSWORD), "existing_user_login", 409),
        (
            lambda users: users.create("zed", PASSWORD, email="Ada@Example.org"),
            "existing_user_email",
            409,
        ),
    ],
)
def test_creating_an_invalid_user_is_refused(
    auth: AuthService, call: Callable[[Any], Any], code: str, status: int
) -> None:
    auth.users.create("ada", PASSWORD, "administrator", "ada@example.org")
    with pytest.raises(DomainError) as caught:
        call(auth.users)
    assert caught.value.code == code
    assert rest_error_of(caught.value).data["status"] == status
    assert auth.users.count() == 1


@pytest.mark.parametrize("name", ["ada", "ADA", "ada@example.org", "ADA@EXAMPLE.ORG"])
def test_a_user_is_found_by_login_or_email_ignoring_case(auth: AuthService, name: str) -> None:
    created = auth.users.create("ada", PASSWORD, "administrator", "ada@example.org")
    assert auth.users.find(name) == created


def test_an_unknown_login_finds_nobody(auth: AuthService) -> None:
    auth.users.create("ada", PASSWORD, "administrator", "ada@example.org")
    assert auth.users.find("bob") is None
    assert auth.users.find("bob@example.org") is None
    assert auth.users.get(999) is None


def test_check_password_accepts_only_the_users_password(auth: AuthService) -> None:
    ada = auth.users.create("ada", PASSWORD, "administrator")
    sam = auth.users.create("sam", "another password", "subscriber")
    assert auth.users.check_password(ada, PASSWORD)
    assert not auth.users.check_password(ada, "another password")
    assert not auth.users.check_password(sam, PASSWORD)


def test_changing_a_password_replaces_the_hash_and_ends_every_session(
    auth: AuthService,
) -> None:
    ada = auth.users.create("ada", PASSWORD, "administrator")
    first = auth.sessions.create(ada)
    second = auth.sessions.create(ada, remember=True)
    auth.users.set_password(ada, "a brand new password")
    assert auth.users.check_password(ada, "a brand new password")
    assert not auth.users.check_password(ada, PASSWORD)
    assert auth.sessions.find(first.token) is None
    assert auth.sessions.find(second.token) is None


def test_a_weak_new_password_is_refused(auth: AuthService) -> None:
    ada = auth.users.create("ada", PASSWORD, "administrator")
    with pytest.raises(DomainError) as caught:
        auth.users.set_password(ada, "short")
    assert caught.value.code == "weak_password"
    assert auth.users.check_password(ada, PASSWORD)
