"""The site-health probe of the page cache's storage: one entry put, read back and deleted.

The entry lives under a host no site serves (``site-health.invalid``), for a few seconds at
most, so no request can ever be answered from it.
"""

from __future__ import annotations

import secrets
import time
from typing import Final

from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage import EntryStore, StorageError

__all__ = ["probe_storage"]

PROBE_HOST: Final = "site-health.invalid"


def probe_storage(storage: EntryStore) -> str | None:
    """Put a probe entry into ``storage``, read it back and delete it: ``None`` when all
    three worked, else what went wrong (never raises for a storage failure)."""
    token = secrets.token_hex(8)
    key = f"site-health-probe-{token}"
    data = f"probe {token}".encode()
    now = time.time()
    info = EntryInfo(
        key=key,
        url=f"http://{PROBE_HOST}/{token}",
        host=PROBE_HOST,
        path=f"/{token}",
        variant="",
        status=200,
        size=len(data),
        compressed_size=0,
        created=now,
        expires=now + 30,
        tags=(),
    )
    try:
        if not storage.put(key, data, info, 30.0):
            return "the storage refused the probe entry"
        if storage.get(key) != data:
            storage.delete([key])
            return "the probe entry did not read back"
        storage.delete([key])
        if storage.get(key) is not None:
            return "the probe entry survived its deletion"
    except StorageError as exc:
        return str(exc)
    return None
