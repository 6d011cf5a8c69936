"""A circuit breaker for a store reached over the network (Redis).

A store that hangs (a stopped Redis, a dropped route) makes every request wait out its socket
timeouts. After a failure the breaker *opens*: for a short interval every call fails at once
with `StorageUnavailable`, so requests pass through to the application instead of waiting.
When the interval is over one call (the *probe*) is let through while the others still fail
fast; its success closes the breaker, its failure opens it again for twice as long, up to
`MAX_PAUSE` seconds. `StorageBase.translate_errors` runs every call of a backend that has a
breaker through `before`, `succeeded` and `failed`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from sitecache.cache.storage.records import StorageUnavailable

__all__ = ["CircuitBreaker", "StorageUnavailable"]

FIRST_PAUSE: Final = 0.25
MAX_PAUSE: Final = 5.0


class CircuitBreaker:
    """Open, closed or probing (see the module docstring); one per process and store.

    Args:
        clock: monotonic seconds (tests pass a fake one).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._open_until = 0.0
        self._pause = 0.0
        self._probing = False
        self._last_error = ""

    @property
    def is_open(self) -> bool:
        """Whether calls fail fast now."""
        return self._pause > 0 and (self._probing or self.clock() < self._open_until)

    def before(self) -> bool:
        """Check before a call: raises when the breaker is open; ``True`` when this call is
        the probe.

        Raises:
            StorageUnavailable: the breaker is open (or another call is probing).
        """
        if self._pause == 0:
            return False
        with self._lock:
            if self._pause == 0:
                return False
            if self._probing or self.clock() < self._open_until:
                raise StorageUnavailable(
                    f"the store is not answering; retrying within {self._pause:g} s "
                    f"(last error: {self._last_error})"
                )
            self._probing = True
            return True

    def succeeded(self, probe: bool) -> None:
        """The call answered: close the breaker."""
        if self._pause == 0 and not probe:
            return
        with self._lock:
            self._pause = 0.0
            self._probing = False

    def failed(self, error: BaseException, probe: bool) -> None:
        """The call failed as an unreachable store does: open (for longer after a probe)."""
        with self._lock:
            self._last_error = str(error) or type(error).__name__
            if not self._pause:
                self._pause = FIRST_PAUSE
            elif probe:
                self._pause = min(MAX_PAUSE, self._pause * 2)
            else:
                return  # a call in flight when the breaker opened: one outage opens it once
            self._open_until = self.clock() + self._pause
            self._probing = False
