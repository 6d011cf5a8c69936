"""Slowing down password guessing, per account and per client address, with a fake clock.

Past 5 failures for an account from one address (or 20 from an address for any accounts) within
15 minutes, every further attempt must wait; the wait doubles with each failure, up to 15
minutes. Past 50 failures for an account from all addresses together, the account waits too,
but never more than a minute, so no attacker can keep the owner out. A success clears the
account's count for that address. Over HTTP a throttled attempt is answered 429 with
``Retry-After``, and the correct password does not get through while the wait lasts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sitecache.auth.sessions import COOKIE_NAME
from sitecache.auth.store import SiteStore
from sitecache.auth.throttle import LoginThrottle
from tests.auth.conftest import PASSWORD, REMOTE, FakeClock, Site, log_in, set_cookie_headers
from tests.conftest import ENGINES
from tests.postgres import schema

IP = "192.0.2.1"


@pytest.fixture(params=ENGINES)
def throttle(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> Iterator[LoginThrottle]:
    """A throttle on a migrated store, on each engine (PostgreSQL: a schema of its own)."""
    if request.param == "sqlite":
        store = SiteStore(tmp_path / "site.db")
        yield LoginThrottle(store, clock=clock)
        store.close()
        return
    with schema() as url:
        store = SiteStore(url=url, auto_migrate=True)
        store.migrate()
        yield LoginThrottle(store, clock=clock)
        store.close()


def fail(throttle: LoginThrottle, times: int, login: str = "ada", ip: str = IP) -> None:
    for _ in range(times):
        throttle.record_failure(login, ip)


def test_a_few_failures_do_not_slow_anyone_down(throttle: LoginThrottle) -> None:
    fail(throttle, 4)
    assert throttle.wait_seconds("ada", IP) == 0


@pytest.mark.parametrize(
    ("failures", "wait"),
    [(5, 1), (6, 2), (7, 4), (8, 8), (12, 128), (14, 512), (15, 900), (30, 900)],
)
def test_the_wait_doubles_after_five_failures_up_to_fifteen_minutes(
    throttle: LoginThrottle, failures: int, wait: int
) -> None:
    fail(throttle, failures)
    assert throttle.wait_seconds("ada", IP) == wait


def test_a_few_failures_from_other_addresses_do_not_slow_the_owner_down(
    throttle: LoginThrottle,
) -> None:
    for number in range(5):
        throttle.record_failure("ada", f"198.51.100.{number}")
    assert throttle.wait_seconds("ada", "203.0.113.9") == 0


def test_a_distributed_attack_slows_the_account_everywhere_but_for_a_minute_at_most(
    throttle: LoginThrottle,
) -> None:
    for number in range(49):
        throttle.record_failure("ada", f"198.51.{number // 200}.{number % 200}")
    assert throttle.wait_seconds("ada", "203.0.113.9") == 0
    throttle.record_failure("ada", "198.51.100.250")
    assert throttle.wait_seconds("ada", "203.0.113.9") > 0
    assert throttle.wait_seconds("ADA", "203.0.113.9") > 0
    assert throttle.wait_seconds("sam", "203.0.113.9") == 0
    for number in range(200):
        throttle.record_failure("ada", f"192.0.2.{number}")
    assert 0 < throttle.wait_seconds("ada", "203.0.113.9") <= 60


def test_the_address_is_slowed_down_for_every_account_after_twenty_failures(
    throttle: LoginThrottle,
) -> None:
    for number in range(19):
        throttle.record_failure(f"user{number}", IP)
    assert throttle.wait_seconds("someone", IP) == 0
    throttle.record_failure("user19", IP)
    assert throttle.wait_seconds("someone", IP) > 0
    assert throttle.wait_seconds("someone", "203.0.113.9") == 0


def test_the_wait_runs_out(throttle: LoginThrottle, clock: FakeClock) -> None:
    fail(throttle, 7)
    assert throttle.wait_seconds("ada", IP) == 4
    clock.advance(3)
    assert throttle.wait_seconds("ada", IP) == 1
    clock.advance(1)
    assert throttle.wait_seconds("ada", IP) == 0


def test_failures_older_than_fifteen_minutes_are_forgotten(
    throttle: LoginThrottle, clock: FakeClock
) -> None:
    fail(throttle, 4)
    clock.advance(15 * 60)
    fail(throttle, 1)
    assert throttle.wait_seconds("ada", IP) == 0


def test_a_success_clears_the_accounts_failures(throttle: LoginThrottle) -> None:
    fail(throttle, 4)
    throttle.record_success("ada", IP)
    fail(throttle, 4)
    assert throttle.wait_seconds("ada", IP) == 0


# ---------------------------------------------------------------------- over HTTP
def test_repeated_failed_logins_are_answered_429_with_retry_after(site: Site) -> None:
    client = site.client(REMOTE)
    for _ in range(5):
        response = log_in(client, "ada", "wrong password")
        assert response.status_code == 200
    response = log_in(client, "ada", "wrong password")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "1"
    assert "Too many failed login attempts" in response.text


def test_the_right_password_is_refused_while_the_account_is_throttled(site: Site) -> None:
    client = site.client(REMOTE)
    for _ in range(7):
        log_in(client, "ada", "wrong password")
    response = log_in(client, "ada", PASSWORD)
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) > 0
    assert not any(h.startswith(f"{COOKIE_NAME}=") for h in set_cookie_headers(response))


def test_a_throttled_account_logs_in_once_the_wait_is_over(site: Site) -> None:
    client = site.client(REMOTE)
    for _ in range(6):
        log_in(client, "ada", "wrong password")
    retry_after = int(log_in(client, "ada", PASSWORD).headers["Retry-After"])
    site.clock.advance(retry_after)
    assert log_in(client, "ada", PASSWORD).status_code == 303


def test_one_guessing_address_cannot_keep_the_owner_out(site: Site) -> None:
    attacker = site.client("198.51.100.7")
    started = site.clock.now
    guesses = 0
    for _ in range(200):  # guess as soon as allowed, over many simulated hours
        response = log_in(attacker, "ada", "wrong password")
        if response.status_code == 429:
            site.clock.advance(int(response.headers["Retry-After"]))
        else:
            guesses += 1
        assert log_in(site.client("203.0.113.9"), "ada", PASSWORD).status_code == 303
    hours = (site.clock.now - started) / 3600
    assert hours > 20
    assert guesses - 15 <= 4 * hours + 1  # about one guess per 15 minutes once slowed down


def test_a_distributed_attack_delays_the_owner_by_a_minute_at_most(site: Site) -> None:
    for number in range(60):
        log_in(site.client(f"198.51.100.{number}"), "ada", "wrong password")
    response = log_in(site.client("203.0.113.9"), "ada", PASSWORD)
    assert response.status_code == 429
    wait = int(response.headers["Retry-After"])
    assert 0 < wait <= 60
    site.clock.advance(wait)
    assert log_in(site.client("203.0.113.9"), "ada", PASSWORD).status_code == 303


def test_failures_by_email_address_count_against_the_same_account(site: Site) -> None:
    client = site.client(REMOTE)
    for _ in range(5):
        log_in(client, "ada@example.org", "wrong password")
    response = log_in(client, "ada", PASSWORD)
    assert response.status_code == 429


def test_alternating_login_and_email_does_not_double_the_attempts(site: Site) -> None:
    client = site.client(REMOTE)
    for number in range(6):
        name = "ada" if number % 2 else "ADA@example.org"
        log_in(client, name, "wrong password")
    assert log_in(client, "ada@example.org", PASSWORD).status_code == 429
    assert log_in(client, "ada", PASSWORD).status_code == 429


def test_the_throttle_applies_per_address_across_accounts(site: Site) -> None:
    client = site.client(REMOTE)
    for number in range(20):
        log_in(client, f"nobody{number}", "wrong password")
    assert log_in(client, "sam", PASSWORD).status_code == 429
    assert log_in(site.client("203.0.113.9"), "sam", PASSWORD).status_code == 303


def test_an_unknown_account_is_throttled_like_a_real_one(site: Site) -> None:
    unknown, known = site.client(REMOTE), site.client("203.0.113.9")
    for _ in range(5):
        log_in(unknown, "nobody", "wrong password")
        log_in(known, "ada", "wrong password")
    throttled_unknown = log_in(unknown, "nobody", "wrong password")
    throttled_known = log_in(known, "ada", "wrong password")
    assert throttled_unknown.status_code == throttled_known.status_code == 429
    assert throttled_unknown.headers["Retry-After"] == throttled_known.headers["Retry-After"]
