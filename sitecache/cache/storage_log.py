"""Warnings about storage failures, each kind logged at most once per interval.

A failing disk or a stopped Redis fails every request: the cache passes them through, and
says so in the log without flooding it. Each kind of failure is its message template, so one
kind never hides another.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final, Protocol

from sitecache.bounded_memo import BoundedMemo

__all__ = ["STORAGE_ERROR_COUNTER", "RateLimitedLog", "Warn"]

#: The counter every reported storage failure adds one to (``/site-admin/metrics``).
STORAGE_ERROR_COUNTER: Final = "storage_error"

logger = logging.getLogger("sitecache.cache")

#: Templates remembered before the memory of them is emptied.
MAX_TEMPLATES = 256


class Warn(Protocol):
    """Reports a storage failure: a ``%``-style template and its arguments."""

    def __call__(self, message: str, *args: object) -> None:
        """Log ``message % args`` (maybe not every time)."""


class RateLimitedLog:
    """Logs each message template at most once per ``interval`` seconds (a `Warn`).

    Args:
        interval: seconds between two warnings of one kind.
    """

    def __init__(self, interval: float = 60.0) -> None:
        self.interval = interval
        self._last: BoundedMemo[str, float] = BoundedMemo(MAX_TEMPLATES + 1)
        #: told of every failure, logged or not (the engine counts them: `STORAGE_ERROR_COUNTER`)
        self.count: Callable[[str], object] | None = None

    def __call__(self, message: str, *args: object) -> None:
        """Log ``message % args`` unless the same template was logged within the interval;
        count the failure either way."""
        if self.count is not None:
            self.count(STORAGE_ERROR_COUNTER)
        now = time.monotonic()
        if now - self._last.get(message, float("-inf")) >= self.interval:
            self._last.keep(message, now)
            logger.warning(message, *args)
