"""Hashing and checking secrets.

User passwords use scrypt (memory-hard, in the standard library) with a per-user random salt,
stored as ``scrypt$<n>$<r>$<p>$<salt>$<hash>``; the cost is part of the stored value, so it can
be raised later without breaking old hashes. Application passwords and session tokens are long
random secrets, so a fast keyed hash (HMAC-SHA-256 with the site key) is the right tool for them.
Every comparison is constant-time (`hmac.compare_digest`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

__all__ = [
    "PasswordHasher",
    "digest_matches",
    "generate_password",
    "keyed_hash",
    "keyed_hash_matches",
]

_ALPHABET: Final = string.ascii_letters + string.digits


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True, slots=True)
class PasswordHasher:
    """scrypt password hashing.

    Attributes:
        n, r, p: the scrypt cost (CPU/memory, block size, parallelism); 2**15, 8, 1 by default
            (32 MiB, about 0.1 s per hash).
    """

    n: int = 2**15
    r: int = 8
    p: int = 1

    def _derive(self, password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
        return hashlib.scrypt(
            password.encode("utf-8", "surrogatepass"),
            salt=salt,
            n=n,
            r=r,
            p=p,
            maxmem=256 * n * r + 2**20,
            dklen=32,
        )

    def hash(self, password: str) -> str:
        """A salted hash of ``password`` to store."""
        salt = secrets.token_bytes(16)
        digest = self._derive(password, salt, self.n, self.r, self.p)
        return f"scrypt${self.n}${self.r}${self.p}${_b64(salt)}${_b64(digest)}"

    def verify(self, password: str, stored: str) -> bool:
        """Whether ``password`` matches ``stored`` (constant-time comparison)."""
        # SECURITY: constant-time comparison of the derived key.
        try:
            scheme, n, r, p, salt, digest = stored.split("$")
            if scheme != "scrypt":
                return False
            expected = _unb64(digest)
            actual = self._derive(password, _unb64(salt), int(n), int(r), int(p))
        except (ValueError, TypeError):
            return False
        return hmac.compare_digest(actual, expected)

    def burn(self, password: str) -> None:
        """Spend the time of one verification, so an unknown login answers as slowly."""
        self._derive(password, b"\0" * 16, self.n, self.r, self.p)


def generate_password(length: int = 24) -> str:
    """A random password of letters and digits (``wp_generate_password(24, false)``)."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


@lru_cache(maxsize=8)
def _keyed(key: bytes) -> hmac.HMAC:
    """An HMAC-SHA-256 keyed with ``key`` and fed nothing: copied for each message, it spares
    the key schedule (hashing the padded key twice) per hash. Never updated itself."""
    return hmac.new(key, digestmod=hashlib.sha256)


def keyed_hash(key: bytes, secret: str, purpose: str) -> str:
    """HMAC-SHA-256 of ``secret`` under the site ``key``, separated by ``purpose`` (hex)."""
    mac = _keyed(key).copy()
    mac.update(f"{purpose}\0{secret}".encode("utf-8", "surrogatepass"))
    return mac.hexdigest()


def keyed_hash_matches(key: bytes, secret: str, purpose: str, stored: str) -> bool:
    """Whether ``secret`` hashes to ``stored`` (constant-time comparison)."""
    return digest_matches(keyed_hash(key, secret, purpose), stored)


def digest_matches(digest: str, stored: str) -> bool:
    """Whether the `keyed_hash` ``digest`` is ``stored`` (constant-time comparison)."""
    # SECURITY: constant-time comparison.
    # Bytes, not text: ``hmac.compare_digest`` refuses non-ASCII text (a TypeError, a 500).
    return hmac.compare_digest(digest.encode("ascii"), stored.encode("utf-8", "surrogatepass"))
