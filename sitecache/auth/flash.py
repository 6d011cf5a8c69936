"""One-time messages kept on the server between a form's POST and the page it redirects to.

POST-redirect-GET: a form that changes something answers with a redirect, and the page it
redirects to shows what was done, once. What it shows (a sentence, a new application password)
is put here by the POST and taken by the GET: the redirect carries only an unguessable
reference, bound to the login session that made it, so reloading the page shows nothing twice,
another session (or a crafted link) reads nothing, and no message text ever travels in a URL.

The messages live in the site store's ``options`` table, named
``flash:<expiry>:<session hash>:<token>`` (the expiry as ten digits, so expired rows are one
range to delete); each is deleted when read, and unread ones when they expire (`LIFETIME`).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from sitecache.auth.sessions import Session
from sitecache.auth.store import SiteStore

__all__ = ["LIFETIME", "FlashMessages"]

#: Seconds a message waits to be read.
LIFETIME: Final = 600
_PREFIX: Final = "flash:"
_WIDTH: Final = 10


class FlashMessages:
    """The one-time messages of the site's login sessions.

    Args:
        store: the site store.
        clock: Unix time.
    """

    def __init__(self, store: SiteStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    @staticmethod
    def _owner(session: Session) -> str:
        # SECURITY: the session's token never reaches the database, only a hash of it.
        return hashlib.sha256(b"flash\x00" + session.token.encode()).hexdigest()[:32]

    def put(self, session: Session, message: Mapping[str, Any]) -> str:
        """Keep ``message`` (a JSON object) for ``session``; the reference to redirect with.

        Raises:
            DatabaseError: the store failed.
        """
        now = int(self.clock())
        expires = f"{now + LIFETIME:0{_WIDTH}d}"
        token = secrets.token_urlsafe(16)
        with self.store.transaction() as connection:
            # Unread messages past their time go first (one range of names).
            connection.execute(
                "DELETE FROM options WHERE name >= ? AND name < ?",
                (_PREFIX, f"{_PREFIX}{now:0{_WIDTH}d}"),
            )
            connection.execute(
                "INSERT INTO options (name, value) VALUES (?, ?)",
                (f"{_PREFIX}{expires}:{self._owner(session)}:{token}", json.dumps(dict(message))),
            )
        return f"{expires}.{token}"

    def take(self, session: Session, reference: str) -> dict[str, Any] | None:
        """The message ``reference`` names for ``session``, deleted as it is read; ``None``
        when there is none (already read, expired, another session's, malformed).

        Raises:
            DatabaseError: the store failed.
        """
        expires, _, token = reference.partition(".")
        if len(expires) != _WIDTH or not expires.isdigit() or not token.isascii():
            return None
        if int(expires) <= self.clock():
            return None
        name = f"{_PREFIX}{expires}:{self._owner(session)}:{token}"
        with self.store.transaction() as connection:
            row = connection.execute("SELECT value FROM options WHERE name = ?", (name,)).fetchone()
            if row is None:
                return None
            connection.execute("DELETE FROM options WHERE name = ?", (name,))
        try:
            message = json.loads(str(row[0]))
        except ValueError:
            return None
        return message if isinstance(message, dict) else None
