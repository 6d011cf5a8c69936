"""The purge hold: the cache fails closed while a purge it owes could not be applied.

When a purge that a content change requires fails (Redis down or hung, a full disk), pages
stored before the change may still be in the storage or in memory tiers. Until the purge is
applied, no process of the node may serve or store a page: every request passes through to the
application, which shows the new content.

The hold is shared by the worker processes of a node through a marker file whose modification
time is the hold: zero when released, the time the first failed purge happened while held. It
is changed with ``utime`` only, which needs no free space, so it works on a full disk; each
request costs one ``stat``. Without a marker path (a `PageCache` embedded without a data
directory) the hold is this process's alone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path

__all__ = ["PurgeHold"]

logger = logging.getLogger("sitecache.cache")


class PurgeHold:
    """Whether the node must bypass the cache until owed purges are applied.

    Args:
        path: the marker file shared by the node's processes (created when missing), or
            ``None`` for a hold of this process only.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._marker = str(path) if path is not None else None
        self._local_since: float | None = None
        self._lock = threading.Lock()
        #: what the last failure said (shown in ``/status``)
        self.reason = ""
        if path is not None:
            try:
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                if not path.exists():
                    path.write_bytes(b"sitecache purge hold: held while its time is not zero\n")
                    os.utime(path, ns=(0, 0))
            except OSError as exc:
                logger.warning("purge hold marker %s unusable (%s): holds stay per process",
                               path, exc)  # fmt: skip
                self._marker = None

    def active(self) -> bool:
        """Whether caching must be bypassed now (one ``stat`` when a marker is shared)."""
        if self._local_since is not None:
            return True
        if self._marker is None:
            return False
        try:
            return os.stat(self._marker).st_mtime_ns != 0
        except OSError:
            # SECURITY: fail closed: a marker that cannot be read might say "held".
            return True

    def since(self) -> float | None:
        """When the hold began (Unix time), or ``None`` when released."""
        if self._local_since is not None:
            return self._local_since
        if self._marker is None:
            return None
        with contextlib.suppress(OSError):
            stamp = os.stat(self._marker).st_mtime_ns
            return stamp / 1e9 if stamp else None
        return time.time()

    def engage(self, reason: str) -> None:
        """Hold every process of the node (this one for sure, even if the marker fails)."""
        with self._lock:
            self.reason = reason
            if self.active():
                return
            now = time.time()
            if self._marker is not None:
                try:
                    stamp = time.time_ns()
                    os.utime(self._marker, ns=(stamp, stamp))
                    return
                except OSError as exc:
                    logger.error("purge hold marker not set (%s): holding this process", exc)
            self._local_since = now

    def release(self) -> None:
        """Let the node serve from the cache again (every owed purge was applied)."""
        with self._lock:
            self._local_since = None
            self.reason = ""
            if self._marker is not None:
                try:
                    os.utime(self._marker, ns=(0, 0))
                except OSError as exc:
                    logger.error("purge hold marker not cleared (%s)", exc)
                    self._local_since = time.time()
