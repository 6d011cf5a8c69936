"""Collapsed misses: one render per missing page, however many ask for it at once.

The first request for a missing key becomes its *lead*: it takes the storage lock
``fill:<key>`` (shared by every process using the storage: the node's workers on disk, every
node on Redis) and renders. Other threads of its process wait on an event; other processes poll
the lock. When the lead is done (stored or not) the waiters look the key up again and are
answered from the stored page (``Cache-Status: sitecache; fwd=uri-miss; collapsed``, RFC 9211),
or render it themselves when nothing usable was stored or their wait ran out.

A request whose lookup missed just before the lead stored the page would find no lead left
and become a second one: for a second after a store, `begin` sends such a request back to the
storage instead (`Fill.recheck`).

A page that turned out not to be storable (it set a cookie, say) is remembered for a few
seconds as *pass*, so that concurrent requests for it render at once instead of queueing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Final

from sitecache.cache.locks import LockService
from sitecache.cache.storage import StorageError
from sitecache.cache.storage_log import Warn

__all__ = ["Fill", "FillCoordinator"]

#: Seconds a waiter waits for a lead before it renders the page itself.
WAIT_BUDGET: Final = 3.0
#: Seconds the storage lock of a lead lives (a killed lead frees it then).
LOCK_TTL: Final = 30.0
#: Seconds an unstorable page is rendered without collapsing.
PASS_TTL: Final = 10.0
#: Remembered pass decisions before the memo is emptied.
PASS_MEMO_SIZE: Final = 1024
#: Seconds a key stored by a lead of this process sends late arrivals to the storage: a request
#: whose lookup missed just before the lead stored would otherwise become a second lead.
STORED_TTL: Final = 1.0
#: Remembered stored keys before the memo is emptied.
STORED_MEMO_SIZE: Final = 1024


#: The event of a wait that is over before it began (a key stored a moment ago): set once,
#: never cleared.
_DONE: Final = threading.Event()
_DONE.set()


@dataclass(slots=True)
class Fill:
    """One request's part in filling a key: lead (renders) or waiter."""

    name: str
    lead: bool
    #: what a waiter waits on; a registered fill's own is made by the first local waiter
    #: (PERF: a lead nobody waits for makes none)
    event: threading.Event | None = None
    #: the storage lock's owner token while this lead holds it
    owner: str | None = None
    #: this waiter waits on another process (polling the lock), not on a local thread
    remote: bool = False
    #: this request registered ``event`` and must set it when done
    registered: bool = False
    #: a lead of this process stored the key a moment ago: look it up again instead of
    #: waiting; when it is gone already (purged), `forget` it and begin again
    recheck: bool = False


