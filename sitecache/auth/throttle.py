"""Slowing down password guessing without letting anyone lock an account's owner out.

Failed logins are counted in three buckets (`LIMITS`); a bucket forgets its failures 15 minutes
after its wait (if any) has ended:

- per account *and* client address: 5 failures, then each attempt must wait, the delay
  doubling up to 15 minutes. This is what stops one guesser;
- per client address (all accounts): 20 failures, same delays. This stops one address
  spraying many accounts;
- per account (all addresses): 50 failures, delays capped at 60 seconds. This slows a
  distributed attack on one account, while its owner is never kept out for more than a minute:
  a single attacking address is throttled by its own buckets long before it could keep this one
  full.

A successful login clears the (account, address) bucket. The counts live in the site database,
so every worker sees them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from sitecache.auth.db import DbConnection
from sitecache.auth.store import SiteStore

__all__ = ["LIMITS", "Limit", "LoginThrottle", "describe_wait"]

WINDOW: Final = 15 * 60


@dataclass(frozen=True, slots=True)
class Limit:
    """How many failures a bucket tolerates, and the longest delay it imposes."""

    threshold: int
    max_delay: int


LIMITS: Final[dict[str, Limit]] = {
    "pair": Limit(threshold=5, max_delay=15 * 60),
    "ip": Limit(threshold=20, max_delay=15 * 60),
    "account": Limit(threshold=50, max_delay=60),
}


def _delay(failures: int, limit: Limit) -> int:
    excess = failures - limit.threshold
    if excess < 0:
        return 0
    return int(min(limit.max_delay, 2 ** min(excess, 20)))


class LoginThrottle:
    """Counts failed logins and says how long the next attempt must wait."""

    def __init__(self, store: SiteStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    @staticmethod
    def _buckets(account: str, ip: str) -> tuple[tuple[str, str], ...]:
        key = account.lower()
        return (("pair", f"{key}|{ip}"), ("ip", ip), ("account", key))

    def wait_seconds(self, account: str, ip: str) -> int:
        """Seconds before an attempt on ``account`` from ``ip`` is allowed (0 = now).

        ``account`` names the account however it was typed (callers resolve a login or e-mail
        address to one key, so both forms share one count).
        """
        now = int(self.clock())
        connection = self.store.connection()
        waits = [0]
        for scope, key in self._buckets(account, ip):
            row = connection.execute(
                "SELECT next_allowed FROM login_throttle WHERE scope = ? AND key = ?", (scope, key)
            ).fetchone()
            if row is not None:
                waits.append(int(row["next_allowed"]) - now)
        return max(waits)

    def begin_attempt(self, account: str, ip: str) -> int:
        """Atomically check and count an attempt: the seconds to wait (nothing is counted), or
        0 after counting the attempt as a failure (`record_success` takes it back).

        Checking and counting in one write transaction means concurrent guesses cannot all pass
        the check before any of them is counted.
        """
        now = int(self.clock())
        with self.store.transaction() as db:
            waits = [0]
            for scope, key in self._buckets(account, ip):
                row = db.execute(
                    "SELECT next_allowed FROM login_throttle WHERE scope = ? AND key = ?",
                    (scope, key),
                ).fetchone()
                if row is not None:
                    waits.append(int(row["next_allowed"]) - now)
            wait = max(waits)
            if wait <= 0:
                self._count_failure(db, account, ip, now)
            return max(wait, 0)

    def record_failure(self, account: str, ip: str) -> None:
        """Count a failed attempt in every bucket it belongs to."""
        with self.store.transaction() as db:
            self._count_failure(db, account, ip, int(self.clock()))

    def _count_failure(self, db: DbConnection, account: str, ip: str, now: int) -> None:
        for scope, key in self._buckets(account, ip):
            row = db.execute(
                "SELECT failures, next_allowed FROM login_throttle WHERE scope = ? AND key = ?",
                (scope, key),
            ).fetchone()
            failures = 1
            # Forgotten only a window after the wait ended: a guess made the moment it is
            # allowed again still counts (else the longest wait would reset the count).
            if row is not None and now - int(row["next_allowed"]) < WINDOW:
                failures = int(row["failures"]) + 1
            db.execute(
                "INSERT INTO login_throttle (scope, key, failures, last_failure, next_allowed)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO UPDATE SET"
                " failures = excluded.failures, last_failure = excluded.last_failure,"
                " next_allowed = excluded.next_allowed",
                (scope, key, failures, now, now + _delay(failures, LIMITS[scope])),
            )
        db.execute("DELETE FROM login_throttle WHERE next_allowed < ?", (now - 2 * WINDOW,))

    def record_success(self, account: str, ip: str) -> None:
        """Forget the failures of this account from this address after a successful login, and
        take back the attempt `begin_attempt` counted in the address's and account's buckets."""
        with self.store.transaction() as db:
            db.execute(
                "DELETE FROM login_throttle WHERE scope = 'pair' AND key = ?",
                (f"{account.lower()}|{ip}",),
            )
            for scope, key in self._buckets(account, ip)[1:]:
                row = db.execute(
                    "SELECT failures, last_failure FROM login_throttle WHERE scope = ? AND key = ?",
                    (scope, key),
                ).fetchone()
                if row is None:
                    continue
                failures = max(0, int(row["failures"]) - 1)
                db.execute(
                    "UPDATE login_throttle SET failures = ?, next_allowed = ?"
                    " WHERE scope = ? AND key = ?",
                    (
                        failures,
                        int(row["last_failure"]) + _delay(failures, LIMITS[scope]),
                        scope,
                        key,
                    ),
                )


def describe_wait(seconds: int) -> str:
    """``"10 seconds"``, ``"1 minute"``, ``"15 minutes"``: the wait as a person reads it (whole
    minutes rounded up from a minute on, so the real wait is never understated)."""
    if seconds < 60:
        count, unit = max(1, seconds), "second"
    else:
        count, unit = -(-seconds // 60), "minute"
    return f"{count} {unit}{'s' if count != 1 else ''}"
