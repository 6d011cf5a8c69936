"""Each node's copies of the values a shared store keeps for every node (the secret key, the
cache namespace), so that a process starting while the database does not answer still boots.

A value read from the shared store is copied into the node's private data directory (mode
0600, written atomically: a temporary file, then ``os.replace``); a process that finds the
database down at start reads the copy instead, serves the pages the cache holds and answers
503 for the rest. A node that never reached its database has no copy: it cannot start before
the database answers once.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from sitecache.auth.store import make_private_directory

__all__ = ["keep_copy", "read_copy"]


def read_copy(path: Path) -> str | None:
    """The value copied at ``path`` (stripped), or ``None`` when there is none or it cannot be
    read."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def keep_copy(path: Path, value: str) -> None:
    """Copy ``value`` to ``path`` unless it holds it already (a copy that cannot be written is
    skipped: the shared store remains the value's home).

    The write is atomic, so a process reading the copy never sees half of it.
    """
    if read_copy(path) == value:
        return
    with contextlib.suppress(OSError):
        make_private_directory(path.parent)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="ascii") as file:
                file.write(value + "\n")
                file.flush()
                os.fsync(file.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
