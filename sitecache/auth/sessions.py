"""Login sessions: server-side tokens behind an ``HttpOnly`` cookie.

The cookie holds a random token; the database holds only its keyed hash, the user, the expiry
and where it was created. A session lasts 2 days, or 14 with "remember me"; it can be revoked
(logout, password change) by deleting its row. The cookie is ``HttpOnly``, ``SameSite=Lax``,
``Path=/`` and ``Secure`` over TLS.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from werkzeug.sansio.http import parse_cookie

from sitecache.auth.cookie_names import COOKIE_NAME
from sitecache.auth.passwords import keyed_hash
from sitecache.auth.roles import SiteUser
from sitecache.auth.store import SiteStore
from sitecache.auth.users import UserRepository

__all__ = ["COOKIE_NAME", "Session", "SessionManager", "session_token"]

SESSION_SECONDS: Final = 2 * 24 * 3600
REMEMBER_SECONDS: Final = 14 * 24 * 3600
_PURPOSE: Final = "session"


def session_token(cookie_header: str | None) -> str | None:
    """The session token in a ``Cookie`` header, or ``None``.

    The header arrives as WSGI text (latin-1); it is read as UTF-8 with bad bytes replaced, so a
    stray cookie of another application can never make the request fail.
    """
    if not cookie_header:
        return None
    text = cookie_header.encode("latin-1", "replace").decode("utf-8", "replace")
    return parse_cookie(text).get(COOKIE_NAME)


@dataclass(frozen=True, slots=True)
class Session:
    """A valid session: its user, its token (for nonces) and when it expires."""

    user: SiteUser
    token: str
    expires: int
    remember: bool


class SessionManager:
    """Creates, finds and revokes sessions.

    Args:
        store: the site database.
        users: the user repository.
        key: the site's secret key.
        clock: seconds since the epoch.
    """

    def __init__(
        self,
        store: SiteStore,
        users: UserRepository,
        key: bytes,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.users = users
        self.key = key
        self.clock = clock

    def _hash(self, token: str) -> str:
        return keyed_hash(self.key, token, _PURPOSE)

    def create(
        self, user: SiteUser, remember: bool = False, ip: str = "", user_agent: str = ""
    ) -> Session:
        """Start a session for ``user``; the returned token goes into the cookie."""
        token = secrets.token_urlsafe(32)
        now = int(self.clock())
        expires = now + (REMEMBER_SECONDS if remember else SESSION_SECONDS)
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO sessions (token_hash, user_id, created, expires, remember, ip,"
                " user_agent) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (self._hash(token), user.id, now, expires, int(remember), ip, user_agent[:255]),
            )
            db.execute("DELETE FROM sessions WHERE expires <= ?", (now,))
        return Session(user, token, expires, remember)

    def find(self, token: str | None) -> Session | None:
        """The live session of a cookie token, or ``None`` (unknown, expired or revoked)."""
        if not token or len(token) > 128:
            return None
        # SECURITY: the lookup is by keyed hash; the token itself is never stored.
        row = (
            self.store.connection()
            .execute(
                "SELECT user_id, expires, remember FROM sessions WHERE token_hash = ?",
                (self._hash(token),),
            )
            .fetchone()
        )
        if row is None or int(row["expires"]) <= int(self.clock()):
            return None
        user = self.users.get(int(row["user_id"]))
        if user is None:
            return None
        return Session(user, token, int(row["expires"]), bool(row["remember"]))

    def revoke(self, token: str) -> None:
        """End one session."""
        with self.store.transaction() as db:
            db.execute("DELETE FROM sessions WHERE token_hash = ?", (self._hash(token),))

    def revoke_all(self, user: SiteUser) -> int:
        """End every session of ``user``; returns how many there were."""
        with self.store.transaction() as db:
            cursor = db.execute("DELETE FROM sessions WHERE user_id = ?", (user.id,))
            return int(cursor.rowcount)

    def cookie_max_age(self, session: Session) -> int | None:
        """Seconds the cookie lives: until expiry with "remember me", else a browser session."""
        return max(0, session.expires - int(self.clock())) if session.remember else None
