"""A memo of secrets verified against a database read, so that a run of requests with the
same credentials and nothing written in between hashes each secret cheaply.

SECURITY: no presented secret is kept, only a fingerprint under a random key of this process
(never stored, unrelated to the site key); fingerprints are compared in constant time; and an
entry counts only for the very read it was verified against and the database change stamp of
that read, so revoking or changing a password (any write to the database, by anyone) makes the
next request verify against the stored hashes again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Generic, TypeVar

from sitecache.bounded_memo import BoundedMemo

__all__ = ["VerifiedSecrets"]

Read = TypeVar("Read")
Match = TypeVar("Match")


class VerifiedSecrets(Generic[Read, Match]):
    """Per login, the secret verified last: the read and change stamp it was verified against,
    its fingerprint, and what it matched.

    Args:
        size: how many logins are kept; past it, all are dropped.
    """

    def __init__(self, size: int) -> None:
        self._key = secrets.token_bytes(32)
        self._entries: BoundedMemo[str, tuple[Read, tuple[int, int], bytes, Match]] = BoundedMemo(
            size
        )

    def fingerprint(self, secret: str) -> bytes:
        """A keyed digest of ``secret`` (BLAKE2b under this memo's own random key)."""
        return hashlib.blake2b(
            secret.encode("utf-8", "surrogatepass"), key=self._key, digest_size=32
        ).digest()

    def get(
        self, login: str, secret: str, read: Read | None, stamp: tuple[int, int] | None
    ) -> Match | None:
        """What ``secret`` was verified as for ``login`` when ``read`` is the very object it was
        verified against and ``stamp`` is unchanged; ``None`` otherwise (verify anew)."""
        if stamp is None or read is None:
            return None
        entry = self._entries.get(login)
        if entry is None or entry[0] is not read or entry[1] != stamp:
            return None
        # SECURITY: constant-time comparison of the fingerprints.
        if not hmac.compare_digest(entry[2], self.fingerprint(secret)):
            return None
        return entry[3]

    def remember(
        self, login: str, secret: str, read: Read, stamp: tuple[int, int], matched: Match
    ) -> None:
        """Keep that ``secret`` was verified as ``matched`` against ``read`` at ``stamp``."""
        self._entries.keep(login, (read, stamp, self.fingerprint(secret), matched))

    def __repr__(self) -> str:
        return f"<VerifiedSecrets of {len(self._entries)} logins>"
