"""The settings of one process: the compiled view of the stored settings, and their writes.

The stored settings are a watched named value (`sitecache.cache.named_values`): every process
recompiles its `CacheSettings` when the stored bytes change (read at most once a second), so a
change made anywhere reaches every worker and every node within about a second. Writes merge
into what is stored (never into this process's copy, which may be a second old) under a
cross-process lock, so two workers changing different keys both keep their change.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any, Final

from sitecache.cache.locks import Locks
from sitecache.cache.named_values import NamedValues, decode_record
from sitecache.cache.settings import CacheSettings, merge_settings, validate_settings_update

__all__ = ["SETTINGS_NAME", "SettingsStore"]

logger = logging.getLogger("sitecache.cache")

#: The named value holding the settings (a JSON object).
SETTINGS_NAME: Final = "settings"
#: The lock serializing settings writes across processes, and how long a writer holds it.
WRITE_LOCK: Final = "settings-write"
WRITE_LOCK_TTL: Final = 10.0
#: Seconds a writer waits for another one before it writes anyway.
WRITE_WAIT: Final = 5.0


class SettingsStore:
    """The compiled settings of this process and their writes (see the module docstring).

    Args:
        values: the storage's named values (the settings are watched there).
        locks: the cross-process locks (the write lock).
    """

    def __init__(self, values: NamedValues, locks: Locks) -> None:
        self.values = values
        self.locks = locks
        #: the settings this process runs with (replaced as a whole on every change)
        self.current = CacheSettings.from_values(None)
        values.keep_durably(SETTINGS_NAME)  # configuration, not cache: see cache.durable
        values.watch(SETTINGS_NAME, self._changed, what="cache settings")

    def _changed(self, raw: bytes | None) -> None:
        """The poller's news: recompile from the stored bytes (bad ones keep the last)."""
        stored: Any = None
        if raw:
            try:
                stored = json.loads(raw)
            except ValueError:
                logger.warning("stored cache settings are not JSON; using defaults")
        try:
            self.current = CacheSettings.from_values(stored if isinstance(stored, dict) else None)
        except Exception:  # stored by something else than `update`
            logger.exception("stored cache settings unusable; keeping the last ones")

    # ------------------------------------------------------------------ reading
    def fresh(self) -> CacheSettings:
        """The settings as stored now (read outside the poll rounds; the last known when the
        storage fails)."""
        self.values.reload(SETTINGS_NAME)
        return self.current

    # ------------------------------------------------------------------ writing
    def update(self, update: object) -> dict[str, Any]:
        """Validate and apply a partial update, all or nothing; the stored values before it.

        Raises:
            InvalidSettings: a field breaks a rule (every bad field is named; nothing changed).
            StorageError: the storage failed.
        """
        clean = validate_settings_update(update)
        with self._write_lock():
            previous = merge_settings(self._stored())
            current = dict(previous)
            if "pages" in clean:
                clean["pages"] = {**current.get("pages", {}), **clean["pages"]}
            current.update(clean)
            self._write(current)
        return previous

    def reset(self) -> dict[str, Any]:
        """Store the defaults; the stored values before.

        Raises:
            StorageError: the storage failed.
        """
        with self._write_lock():
            previous = merge_settings(self._stored())
            self._write(merge_settings(None))
        return previous

    def seed(self, values: Mapping[str, Any]) -> None:
        """Store ``values`` (over the defaults) when no settings are stored yet.

        Raises:
            InvalidSettings: a field breaks a rule (nothing was written).
            StorageError: the storage failed.
        """
        if self.values.read(SETTINGS_NAME) is None:
            self.update(dict(values))

    def _stored(self) -> dict[str, Any] | None:
        return decode_record(self.values.read(SETTINGS_NAME))

    def _write(self, values: Mapping[str, Any]) -> None:
        self.values.write_record(SETTINGS_NAME, values)

    @contextlib.contextmanager
    def _write_lock(self) -> Iterator[None]:
        """The cross-process lock of settings writes (waits up to `WRITE_WAIT` seconds for
        another writer, then writes anyway).

        Raises:
            StorageError: the storage failed (at once: a down store is not waited out).
        """
        owner = None
        deadline = time.monotonic() + WRITE_WAIT
        while owner is None and time.monotonic() < deadline:
            owner = self.locks.acquire(WRITE_LOCK, WRITE_LOCK_TTL)
            if owner is None:
                time.sleep(0.01)
        try:
            yield
        finally:
            if owner is not None:
                self.locks.release(WRITE_LOCK, owner)
