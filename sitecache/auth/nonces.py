"""Nonces: short-lived tokens that prove a request came from the site's own pages.

A nonce is bound to an action (``site_rest``, ``log-out``, ...), a user and that user's session
token, and to a half-day tick; it is valid during its tick and the next one (12 to 24 hours), as
WordPress's are. Anonymous visitors (user 0, no session) get nonces too. Checking compares in
constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections.abc import Callable
from typing import Final

__all__ = ["NONCE_LIFE", "NonceService"]

NONCE_LIFE: Final = 24 * 3600


class NonceService:
    """Creates and verifies nonces with the site key.

    Args:
        key: the site's secret key.
        clock: seconds since the epoch.
    """

    def __init__(self, key: bytes, clock: Callable[[], float] = time.time) -> None:
        self.key = key
        self.clock = clock

    def tick(self) -> int:
        """The current half-day tick."""
        return math.ceil(self.clock() / (NONCE_LIFE / 2))

    def _nonce(self, tick: int, action: str, user_id: int, token: str) -> str:
        message = f"{tick}|{action}|{user_id}|{token}".encode()
        return hmac.new(self.key, message, hashlib.sha256).hexdigest()[-12:-2]

    def create(self, action: str, user_id: int, token: str = "") -> str:
        """A nonce for ``action`` by ``user_id`` in the session ``token``."""
        return self._nonce(self.tick(), action, user_id, token)

    def verify(self, nonce: object, action: str, user_id: int, token: str = "") -> int:
        """1 when made in this tick, 2 when in the previous one, 0 when invalid."""
        if not isinstance(nonce, str) or not nonce:
            return 0
        # SECURITY: compare bytes; a nonce is ASCII hex, so anything else is simply invalid
        # (``hmac.compare_digest`` refuses non-ASCII text with a TypeError).
        presented = nonce.encode("utf-8", "surrogatepass")
        tick = self.tick()
        for age, candidate_tick in ((1, tick), (2, tick - 1)):
            expected = self._nonce(candidate_tick, action, user_id, token)
            # SECURITY: constant-time comparison.
            if hmac.compare_digest(expected.encode("ascii"), presented):
                return age
        return 0
