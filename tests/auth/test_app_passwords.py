"""Application passwords as a service: creation, storage, matching, availability.

A password is 24 random letters and digits, shown once in groups of four and stored only as a
keyed hash; it is accepted with or without its spaces. Each record has a uuid, an application
id, a name unique per user, its creation time and the time and address of its last use.
Availability (``auto``): over TLS or from a loopback client; ``on``/``off`` force it.
"""

from __future__ import annotations

import base64
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from sitecache.auth import AuthService, PasswordHasher
from sitecache.auth.app_passwords import (
    ApplicationPasswordPolicy,
    BasicCredentials,
    chunk_password,
    parse_basic_authorization,
)
from sitecache.auth.roles import SiteUser
from sitecache.domain_errors import DomainError, UnauthorizedError
from tests.auth.conftest import FakeClock
from tests.conftest import both_engines, rest_error_of

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


GROUPED = re.compile(r"[A-Za-z0-9]{4}( [A-Za-z0-9]{4}){5}")
APP_ID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"


@pytest.fixture
def auth(tmp_path: Path, clock: FakeClock) -> AuthService:
    return AuthService(tmp_path / "var", hasher=PasswordHasher(n=1024), clock=clock)


@pytest.fixture
def eve(auth: AuthService) -> SiteUser:
    return auth.users.create("eve", "correct horse battery", "author", "eve@example.org")


def encoded(text: str) -> str:
    return "Basic " + base64.b64encode(text.encode()).decode()


# ---------------------------------------------------------------------- parsing
@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (encoded("eve:abcd efgh"), BasicCredentials("eve", "abcd efgh")),
        (encoded("eve:pa:ss"), BasicCredentials("eve", "pa:ss")),
        (encoded("eve:"), BasicCredentials("eve", "")),
        ("basic " + base64.b64encode(b"eve:x").decode(), BasicCredentials("eve", "x")),
        ("Bearer abc", None),
        ("", None),
        (None, None),
    ],
)
def test_basic_authorization_headers_are_parsed(
    header: str | None, expected: BasicCredentials | None
) -> None:
    assert parse_basic_authorization(header) == expected


@pytest.mark.parametrize(
    "header",
    [
        encoded("eve"),
        "Basic",
        "Basic ",
        "Basic !!!notbase64",
        "Basic " + base64.b64encode(b"\xff\xfe:x").decode(),
    ],
)
def test_a_malformed_basic_header_is_a_401_not_anonymous(header: str) -> None:
    with pytest.raises(UnauthorizedError) as caught:
        parse_basic_authorization(header)
    error = rest_error_of(caught.value)
    assert (error.code, error.status) == ("invalid_authorization_header", 401)


def b64(text: str) -> str:
    """Standard, padded base64 of ``text`` (UTF-8)."""
    return base64.b64encode(text.encode()).decode()


# (label, base64 after "Basic ", credentials or None for a 401 invalid_authorization_header):
# the final "=" padding may be left out, as lenient RFC 4648 decoders and Apache/PHP allow;
# nothing else is relaxed.
PADDING_CASES: list[tuple[str, str, BasicCredentials | None]] = [
    ("padded-two", b64("eve:abc"), BasicCredentials("eve", "abc")),
    ("unpadded-two", b64("eve:abc").rstrip("="), BasicCredentials("eve", "abc")),
    ("one-of-two-missing", b64("eve:abc")[:-1], BasicCredentials("eve", "abc")),
    ("padded-one", b64("eve:x"), BasicCredentials("eve", "x")),
    ("unpadded-one", b64("eve:x").rstrip("="), BasicCredentials("eve", "x")),
    ("no-padding-needed", b64("eve:ab"), BasicCredentials("eve", "ab")),
    ("admin-x-unpadded", "YWRtaW46eA", BasicCredentials("admin", "x")),
    ("unpadded-slash", b64("eve:a?>").rstrip("="), BasicCredentials("eve", "a?>")),
    ("length-1-mod-4", b64("eve:ab") + "A", None),
    ("length-1-mod-4-short", "YWRtaW46e", None),
    ("three-padding", b64("eve:abc") + "=", None),
    ("over-padded", b64("eve:x") + "==", None),
    ("padding-inside", "ZXZl=Ong", None),
    ("padding-inside-unpadded-end", "ZXZl=OngA", None),
    ("url-safe-slash", b64("eve:a?>").replace("/", "_"), None),
    ("url-safe-plus", b64("eve:~~~").replace("+", "-"), None),
    ("url-safe-unpadded", b64("eve:~~~").replace("+", "-").rstrip("="), None),
    ("not-base64", "!!!notbase64", None),
    ("only-padding", "==", None),
]


