"""The storage's named values, and the one poller of those every process must follow.

Named values are the little shared state of the cache: its settings, the plugin switches, the
preload's progress, the GC schedule. They live in the storage, so every process (and every node
on Redis) reads the same ones.

Some of them change what a process does (the settings, the plugin switches): those are
*watched*. One poller re-reads every watched value at most once per interval (a round of one
small read per value) and tells the value's subscribers when its bytes changed, so a change
made in one process reaches every process within about a second and costs a request at most
one poll round per second. A value this process writes reaches its own subscribers at once.

Values named durable (the settings, the plugin switches) live first in a `DurableValues` (the
site's database) when one is attached, the storage holding their fast copy
(`sitecache.cache.durable`): a lost copy is never taken for "no value" (the subscribers keep
what they were told) and is rebuilt from the durable value off the request path.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from sitecache.cache.durable import DurableCopies, DurableValues
from sitecache.cache.storage import SharedState, StorageError
from sitecache.cache.storage_log import Warn

__all__ = ["NamedValues", "Subscriber"]

logger = logging.getLogger("sitecache.cache")

Subscriber = Callable[[bytes | None], None]
"""Told the new bytes of a watched value (``None``: the value is not stored)."""

#: What a watched value holds before its first read: unlike any bytes, and unlike ``None``.
_UNREAD: Final = b"\x00never read\x00"


@dataclass(slots=True)
class _Watch:
    """One watched value: its subscribers and the bytes they were last told."""

    name: str
    what: str
    subscribers: list[Subscriber] = field(default_factory=list)
    raw: bytes | None = _UNREAD


class NamedValues:
    """Reads and writes named values; polls the watched ones (see the module docstring).

    Args:
        storage: where the values live.
        interval: seconds between two poll rounds.
        warn: reports storage failures (rate-limited by the caller).
    """

    def __init__(self, storage: SharedState, *, interval: float, warn: Warn) -> None:
        self.storage = storage
        self.interval = interval
        self.warn = warn
        #: when the next poll round is due (read on every request: keep it a plain attribute)
        self.due = float("-inf")
        self._watches: dict[str, _Watch] = {}
        self._deliver_lock = threading.RLock()
        #: the durable home of some values (`sitecache.cache.durable`), when one is attached
        self.durable = DurableCopies(storage, warn)

    # ------------------------------------------------------------------ durable values
    def keep_durably(self, name: str) -> None:
        """Keep ``name`` in the durable store (now when one is attached: its copy is compared
        with it at once, see `use_durable`)."""
        self.durable.keep(name)

    def use_durable(self, durable: DurableValues) -> None:
        """Keep the durable names in ``durable`` from now on: each copy is compared with it
        now (rebuilt when missing, rewritten when it differs), and the next poll round tells
        the subscribers what the copies hold."""
        self.durable.attach(durable)
        with self._deliver_lock:
            for name in self.durable.names:
                watch = self._watches.get(name)
                if watch is not None:
                    watch.raw = _UNREAD
        self.expire()

    def sync_durable(self) -> None:
        """Compare the copies with the durable values when a comparison is due (every
        `DURABLE_CHECK_SECONDS`; the timers' thread calls this, never a request)."""
        self.durable.sync_if_due()

    # ------------------------------------------------------------------ plain values
    def read(self, name: str) -> bytes | None:
        """The value ``name``, or ``None`` when it is not stored (a durable name: its durable
        value, else its copy while the durable store fails).

        Raises:
            StorageError: the storage failed.
        """
        if self.durable.holds(name):
            return self.durable.read(name)
        return self.storage.get_value(name)

    def write(self, name: str, data: bytes) -> None:
        """Store ``data`` as ``name`` atomically; this process's subscribers of ``name`` are
        told at once (the other processes at their next poll round). A durable name is
        written to the durable store first; its copy, when the storage fails, is rebuilt
        later.

        Raises:
            StorageError: the storage failed (nothing was told).
            Exception: the durable store's failure, as it raised it (nothing was written).
        """
        if self.durable.holds(name):
            self.durable.write(name, data)
        else:
            self.storage.set_value(name, data)
        watch = self._watches.get(name)
        if watch is not None:
            self._deliver(watch, data)

    def read_record(self, name: str) -> dict[str, Any] | None:
        """The JSON object stored as ``name``; ``None`` when missing, not JSON or not an object.

        Raises:
            StorageError: the storage failed.
        """
        return decode_record(self.read(name))

    def write_record(self, name: str, record: Mapping[str, Any]) -> None:
        """Store ``record`` as JSON under ``name`` (keys sorted, so equal records are equal
        bytes and a watched record that did not change tells nobody).

        Raises:
            StorageError: the storage failed.
        """
        self.write(name, json.dumps(dict(record), sort_keys=True).encode("utf-8"))

    # ------------------------------------------------------------------ watched values
    def watch(self, name: str, subscriber: Subscriber, *, what: str = "") -> None:
        """Tell ``subscriber`` each new value of ``name`` from now on (the first poll round or
        `reload` tells it the stored value). ``what`` names the value in warnings."""
        with self._deliver_lock:
            watch = self._watches.get(name)
            if watch is None:
                watch = self._watches[name] = _Watch(name, what or f"cache value {name}")
            watch.subscribers.append(subscriber)
            if watch.raw is not _UNREAD:
                # Someone already saw a value: the newcomer reads it at the next change or
                # `reload`, as the others did; make sure that next read tells it.
                watch.raw = _UNREAD

    def poll(self, now: float) -> None:
        """Run one poll round if one is due at ``now`` (at most one per interval, whatever the
        number of threads asking). A storage failure is logged and ends the round: every
        subscriber keeps what it was last told."""
        if now < self.due:
            return
        self.due = now + self.interval
        for watch in list(self._watches.values()):
            if not self._refresh(watch):
                break  # the storage is down: one failing read per round is enough

    def reload(self, name: str) -> None:
        """Read ``name`` now, outside the rounds, and tell its subscribers if it changed (a
        storage failure is logged: they keep what they were last told)."""
        watch = self._watches.get(name)
        if watch is not None:
            self._refresh(watch)

    def expire(self) -> None:
        """Make the next `poll` run a round whatever the time."""
        self.due = float("-inf")

    def _refresh(self, watch: _Watch) -> bool:
        try:
            raw = self.storage.get_value(watch.name)
        except StorageError as exc:
            self.warn(f"{watch.what} unreadable, keeping the last: %s", exc)
            return False
        if raw is None and watch.raw is not _UNREAD and self.durable.holds(watch.name):
            # The copy is gone (a Redis restart, FLUSHDB, an eviction): never "no value".
            # The subscribers keep what they were told; the timers' thread rebuilds it.
            self.durable.lost(watch.name)
            return True
        self._deliver(watch, raw)
        return True

    def _deliver(self, watch: _Watch, raw: bytes | None) -> None:
        """Tell every subscriber of ``watch`` about ``raw`` unless they were told it last."""
        with self._deliver_lock:
            if raw == watch.raw:
                return
            watch.raw = raw
            for subscriber in list(watch.subscribers):
                try:
                    subscriber(raw)
                except Exception:
                    logger.exception("subscriber %r of %s failed", subscriber, watch.what)


def decode_record(raw: bytes | None) -> dict[str, Any] | None:
    """The JSON object ``raw`` holds, or ``None`` (missing, not JSON, not an object)."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
