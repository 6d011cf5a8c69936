"""A health check that answers within its own time limit, whatever the service it checks does.

`/healthz` must answer a load balancer within about a second even while the database or the
cache storage hangs: each of its checks runs in a thread of its own (`TimedProbe`), and the
caller waits for it at most until a deadline. A check still running at the deadline is a
failure ("did not answer in time"); while it keeps running, later calls report it at once
instead of starting another (a hung service never piles up threads). The thread lives as long
as its process, so what it keeps per thread (a database connection) is kept once.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

__all__ = ["TimedProbe"]


class _Worker:
    """One probe thread and the events it is driven by."""

    def __init__(self, probe: TimedProbe) -> None:
        self.wanted = threading.Event()
        self.done = threading.Event()
        self.stopped = False
        self.running = False
        self.outcome: str | None = None
        self.thread = threading.Thread(
            target=probe.work, args=(self,), name=f"sitecache-probe-{probe.name}", daemon=True
        )


class TimedProbe:
    """Runs ``check`` in a thread of its own, at most one at a time.

    Args:
        name: what is checked (the thread's name).
        check: raises when the service fails; returns when it answers.
    """

    def __init__(self, name: str, check: Callable[[], object]) -> None:
        self.name = name
        self.check = check
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._worker: _Worker | None = None

    def start(self) -> None:
        """Start a check unless one is running (cheap; never blocks)."""
        with self._lock:
            if os.getpid() != self._pid:  # a forked child: the parent's thread is not here
                self._pid = os.getpid()
                self._worker = None
            worker = self._worker
            if worker is None:
                worker = self._worker = _Worker(self)
                worker.thread.start()
            if worker.running:
                return
            worker.running = True
            worker.done.clear()
            worker.wanted.set()

    def result(self, deadline: float) -> str | None:
        """Wait for the check until ``deadline`` (`time.monotonic`); ``None`` when the
        service answered, else why not (its error, or that it did not answer in time)."""
        worker = self._worker
        if worker is None:
            return "not checked"
        if not worker.done.wait(max(0.0, deadline - time.monotonic())):
            return "did not answer in time"
        return worker.outcome

    def run(self, timeout: float) -> str | None:
        """`start`, then `result` within ``timeout`` seconds."""
        self.start()
        return self.result(time.monotonic() + timeout)

    def stop(self) -> None:
        """End the thread once the check it runs (if any) is over; `start` makes a new one."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stopped = True
            worker.wanted.set()
            worker.thread.join(1.0)

    def work(self, worker: _Worker) -> None:
        """The probe thread: one check each time `start` asks, until `stop`."""
        while True:
            worker.wanted.wait()
            worker.wanted.clear()
            if worker.stopped:
                return
            try:
                self.check()
                outcome = None
            except Exception as exc:  # any failure is the probe's finding
                outcome = f"{type(exc).__name__}: {exc}"
            with self._lock:
                worker.outcome = outcome
                worker.running = False
                worker.done.set()