@pytest.mark.parametrize(
    ("encoded_credentials", "expected"),
    [case[1:] for case in PADDING_CASES],
    ids=[case[0] for case in PADDING_CASES],
)
def test_basic_credentials_may_omit_their_base64_padding_and_nothing_else(
    encoded_credentials: str, expected: BasicCredentials | None
) -> None:
    header = "Basic " + encoded_credentials
    if expected is not None:
        assert parse_basic_authorization(header) == expected
        return
    with pytest.raises(UnauthorizedError) as caught:
        parse_basic_authorization(header)
    error = rest_error_of(caught.value)
    assert (error.code, error.status) == ("invalid_authorization_header", 401)


def test_a_password_is_shown_in_groups_of_four() -> None:
    assert chunk_password("abcdefghijklmnopqrstuvwx") == "abcd efgh ijkl mnop qrst uvwx"


# ---------------------------------------------------------------------- availability
@pytest.mark.parametrize(
    ("mode", "environ", "available"),
    [
        ("auto", {"wsgi.url_scheme": "https", "REMOTE_ADDR": "203.0.113.5"}, True),
        ("auto", {"wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1"}, True),
        ("auto", {"wsgi.url_scheme": "http", "REMOTE_ADDR": "127.8.9.10"}, True),
        ("auto", {"wsgi.url_scheme": "http", "REMOTE_ADDR": "::1"}, True),
        ("auto", {"wsgi.url_scheme": "http", "REMOTE_ADDR": "203.0.113.5"}, False),
        ("auto", {"wsgi.url_scheme": "http", "REMOTE_ADDR": "10.0.0.5"}, False),
        ("auto", {"wsgi.url_scheme": "http", "REMOTE_ADDR": "localhost"}, False),
        ("auto", {"wsgi.url_scheme": "http"}, False),
        ("on", {"wsgi.url_scheme": "http", "REMOTE_ADDR": "203.0.113.5"}, True),
        ("off", {"wsgi.url_scheme": "https", "REMOTE_ADDR": "127.0.0.1"}, False),
    ],
)
def test_availability_follows_the_policy(
    mode: str, environ: dict[str, Any], available: bool
) -> None:
    assert ApplicationPasswordPolicy(mode).available(environ) is available


def test_the_default_policy_is_auto() -> None:
    assert ApplicationPasswordPolicy().mode == "auto"


# ---------------------------------------------------------------------- the service
def test_a_new_password_is_24_letters_and_digits_shown_grouped(
    auth: AuthService, eve: SiteUser, clock: FakeClock
) -> None:
    password, record = auth.app_passwords.create(eve, "deploy", APP_ID)
    assert GROUPED.fullmatch(password)
    assert uuid.UUID(record.uuid)
    assert (record.user_id, record.app_id, record.name) == (eve.id, APP_ID, "deploy")
    assert record.created == int(clock.now)
    assert (record.last_used, record.last_ip) == (None, None)
    assert auth.app_passwords.get(eve, record.uuid) == record


def test_only_a_keyed_hash_of_the_password_is_stored(auth: AuthService, eve: SiteUser) -> None:
    password, record = auth.app_passwords.create(eve, "deploy")
    row = (
        auth.store.connection()
        .execute("SELECT password_hash FROM app_passwords WHERE uuid = ?", (record.uuid,))
        .fetchone()
    )
    stored = str(row["password_hash"])
    assert password.replace(" ", "") not in stored
    assert password not in stored
    assert len(stored) == 64


