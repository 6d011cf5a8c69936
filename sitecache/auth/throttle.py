"""Slowing down password guessing: per account and per client address.

Each failed login counts against the account (login name) and the client IP. Past a threshold
(5 for an account, 20 for an address, within 15 minutes) every further attempt must wait, the
delay doubling with each failure up to 15 minutes. A successful login clears the account's
count. The counts live in the site database, so every worker sees them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from sitecache.auth.store import SiteStore

__all__ = ["LoginThrottle"]

WINDOW: Final = 15 * 60
MAX_DELAY: Final = 15 * 60
BASE_DELAY: Final = 2
THRESHOLDS: Final = {"account": 5, "ip": 20}


class LoginThrottle:
    """Counts failed logins and says how long the next attempt must wait."""

    def __init__(self, store: SiteStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    def wait_seconds(self, account: str, ip: str) -> int:
        """Seconds before an attempt on ``account`` from ``ip`` is allowed (0 = now).

        ``account`` names the account however it was typed (callers resolve a login or e-mail
        address to one key, so both forms share one count).
        """
        now = int(self.clock())
        rows = (
            self.store.connection()
            .execute(
                "SELECT next_allowed FROM login_throttle WHERE (scope = 'account' AND key = ?)"
                " OR (scope = 'ip' AND key = ?)",
                (account.lower(), ip),
            )
            .fetchall()
        )
        return max([0, *(int(row["next_allowed"]) - now for row in rows)])

    def record_failure(self, account: str, ip: str) -> None:
        """Count a failed attempt against the account and the address."""
        now = int(self.clock())
        with self.store.transaction() as db:
            for scope, key in (("account", account.lower()), ("ip", ip)):
                row = db.execute(
                    "SELECT failures, last_failure FROM login_throttle WHERE scope = ? AND key = ?",
                    (scope, key),
                ).fetchone()
                failures = 1
                if row is not None and now - int(row["last_failure"]) < WINDOW:
                    failures = int(row["failures"]) + 1
                excess = failures - THRESHOLDS[scope]
                delay = min(MAX_DELAY, BASE_DELAY ** min(excess, 20)) if excess >= 0 else 0
                db.execute(
                    "INSERT INTO login_throttle (scope, key, failures, last_failure, next_allowed)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO UPDATE SET"
                    " failures = excluded.failures, last_failure = excluded.last_failure,"
                    " next_allowed = excluded.next_allowed",
                    (scope, key, failures, now, now + delay),
                )
            db.execute("DELETE FROM login_throttle WHERE last_failure < ?", (now - 2 * WINDOW,))

    def record_success(self, account: str) -> None:
        """Forget the account's failures after a successful login."""
        with self.store.transaction() as db:
            db.execute(
                "DELETE FROM login_throttle WHERE scope = 'account' AND key = ?",
                (account.lower(),),
            )
