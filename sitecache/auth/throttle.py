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
from sitecache.auth.roles import SiteUser
from sitecache.auth.store import SiteStore
from sitecache.bounded_memo import BoundedMemo

__all__ = ["LIMITS", "Limit", "LoginThrottle", "describe_wait", "login_account", "wait_message"]

WINDOW: Final = 15 * 60
#: How many clear (account, address) pairs `LoginThrottle.check` keeps.
_CLEAR_KEPT: Final = 256


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
        self._clear: BoundedMemo[tuple[str, str], tuple[DbConnection, tuple[int, int]]] = (
            BoundedMemo(_CLEAR_KEPT)
        )
        """The (account, address) pairs last found with no wait and no failure of the pair,
        with the connection and `SiteStore.change_stamp` of that read (`check`; at most
        `_CLEAR_KEPT`, then all are dropped)."""

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

    def check(
        self,
        account: str,
        ip: str,
        stamped: tuple[DbConnection, tuple[int, int] | None] | None = None,
    ) -> tuple[int, bool]:
        """Before letting a correct password in: the seconds to wait (0 = now) and whether
        this account has failures from this address to forget (`record_success`).

        One indexed read, and none while the store is unchanged since this pair was last
        found clear (on SQLite: a failure anywhere is a write, and a wait only shrinks with
        time), so the hot path of an application password pays almost nothing. ``stamped``:
        this thread's connection and the `SiteStore.change_stamp` a read of this request
        already took on it (no second stamp is taken).
        """
        if stamped is None:
            connection = self.store.connection()
            stamp = self.store.change_stamp(connection)
        else:
            connection, stamp = stamped
        pair = (account.lower(), ip)
        if stamp is not None:
            kept = self._clear.get(pair)
            if kept is not None and kept[0] is connection and kept[1] == stamp:
                return 0, False
        (pair_key, ip_key, account_key) = (key for _, key in self._buckets(account, ip))
        rows = connection.execute(
            "SELECT scope, next_allowed FROM login_throttle WHERE (scope = 'pair' AND key = ?)"
            " OR (scope = 'ip' AND key = ?) OR (scope = 'account' AND key = ?)",
            (pair_key, ip_key, account_key),
        ).fetchall()
        now = int(self.clock())
        wait = max([0, *(int(row[1]) - now for row in rows)])
        failed_here = any(str(row[0]) == "pair" for row in rows)
        if stamp is not None and wait == 0 and not failed_here:
            self._clear.keep(pair, (connection, stamp))
        return wait, failed_here

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


def login_account(user: SiteUser | None, login: str) -> str:
    """The account a login attempt counts against: the user's (so a login and an e-mail
    address share one count), else the name typed (an unknown login has a count too). The
    login form and application passwords over HTTP Basic count the same way."""
    return f"user:{user.id}" if user is not None else f"name:{login.lower()}"


def wait_message(seconds: int) -> str:
    """What a throttled login attempt is told (the login form and HTTP Basic alike)."""
    return f"Too many failed login attempts. Please try again in {describe_wait(seconds)}."


def describe_wait(seconds: int) -> str:
    """``"10 seconds"``, ``"1 minute"``, ``"15 minutes"``: the wait as a person reads it (whole
    minutes rounded up from a minute on, so the real wait is never understated)."""
    if seconds < 60:
        count, unit = max(1, seconds), "second"
    else:
        count, unit = -(-seconds // 60), "minute"
    return f"{count} {unit}{'s' if count != 1 else ''}"