@pytest.mark.parametrize(
    "transform",
    [
        lambda password: password,
        lambda password: password.replace(" ", ""),
        lambda password: password.replace(" ", "-"),
        lambda password: password.replace(" ", "\t"),
    ],
)
def test_a_password_matches_with_or_without_separators(
    auth: AuthService, eve: SiteUser, transform: Any
) -> None:
    password, record = auth.app_passwords.create(eve, "deploy")
    user, matched = auth.app_passwords.authenticate(
        BasicCredentials("eve", transform(password)), "::1"
    )
    assert (user, matched.uuid) == (eve, record.uuid)


@pytest.mark.parametrize(
    ("login", "password", "code"),
    [
        ("nobody", "{password}", "incorrect_password"),  # the same answer (#29)
        ("eve", "{password}x", "incorrect_password"),
        ("eve", "correct horse battery", "incorrect_password"),
    ],
)
def test_failures_are_401_errors(
    auth: AuthService, eve: SiteUser, login: str, password: str, code: str
) -> None:
    real, _ = auth.app_passwords.create(eve, "deploy")
    with pytest.raises(UnauthorizedError) as caught:
        auth.app_passwords.authenticate(
            BasicCredentials(login, password.format(password=real)), "::1"
        )
    result = rest_error_of(caught.value)
    assert result.code == code
    assert result.data["status"] == 401


def test_a_use_records_the_time_and_address(
    auth: AuthService, eve: SiteUser, clock: FakeClock
) -> None:
    password, record = auth.app_passwords.create(eve, "deploy")
    clock.advance(600)
    auth.app_passwords.authenticate(BasicCredentials("eve", password), "192.0.2.7")
    used = auth.app_passwords.get(eve, record.uuid)
    assert used is not None
    assert (used.last_used, used.last_ip) == (int(clock.now), "192.0.2.7")
    clock.advance(3600)
    auth.app_passwords.authenticate(BasicCredentials("eve", password), "192.0.2.8")
    used = auth.app_passwords.get(eve, record.uuid)
    assert used is not None
    assert (used.last_used, used.last_ip) == (int(clock.now), "192.0.2.8")


def test_names_are_unique_per_user(auth: AuthService, eve: SiteUser) -> None:
    other = auth.users.create("max", "correct horse battery", "author")
    auth.app_passwords.create(eve, "deploy")
    auth.app_passwords.create(other, "deploy")
    with pytest.raises(DomainError) as caught:
        auth.app_passwords.create(eve, "deploy")
    assert caught.value.code == "application_password_duplicate_name"
    assert rest_error_of(caught.value).data["status"] == 409


def test_a_users_passwords_are_listed_oldest_first_and_deleted(
    auth: AuthService, eve: SiteUser, clock: FakeClock
) -> None:
    _, first = auth.app_passwords.create(eve, "first")
    clock.advance(1)
    _, second = auth.app_passwords.create(eve, "second")
    assert [record.uuid for record in auth.app_passwords.list(eve)] == [first.uuid, second.uuid]
    assert auth.app_passwords.delete(eve, first.uuid) is True
    assert auth.app_passwords.delete(eve, first.uuid) is False
    assert auth.app_passwords.delete_all(eve) == 1
    assert auth.app_passwords.list(eve) == []


def test_one_user_cannot_reach_anothers_password_by_uuid(auth: AuthService, eve: SiteUser) -> None:
    other = auth.users.create("max", "correct horse battery", "author")
    _, record = auth.app_passwords.create(eve, "deploy")
    assert auth.app_passwords.get(other, record.uuid) is None
    assert auth.app_passwords.delete(other, record.uuid) is False
    assert auth.app_passwords.rename(other, record.uuid, "mine") is None
    assert auth.app_passwords.get(eve, record.uuid) == record
