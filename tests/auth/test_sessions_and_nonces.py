"""Server-side login sessions and nonces, driven by a fake clock.

A session token is random, stored only as a keyed hash, revocable, and expires after 2 days
(14 with "remember me"). A nonce is bound to an action, a user and that user's session token,
is valid in the current and the previous half-day tick (1 and 2 from `NonceService.verify`, 0
when invalid), and is compared in constant time.
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Any

import pytest

from sitecache.auth import AuthService, PasswordHasher
from sitecache.auth.nonces import NonceService
from sitecache.auth.roles import SiteUser
from tests.auth.conftest import FakeClock
from tests.conftest import both_engines

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


DAY = 24 * 3600
HALF_DAY = 12 * 3600
KEY = b"0123456789abcdef" * 4


@pytest.fixture
def auth(tmp_path: Path, clock: FakeClock) -> AuthService:
    return AuthService(tmp_path / "var", hasher=PasswordHasher(n=1024), clock=clock)


@pytest.fixture
def ada(auth: AuthService) -> SiteUser:
    return auth.users.create("ada", "correct horse battery", "administrator")


def session_rows(auth: AuthService) -> list[dict[str, Any]]:
    rows = auth.store.connection().execute("SELECT * FROM sessions").fetchall()
    return [dict(row) for row in rows]


# ---------------------------------------------------------------------- sessions
def test_a_session_is_found_by_its_token(auth: AuthService, ada: SiteUser) -> None:
    session = auth.sessions.create(ada, ip="127.0.0.1", user_agent="pytest")
    found = auth.sessions.find(session.token)
    assert found is not None
    assert found.user == ada
    assert found.token == session.token


def test_session_tokens_are_long_and_random(auth: AuthService, ada: SiteUser) -> None:
    tokens = {auth.sessions.create(ada).token for _ in range(10)}
    assert len(tokens) == 10
    assert all(len(token) >= 32 for token in tokens)


def test_only_a_hash_of_the_session_token_is_stored(auth: AuthService, ada: SiteUser) -> None:
    session = auth.sessions.create(ada, ip="127.0.0.1", user_agent="pytest")
    (row,) = session_rows(auth)
    assert session.token not in {str(value) for value in row.values()}
    assert all(session.token not in str(value) for value in row.values())
    assert row["user_id"] == ada.id
    assert (row["ip"], row["user_agent"]) == ("127.0.0.1", "pytest")


@pytest.mark.parametrize(
    "token", [None, "", "not-a-session", "x" * 129, "q8nzaF_-D2KDoYhVDI1CEs1hVpXZUlJolxdCzhf3GGw"]
)
def test_an_unknown_token_has_no_session(
    auth: AuthService, ada: SiteUser, token: str | None
) -> None:
    auth.sessions.create(ada)
    assert auth.sessions.find(token) is None


@pytest.mark.parametrize(("remember", "lifetime"), [(False, 2 * DAY), (True, 14 * DAY)])
def test_a_session_expires_after_2_days_or_14_with_remember_me(
    auth: AuthService, ada: SiteUser, clock: FakeClock, remember: bool, lifetime: int
) -> None:
    session = auth.sessions.create(ada, remember=remember)
    assert session.expires == int(clock.now) + lifetime
    clock.advance(lifetime - 1)
    assert auth.sessions.find(session.token) is not None
    clock.advance(1)
    assert auth.sessions.find(session.token) is None


def test_the_cookie_lives_for_the_browser_session_without_remember_me(
    auth: AuthService, ada: SiteUser, clock: FakeClock
) -> None:
    short = auth.sessions.create(ada)
    long = auth.sessions.create(ada, remember=True)
    assert auth.sessions.cookie_max_age(short) is None
    assert auth.sessions.cookie_max_age(long) == 14 * DAY
    clock.advance(DAY)
    assert auth.sessions.cookie_max_age(long) == 13 * DAY


def test_a_revoked_session_is_gone(auth: AuthService, ada: SiteUser) -> None:
    kept = auth.sessions.create(ada)
    revoked = auth.sessions.create(ada)
    auth.sessions.revoke(revoked.token)
    assert auth.sessions.find(revoked.token) is None
    assert auth.sessions.find(kept.token) is not None


def test_revoking_every_session_of_a_user_spares_other_users(
    auth: AuthService, ada: SiteUser
) -> None:
    sam = auth.users.create("sam", "correct horse battery", "subscriber")
    tokens = [auth.sessions.create(ada).token for _ in range(3)]
    other = auth.sessions.create(sam)
    assert auth.sessions.revoke_all(ada) == 3
    assert all(auth.sessions.find(token) is None for token in tokens)
    assert auth.sessions.find(other.token) is not None


def test_expired_sessions_are_purged_when_a_new_one_starts(
    auth: AuthService, ada: SiteUser, clock: FakeClock
) -> None:
    auth.sessions.create(ada)
    clock.advance(2 * DAY)
    auth.sessions.create(ada)
    assert len(session_rows(auth)) == 1


# ---------------------------------------------------------------------- nonces
@pytest.fixture
def nonces(clock: FakeClock) -> NonceService:
    return NonceService(KEY, clock=clock)


def test_the_tick_is_the_half_day(nonces: NonceService, clock: FakeClock) -> None:
    clock.now = 1000 * HALF_DAY
    assert nonces.tick() == 1000
    clock.advance(1)
    assert nonces.tick() == 1001
    clock.advance(HALF_DAY - 1)
    assert nonces.tick() == 1001


def test_a_nonce_is_ten_hex_characters(nonces: NonceService) -> None:
    nonce = nonces.create("site_rest", 1, "token")
    assert len(nonce) == 10
    int(nonce, 16)


def test_a_nonce_is_valid_in_its_tick_and_the_next(nonces: NonceService, clock: FakeClock) -> None:
    clock.now = 1000 * HALF_DAY + 1  # the very start of tick 1001
    nonce = nonces.create("site_rest", 1, "token")
    clock.advance(HALF_DAY - 1)  # the end of tick 1001
    assert nonces.verify(nonce, "site_rest", 1, "token") == 1
    clock.advance(1)  # tick 1002
    assert nonces.verify(nonce, "site_rest", 1, "token") == 2
    clock.advance(HALF_DAY - 1)  # the end of tick 1002
    assert nonces.verify(nonce, "site_rest", 1, "token") == 2
    clock.advance(1)  # tick 1003
    assert nonces.verify(nonce, "site_rest", 1, "token") == 0


def test_a_nonce_made_at_the_end_of_a_tick_lives_at_least_twelve_hours(
    nonces: NonceService, clock: FakeClock
) -> None:
    clock.now = 1001 * HALF_DAY  # the last second of tick 1001
    nonce = nonces.create("site_rest", 1, "token")
    clock.advance(HALF_DAY)
    assert nonces.verify(nonce, "site_rest", 1, "token") == 2
    clock.advance(1)
    assert nonces.verify(nonce, "site_rest", 1, "token") == 0


def test_a_nonce_from_the_future_is_invalid(nonces: NonceService, clock: FakeClock) -> None:
    clock.advance(HALF_DAY)
    nonce = nonces.create("site_rest", 1, "token")
    clock.advance(-HALF_DAY)
    assert nonces.verify(nonce, "site_rest", 1, "token") == 0


@pytest.mark.parametrize(
    ("action", "user_id", "token"),
    [
        ("log-out", 1, "token"),
        ("site_rest", 2, "token"),
        ("site_rest", 0, "token"),
        ("site_rest", 1, "another-token"),
        ("site_rest", 1, ""),
    ],
)
def test_a_nonce_is_bound_to_its_action_user_and_session(
    nonces: NonceService, action: str, user_id: int, token: str
) -> None:
    nonce = nonces.create("site_rest", 1, "token")
    assert nonces.verify(nonce, "site_rest", 1, "token") == 1
    assert nonces.verify(nonce, action, user_id, token) == 0


def test_a_nonce_depends_on_the_site_key(clock: FakeClock) -> None:
    nonce = NonceService(KEY, clock=clock).create("site_rest", 1, "token")
    other = NonceService(b"another site key" * 4, clock=clock)
    assert other.verify(nonce, "site_rest", 1, "token") == 0


@pytest.mark.parametrize("presented", [None, "", 12345, b"abc", ["x"], "0000000000", "zzzzzzzzzz"])
def test_anything_but_the_nonce_string_is_invalid(nonces: NonceService, presented: Any) -> None:
    assert nonces.verify(presented, "site_rest", 1, "token") == 0


def test_the_anonymous_visitor_gets_nonces_too(nonces: NonceService) -> None:
    nonce = nonces.create("site_rest", 0)
    assert nonces.verify(nonce, "site_rest", 0) == 1
    assert nonces.verify(nonce, "site_rest", 0, "token") == 0


def test_nonce_verification_compares_in_constant_time(
    nonces: NonceService, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    nonce = nonces.create("site_rest", 1, "token")
    monkeypatch.setattr("sitecache.auth.nonces.hmac.compare_digest", spy)
    assert nonces.verify(nonce, "site_rest", 1, "token") == 1
    assert calls
    assert all(presented == nonce.encode() for _, presented in calls)
    calls.clear()
    assert nonces.verify("0123456789", "site_rest", 1, "token") == 0
    assert len(calls) == 2


@pytest.mark.parametrize("nonce", ["\u00e9", "\u00c3\u00a9", "abc\u20ac", "\ud800", "\x00"])
def test_a_non_ascii_nonce_is_simply_invalid(nonces: NonceService, nonce: str) -> None:
    assert nonces.verify(nonce, "site_rest", 1, "token") == 0


def test_the_auth_service_nonces_follow_its_clock(auth: AuthService, clock: FakeClock) -> None:
    nonce = auth.nonces.create("site_rest", 1, "token")
    clock.advance(DAY + 1)
    assert auth.nonces.verify(nonce, "site_rest", 1, "token") == 0
