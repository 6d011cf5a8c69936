"""The site-health probe of the cache storage on every backend (memory, disk, Redis)."""

from __future__ import annotations

import time
from typing import Any

from sitecache.cache import MemoryStorage, Storage
from sitecache.cache.health_probe import PROBE_HOST, probe_storage
from sitecache.cache.storage import StorageError


def test_the_probe_round_trips_and_leaves_nothing(storage: Storage) -> None:
    assert probe_storage(storage) is None
    assert storage.keys_for("host", [PROBE_HOST]) == set()
    assert storage.summary(time.time()).total == 0


class _Failing(MemoryStorage):
    def put(self, *args: Any, **kwargs: Any) -> bool:
        raise StorageError("connection refused")


class _Forgetful(MemoryStorage):
    def get(self, key: str, generation: object = None) -> bytes | None:
        return None


def test_the_probe_reports_what_failed() -> None:
    assert probe_storage(_Failing()) == "connection refused"
    forgetful = _Forgetful()
    assert probe_storage(forgetful) == "the probe entry did not read back"
    assert forgetful.keys_for("host", [PROBE_HOST]) == set()
