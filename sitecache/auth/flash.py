"""One-time messages kept between a form's POST and the page it redirects to, sealed so that
only the browser session that made one can read it.

POST-redirect-GET: a form that changes something answers with a redirect, and the page it
redirects to shows what was done, once. What it shows (a sentence, a new application password)
is put here by the POST and taken by the GET: the redirect carries only an unguessable
reference, bound to the login session that made it, so reloading the page shows nothing twice,
another session (or a crafted link) reads nothing, and no message text ever travels in a URL.

The messages live in the site store's ``options`` table, named
``flash:<expiry>:<session hash>:<token>`` (the expiry as ten digits, so expired rows are one
range to delete); each is deleted when read, and unread ones when they expire (`LIFETIME`).

SECURITY: a message is never written in plaintext (it may hold a new application password).
Its row holds AES-256-GCM ciphertext under a key derived from the session's cookie token, which
no store keeps (the sessions table holds a keyed hash of it, the row name another hash): the
database, its backups and the data directory's files say nothing of the message, and the row's
name is the authenticated data, so a sealed value copied to another row does not open.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from sitecache.auth.sessions import Session
from sitecache.auth.store import SiteStore

__all__ = ["LIFETIME", "FlashMessages", "open_sealed", "seal"]

#: Seconds a message waits to be read.
LIFETIME: Final = 600
_PREFIX: Final = "flash:"
_WIDTH: Final = 10
#: The format of a sealed value: ``v1.<base64url(nonce + ciphertext + tag)>``.
_VERSION: Final = "v1."
_NONCE_BYTES: Final = 12


def _key(session: Session) -> bytes:
    # SECURITY: derived from the cookie token with a purpose of its own; neither the token nor
    # this key is stored anywhere (the sessions table and the row name hold other hashes).
    return hmac.digest(session.token.encode(), b"sitecache flash message key", "sha256")


def seal(session: Session, name: str, message: Mapping[str, Any]) -> str:
    """``message`` (a JSON object) encrypted and authenticated for ``session``, bound to
    ``name`` (the row that will hold it): text that says nothing of the message."""
    nonce = secrets.token_bytes(_NONCE_BYTES)
    plain = json.dumps(dict(message)).encode()
    sealed = AESGCM(_key(session)).encrypt(nonce, plain, name.encode())
    return _VERSION + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")


def open_sealed(session: Session, name: str, value: str) -> dict[str, Any] | None:
    """The message `seal` made of ``value`` for ``session`` and ``name``; ``None`` when it does
    not open (another session's key, another row, altered, an unknown format)."""
    if not value.startswith(_VERSION):
        return None
    try:
        raw = base64.urlsafe_b64decode(value[len(_VERSION) :].encode("ascii"))
        plain = AESGCM(_key(session)).decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], name.encode())
        message = json.loads(plain)
    except (InvalidTag, ValueError, UnicodeError, binascii.Error):
        return None
    return message if isinstance(message, dict) else None


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
        """Keep ``message`` (a JSON object) for ``session``, sealed (`seal`); the reference to
        redirect with.

        Raises:
            DatabaseError: the store failed.
        """
        now = int(self.clock())
        expires = f"{now + LIFETIME:0{_WIDTH}d}"
        token = secrets.token_urlsafe(16)
        name = f"{_PREFIX}{expires}:{self._owner(session)}:{token}"
        value = seal(session, name, message)
        with self.store.transaction() as connection:
            # Unread messages past their time go first (one range of names).
            connection.execute(
                "DELETE FROM options WHERE name >= ? AND name < ?",
                (_PREFIX, f"{_PREFIX}{now:0{_WIDTH}d}"),
            )
            # SECURITY: and any message an earlier release kept unsealed (in plaintext).
            connection.execute(
                "DELETE FROM options WHERE name >= ? AND name < ? AND value NOT LIKE ?",
                (_PREFIX, _PREFIX[:-1] + ";", _VERSION + "%"),
            )
            connection.execute("INSERT INTO options (name, value) VALUES (?, ?)", (name, value))
        return f"{expires}.{token}"

    def take(self, session: Session, reference: str) -> dict[str, Any] | None:
        """The message ``reference`` names for ``session``, deleted as it is read; ``None``
        when there is none (already read, expired, another session's, malformed, not sealed
        for this session).

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
        return open_sealed(session, name, str(row[0]))
