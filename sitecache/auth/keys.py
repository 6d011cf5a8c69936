"""The site's secret key: generated once, kept in the data directory, never in the repository.

It keys every HMAC of the auth layer (session tokens, nonces, application passwords). The file
(``secret.key``, mode 0600) is written atomically: a temporary file in the same directory, then
``os.replace``, so a crash never leaves a half-written key and two workers starting at once agree.
A site whose store is shared by several machines (PostgreSQL) keeps its key in the store instead,
so every node signs and checks the same cookies; a key file already in the data directory seeds
it (sessions survive the move to a shared database), and each node keeps a copy of the store's
key beside it (``shared-secret.key``, `sitecache.auth.local_copies`), so a process starting
while the database does not answer still boots.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import tempfile
from pathlib import Path

from sitecache.auth.db import StoreUnavailable
from sitecache.auth.local_copies import keep_copy
from sitecache.auth.store import SiteStore, make_private_directory

__all__ = ["SHARED_KEY_COPY", "SHARED_KEY_NAME", "load_or_create_secret_key"]

logger = logging.getLogger("sitecache.auth")

KEY_BYTES = 64
#: The name of the key among the store's shared values.
SHARED_KEY_NAME = "secret_key"
#: The file beside ``secret.key`` holding this node's copy of a shared store's key.
SHARED_KEY_COPY = "shared-secret.key"


def load_or_create_secret_key(path: Path, store: SiteStore | None = None) -> bytes:
    """The site's key: from ``store`` when it is shared (created there once, from the key file
    at ``path`` when one exists, else 64 random bytes; then copied to `SHARED_KEY_COPY` beside
    ``path``, and read from there while the store does not answer), otherwise the key file at
    ``path`` (created when missing).

    Raises:
        ValueError: the stored key is shorter than 32 bytes.
        StoreUnavailable: the shared store does not answer and ``path`` holds no copy.
    """
    if store is not None and store.shared:
        seed = _read(path) if path.is_file() else secrets.token_bytes(KEY_BYTES)
        copy = path.with_name(SHARED_KEY_COPY)
        try:
            key = _checked(store.shared_value(SHARED_KEY_NAME, seed.hex()), store.describe())
        except StoreUnavailable:
            if not copy.is_file():
                raise  # a node that never reached its database has no copy of the key
            logger.warning("the site database does not answer: using this node's copy of its key")
            return _read(copy)
        keep_copy(copy, key.hex())  # this node's copy, to start while the database is down
        return key
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
    return _checked(path.read_text(encoding="ascii"), str(path))


def _checked(text: str, where: str) -> bytes:
    key = bytes.fromhex(text.strip())
    if len(key) < 32:
        raise ValueError(f"the secret key in {where} is too short; delete it to generate a new one")
    return key
