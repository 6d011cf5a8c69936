"""Application passwords over HTTP Basic are throttled as the login form is (#29 item 7): the
same counters (per account and address, per address, per account), 429 ``too_many_attempts``
with ``Retry-After`` past the limits, the right password refused too while the wait lasts; and
an unknown login is answered as a wrong password is, after the same work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.auth import app_passwords
from sitecache.auth.passwords import digest_matches
from tests.auth.conftest import REMOTE, Site, basic, log_in

WHOAMI = "/site-json/auth-test/v1/whoami"
WRONG = "abcd efgh ijkl mnop qrst uvwx"


@pytest.fixture
def site(site_factory: Callable[..., Site]) -> Site:
    """Application passwords from any address (the throttle's address buckets in play)."""
    return site_factory(application_passwords="on")


def whoami(site: Site, login: str, password: str, address: str = REMOTE) -> TestResponse:
    return site.client(address).get(WHOAMI, headers=basic(login, password))


def test_repeated_wrong_passwords_are_answered_429_with_retry_after(site: Site) -> None:
    right = site.app_password("author")
    answers = [whoami(site, "aurora", WRONG) for _ in range(6)]
    assert [response.status_code for response in answers] == [401] * 5 + [429]
    refused = answers[-1]
    assert refused.headers["Retry-After"] == "1"
    assert refused.get_json() == {
        "code": "too_many_attempts",
        "message": "Too many failed login attempts. Please try again in 1 second.",
        "data": {"status": 429, "retry_after": 1},
    }
    # The right password waits too: a throttled guesser cannot tell right from wrong.
    assert whoami(site, "aurora", right).status_code == 429
    # Another address is not slowed down by this one's guesses.
    assert whoami(site, "aurora", right, "203.0.113.9").status_code == 200


def test_the_wait_runs_out_and_a_success_forgets_the_failures(site: Site) -> None:
    right = site.app_password("author")
    for _ in range(6):
        whoami(site, "aurora", WRONG)
    retry_after = int(whoami(site, "aurora", right).headers["Retry-After"])
    site.clock.advance(retry_after)
    assert whoami(site, "aurora", right).status_code == 200
    # The pair's failures are forgotten: five more wrong ones before the next wait.
    assert [whoami(site, "aurora", WRONG).status_code for _ in range(5)] == [401] * 5


def test_the_login_form_and_basic_share_the_counters(site: Site) -> None:
    site.app_password("author")
    form = site.client(REMOTE)
    for _ in range(3):
        assert log_in(form, "aurora", "wrong password").status_code == 200
    assert [whoami(site, "aurora", WRONG).status_code for _ in range(3)] == [401, 401, 429]
    assert log_in(form, "aurora", "wrong password").status_code == 429
    # The e-mail address counts against the same account.
    assert whoami(site, "aurora@example.org", WRONG).status_code == 429


def test_an_unknown_login_is_throttled_and_answered_as_a_wrong_password(site: Site) -> None:
    site.app_password("author")
    unknown = [whoami(site, "nobody", WRONG) for _ in range(6)]
    known = [whoami(site, "aurora", WRONG, "203.0.113.9") for _ in range(6)]
    assert [r.status_code for r in unknown] == [r.status_code for r in known]
    assert [r.get_json() for r in unknown] == [r.get_json() for r in known]


def test_sixty_wrong_passwords_in_a_row_mostly_wait(site: Site) -> None:
    site.app_password("author")
    statuses = [whoami(site, "aurora", WRONG).status_code for _ in range(60)]
    assert statuses.count(401) == 5
    assert statuses.count(429) == 55


def test_an_unknown_login_costs_the_work_of_a_wrong_password(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.app_password("author")
    compared: list[Any] = []
    original = digest_matches

    def counting(digest: str, stored: str) -> bool:
        compared.append(stored)
        return original(digest, stored)

    monkeypatch.setattr(app_passwords, "digest_matches", counting)
    for login in ("nobody", "aurora"):
        compared.clear()
        assert whoami(site, login, WRONG, "198.51.100.1").status_code == 401
        assert len(compared) == 1, login  # one keyed hash, one constant-time comparison


def test_a_throttled_request_over_rest_never_reaches_the_route(site: Site) -> None:
    site.app_password("author")
    for _ in range(6):
        whoami(site, "aurora", WRONG)
    response = Client(site.app).get(
        WHOAMI, headers=basic("aurora", WRONG), environ_overrides={"REMOTE_ADDR": REMOTE}
    )
    assert response.status_code == 429
    assert "id" not in response.get_json()
