"""The cache's timers: garbage collection and scheduled preloads, in one process at a time.

Every process may run a `CacheTimers` thread; each tick it tries to take (or extend) the storage
lock ``timers``, and only the holder does the work, so GC and scheduled preloads run in exactly
one process across all workers and nodes sharing the storage. When the holder dies, its lock
expires after a few ticks and another process takes over.

The thread is started lazily (`CacheTimers.ensure_running`, called on the requests a process
serves), never at import or application creation: a pre-forking server (gunicorn with
``--preload``) forks workers from a process that must hold no thread, and a thread does not
survive a fork anyway. A process that finds itself forked starts its own thread. Whatever the
WSGI server, the first request each process serves starts its timers.

The holder writes a heartbeat (named value ``timers``) at most every `HEARTBEAT_INTERVAL`
seconds; `CacheTimers.warnings` turns a missing heartbeat or an overdue GC or scheduled preload
into ``/status`` warnings, so scheduled work that silently stopped is visible.

GC is incremental and bounded in time: one run deletes expired entries for at most
`GC_BUDGET` seconds; when more remain, the next run is due a second later instead of after
``gc_interval``. ``last_run``/``next_run`` live in the storage (named value ``gc``).

What the purges that walk nothing (everything, the site, the expired entries) left behind
is removed on every tick of the holder, `GC_BUDGET` seconds at a time, until none is left
(``/status`` shows it as ``gc.pending``): a purge never waits for it, nor does a request.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import Any, Final

from sitecache.cache.api.preload import Preloader, iso_time
from sitecache.cache.engine import CacheEngine
from sitecache.cache.storage import PendingRemoval, StorageError
from sitecache.domain_errors import OutageError

__all__ = ["GC_NAME", "HEARTBEAT_NAME", "PRELOAD_REQUEST_NAME", "CacheTimers"]

logger = logging.getLogger("sitecache.cache.timers")

GC_NAME: Final = "gc"
#: a preload asked for by the command line: the timer holder starts it
PRELOAD_REQUEST_NAME: Final = "preload_request"
LOCK_NAME: Final = "timers"
GC_BUDGET: Final = 0.25
#: the named value the lock holder's heartbeat is written to
HEARTBEAT_NAME: Final = "timers"
#: seconds between two heartbeats of the holder
HEARTBEAT_INTERVAL: Final = 5.0
#: seconds without a heartbeat after which nobody is considered to run the timers
HEARTBEAT_STALE: Final = 30.0
#: seconds past its due time after which a GC run or a scheduled preload is overdue (at least)
OVERDUE_GRACE: Final = 60.0


class CacheTimers:
    """GC and the preload schedule (see the module docstring).

    Args:
        engine: the cache engine.
        preloader: the preloader whose schedule and resumption this drives.
        interval: seconds between ticks.
    """

    def __init__(self, engine: CacheEngine, preloader: Preloader, interval: float = 1.0) -> None:
        self.engine = engine
        self.preloader = preloader
        self.interval = interval
        self._stop = threading.Event()
        self._start_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._owner: str | None = None
        self._pid = os.getpid()
        self._started_at: float | None = None
        self._beaten = float("-inf")
        #: more bounded work each GC run does (static-file expiry)
        self.gc_hooks: list[Callable[[], object]] = []
        #: work every process does on each tick, lock or not (owed purges)
        self.every_tick: list[Callable[[], object]] = []
        #: work the lock holder does on each tick (one process across the storage's users)
        self.holder_jobs: list[Callable[[], object]] = []

    # ------------------------------------------------------------------ state
    def gc_state(self) -> dict[str, Any]:
        """``{last_run, next_run}`` as Unix times (``None`` when unknown)."""
        state: dict[str, Any] = {"last_run": None, "next_run": None}
        try:
            stored = self.engine.read_record(GC_NAME)
        except StorageError:
            return state
        if stored is not None:
            state.update({key: stored.get(key) for key in state})
        return state

    def gc_status(self) -> dict[str, Any]:
        """``/status``'s ``gc`` object: the times (ISO 8601 UTC) and what the purges that walk
        nothing left to remove (``pending``: pages and bytes; zeros when the storage does not
        answer)."""
        state = self.gc_state()
        try:
            pending = self.engine.pending_removal()
        except StorageError:
            pending = PendingRemoval()
        return {
            "last_run": iso_time(state["last_run"]),
            "next_run": iso_time(state["next_run"]),
            "pending": {"entries": pending.entries, "bytes": pending.bytes},
        }

    def _write_gc(self, state: dict[str, Any]) -> None:
        self.engine.write_record(GC_NAME, state)

    # ------------------------------------------------------------------ running
    @property
    def running(self) -> bool:
        """Whether this process's timer thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def ensure_running(self) -> None:
        """Start this process's timer thread unless it runs (cheap when it does).

        Fork-safe: in a forked child (a pre-forking server's worker) the parent's thread, its
        start lock and its lock ownership do not exist; they are reset before starting.
        """
        if os.getpid() != self._pid:
            self._forked()
        if not self.running:
            self.start()

    def _forked(self) -> None:
        self._pid = os.getpid()
        self._stop = threading.Event()
        self._start_lock = threading.Lock()
        self._thread = None
        self._owner = None
        self._started_at = None
        self._beaten = float("-inf")

    def start(self) -> None:
        """Start the timer thread of this process (idempotent, safe from any thread)."""
        with self._start_lock:
            if self.running:
                return
            self._stop.clear()
            self._started_at = self.engine.clock()
            self._thread = threading.Thread(target=self._loop, name="sitecache-timers", daemon=True)
            self._thread.start()
        # Said in the storage at once, so every process (`sitecache cache status` too) sees
        # the timers starting, not only this one: the heartbeat its holder then keeps up.
        try:
            self._heartbeat(self._started_at)
        except StorageError as exc:
            self.engine.storage_warning("cache timers: heartbeat not written: %s", exc)

    def stop(self) -> None:
        """Stop the thread and give the lock up."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._owner is not None:
            self.engine.release(LOCK_NAME, self._owner)
            self._owner = None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                # Every process flushes its own counters, so an idle worker's hits reach the
                # stats too (the request path flushes only when requests come).
                self.engine.maybe_flush(self.engine.clock())
                self.tick()
            except StorageError as exc:
                self.engine.storage_warning("cache timers: storage unavailable: %s", exc)
            except Exception:
                logger.exception("cache timers: a tick failed")

    def tick(self, now: float | None = None) -> bool:
        """One round: this process's every-tick work, then take the lock and run what is due.
        Whether this process holds the lock."""
        self._run(self.every_tick)
        owner = self.engine.acquire(LOCK_NAME, max(5.0, self.interval * 5))
        if owner is None:
            return False
        self._owner = owner
        now = self.engine.clock() if now is None else now
        self._run(self.holder_jobs)
        self.engine.remove_invalidated(GC_BUDGET)
        self.engine.enforce_limits(budget=GC_BUDGET)
        self._heartbeat(now)
        self.run_gc_if_due(now)
        self.run_preload_if_due(now)
        return True

    @staticmethod
    def _run(jobs: list[Callable[[], object]]) -> None:
        """Run each job; a failing one is logged and does not stop the others (a job waiting
        for a service that is down, the site's database, is retried on the next tick; the
        service's outage is logged where it is found, not here every second)."""
        for job in jobs:
            try:
                job()
            except OutageError as exc:
                logger.debug("cache timers: %r waits for a service: %s", job, exc)
            except Exception:
                logger.exception("cache timers: %r failed", job)

    # ------------------------------------------------------------------ health
    def _heartbeat(self, now: float) -> None:
        if now - self._beaten < HEARTBEAT_INTERVAL:
            return
        self._beaten = now
        beat = {"time": now, "pid": os.getpid(), "host": socket.gethostname()}
        self.engine.write_record(HEARTBEAT_NAME, beat)

    def last_heartbeat(self) -> float | None:
        """When the timers' holder last said it works (Unix time), if ever."""
        try:
            beat = self.engine.read_record(HEARTBEAT_NAME)
        except StorageError:
            return None
        value = beat.get("time") if beat is not None else None
        return float(value) if isinstance(value, int | float) else None

    def warnings(self, now: float | None = None) -> list[dict[str, str]]:
        """``/status`` warnings when scheduled work is not running or is overdue:
        ``timers_not_running``, ``gc_overdue``, ``preload_overdue``."""
        now = self.engine.clock() if now is None else now
        found: list[dict[str, str]] = []
        beat = self.last_heartbeat()
        starting = (
            self.running
            and self._started_at is not None
            and now - self._started_at < HEARTBEAT_STALE
        )
        if (beat is None or now - beat > HEARTBEAT_STALE) and not starting:
            since = "has never run" if beat is None else f"last ran {int(now - beat)} s ago"
            found.append(
                {
                    "code": "timers_not_running",
                    "message": "No process runs the cache's scheduled work (GC, scheduled "
                    f"preloads, preloads asked for by the command line): it {since}. Each "
                    "server process starts it with the first request it serves, unless "
                    "cache_timers is false.",
                }
            )
        interval = self.engine.settings(now).gc_interval
        due = self.gc_state()["next_run"]
        if isinstance(due, int | float) and now > due + max(OVERDUE_GRACE, interval):
            found.append(
                {
                    "code": "gc_overdue",
                    "message": f"Garbage collection is {int(now - due)} s overdue "
                    f"(gc_interval is {interval} s): expired pages are not being removed.",
                }
            )
        if self.preloader.interval() > 0:
            state = self.preloader.state()
            scheduled = state["next_run"]
            if (
                not state["running"]
                and isinstance(scheduled, int | float)
                and now > scheduled + OVERDUE_GRACE
            ):
                found.append(
                    {
                        "code": "preload_overdue",
                        "message": f"The scheduled preload is {int(now - scheduled)} s "
                        "overdue (preload_interval).",
                    }
                )
        return found

    def run_gc_if_due(self, now: float) -> bool:
        """Run one bounded GC pass if it is due; whether one ran."""
        settings = self.engine.settings(now)
        interval = settings.gc_interval
        state = self.gc_state()
        if state["next_run"] is None:
            state["next_run"] = now + interval
            self._write_gc(state)
            return False
        if now < float(state["next_run"]):
            return False
        self.engine.purge_expired(budget=GC_BUDGET)
        self.engine.housekeeping(GC_BUDGET / 2)
        for hook in self.gc_hooks:
            try:
                hook()
            except Exception:
                logger.exception("cache GC hook %r failed", hook)
        before = now - settings.stale_while_revalidate
        more = self.engine.has_expired(before)
        state.update(last_run=now, next_run=now + (1 if more else interval))
        self._write_gc(state)
        return True

    def run_preload_if_due(self, now: float) -> bool:
        """Resume an orphaned preload, start a requested or scheduled one; whether one began."""
        preloader = self.preloader
        if preloader.resume():
            return True
        engine = self.engine
        request = engine.read_value(PRELOAD_REQUEST_NAME)
        if request:
            engine.write_value(PRELOAD_REQUEST_NAME, b"")
            preloader.start(wait=0)
            return True
        if preloader.interval() <= 0:
            return False
        state = preloader.state()
        if state["running"]:
            return False
        if state["next_run"] is None:
            state["next_run"] = now + preloader.interval() * 60
            preloader.write_state(state)
            return False
        if now >= float(state["next_run"]):
            preloader.start(wait=0)
            return True
        return False