class FillCoordinator:
    """Leads and waiters of the keys being filled (see the module docstring).

    Args:
        locks: the cross-process locks (the engine's, in the storage).
        warn: reports storage failures (rate-limited by the caller).
    """

    def __init__(self, locks: LockService, warn: Warn) -> None:
        self.locks = locks
        self.warn = warn
        self._lock = threading.Lock()
        #: the registered fill of each key being filled in this process
        self._inflight: dict[str, Fill] = {}
        self._passes: dict[str, float] = {}
        self._stored: dict[str, float] = {}
        #: the lock this thread's last `lock_ahead` offered: ``offered`` = (name, when)
        self._ahead = threading.local()

    def lock_ahead(self, key: str) -> tuple[str, str, float] | None:
        """The storage lock `begin` would take for ``key`` now (name, owner token, seconds),
        for a storage that takes it in the round trip of the lookup when nothing is stored
        (`Storage.generation_for`); ``None`` when `begin` would not take it."""
        now = time.monotonic()
        self._ahead.offered = None
        with self._lock:
            if self._early(key, now) is not None:
                return None
        name = f"fill:{key}"
        self._ahead.offered = (name, now)
        return name, self.locks.token(), LOCK_TTL

    def forgo(self, key: str) -> None:
        """The lookup the lock of ``key`` was offered with (`lock_ahead`) was answered by
        something stored meanwhile: free the lock if it was taken (a failure is logged; the
        lock then expires by itself)."""
        name = f"fill:{key}"
        offered, self._ahead.offered = getattr(self._ahead, "offered", None), None
        if offered is not None and offered[0] == name:
            self.locks.release(name, self.locks.token())

    def _early(self, key: str, now: float) -> Fill | None:
        """What `begin` answers without the storage lock (``self._lock`` held): a lead of a
        page not storable lately, a waiter of this process's lead, or a look again."""
        name = f"fill:{key}"
        until = self._passes.get(key)
        if until is not None and until > now:
            return Fill(name, lead=True)  # not storable lately: render, do not collapse
        current = self._inflight.get(key)
        if current is not None:
            if current.event is None:
                current.event = threading.Event()
            return Fill(name, lead=False, event=current.event)
        stored_at = self._stored.get(key)
        if stored_at is not None and now - stored_at < STORED_TTL:
            # Its lead stored it since this request's lookup: look again, do not render.
            return Fill(name, lead=False, event=_DONE, recheck=True)
        return None

    def begin(self, key: str) -> Fill:
        """Become the lead for ``key`` or a waiter of the current one."""
        name = f"fill:{key}"
        now = time.monotonic()
        offered, self._ahead.offered = getattr(self._ahead, "offered", None), None
        with self._lock:
            early = self._early(key, now)
            if early is None:
                fill = self._inflight[key] = Fill(name, lead=True, registered=True)
        if early is not None:
            if offered is not None and offered[0] == name and now - offered[1] < STORED_TTL:
                # The lookup may have taken the lock for this thread (`lock_ahead`) before
                # another thread began: then this one renders, holding it (the lock decides,
                # as between processes); never left taken.
                try:
                    owner = self.locks.acquire(name, LOCK_TTL)
                except StorageError as exc:
                    self.warn("cache fill lock unavailable: %s", exc)
                    owner = None
                if owner is not None:
                    return Fill(name, lead=True, owner=owner)
            return early
        try:
            fill.owner = self.locks.acquire(name, LOCK_TTL)
        except StorageError as exc:
            self.warn("cache fill lock unavailable: %s", exc)
            return fill
        if fill.owner is None:
            fill.lead, fill.remote = False, True
        return fill

    def wait(self, fill: Fill, budget: float = WAIT_BUDGET) -> None:
        """Wait (at most ``budget`` seconds) until the lead of ``fill`` is done."""
        if not fill.remote:
            if fill.event is not None:
                fill.event.wait(budget)
            return
        deadline = time.monotonic() + budget
        pause = 0.002
        while time.monotonic() < deadline:
            try:
                if self.locks.lock_owner(fill.name) is None:
                    return
            except StorageError as exc:
                self.warn("cache fill lock unreadable: %s", exc)
                return
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 1.5, 0.05)

    def busy(self, key: str) -> bool:
        """Whether a render of ``key`` is under way: in this process, or (its storage lock
        held) in any process sharing the storage.

        Raises:
            StorageError: the lock could not be read.
        """
        with self._lock:
            if key in self._inflight:
                return True
        return self.locks.lock_owner(f"fill:{key}") is not None

    def forget(self, key: str) -> None:
        """Drop the memo that ``key`` was stored a moment ago (its lookup found nothing: it was
        purged since), so that the next `begin` collapses the renders again."""
        with self._lock:
            self._stored.pop(key, None)

    def finish(self, fill: Fill, *, stored: bool, unstorable: bool = False) -> None:
        """The lead (or a remote waiter) is done: free the lock and wake local waiters.

        ``unstorable`` (the page may not be stored, whatever the timing) remembers the key as
        *pass* for a few seconds.
        """
        key = fill.name.removeprefix("fill:")
        if fill.owner is not None:
            self.locks.release(fill.name, fill.owner)  # a failure is logged; the lock expires
            fill.owner = None
        with self._lock:
            if fill.lead and unstorable:
                if len(self._passes) >= PASS_MEMO_SIZE:
                    self._passes.clear()
                self._passes[key] = time.monotonic() + PASS_TTL
            elif stored:
                self._passes.pop(key, None)
                if len(self._stored) >= STORED_MEMO_SIZE:
                    self._stored.clear()
                self._stored[key] = time.monotonic()
            if fill.registered and self._inflight.get(key) is fill:
                del self._inflight[key]
            # Read once it is no longer registered: no waiter can make it after this.
            event = fill.event
        if fill.registered and event is not None:
            event.set()
