"""The site's secret key: generated once, kept in the data directory, never in the repository.

It keys every HMAC of the auth layer (session tokens, nonces, application passwords). The file
(``secret.key``, mode 0600) is written atomically: a temporary file in the same directory, then
``os.replace``, so a crash never leaves a half-written key and two workers starting at once agree.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

from sitecache.auth.store import make_private_directory

__all__ = ["load_or_create_secret_key"]

KEY_BYTES = 64


def load_or_create_secret_key(path: Path) -> bytes:
    """The key stored at ``path``, creating it (64 random bytes, hex) when missing."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    make_private_directory(path.parent)
    handle, temporary = tempfile.mkstemp(prefix=".secret-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(KEY_BYTES) + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o600)
        # link() fails if another process created the key first: then theirs wins.
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
    return _read(path)


def _read(path: Path) -> bytes:
    text = path.read_text(encoding="ascii").strip()
    key = bytes.fromhex(text)
    if len(key) < 32:
        raise ValueError(f"the secret key in {path} is too short; delete it to generate a new one")
    return key
