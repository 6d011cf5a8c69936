"""Warnings about storage failures, each kind logged at most once per interval.

A failing disk or a stopped Redis fails every request: the cache passes them through, and
says so in the log without flooding it. Each kind of failure is its message template, so one
kind never hides another.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

__all__ = ["RateLimitedLog", "Warn"]

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
        self._last: dict[str, float] = {}

    def __call__(self, message: str, *args: object) -> None:
        """Log ``message % args`` unless the same template was logged within the interval."""
        now = time.monotonic()
        if now - self._last.get(message, float("-inf")) >= self.interval:
            if len(self._last) > MAX_TEMPLATES:
                self._last.clear()
            self._last[message] = now
            logger.warning(message, *args)
