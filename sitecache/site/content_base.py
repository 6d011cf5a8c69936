"""`ContentBase`: what every part of the content service shares: the database, transactions
and batches, the hooks (fired after commit), the clock and the site options."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sitecache.auth.store import SiteStore
from sitecache.domain_errors import InvalidValueError
from sitecache.hooks import Hooks
from sitecache.site.migrations import migrate_content
from sitecache.site.options import OptionStore

__all__ = ["ContentBase"]


class ContentBase:
    """The site database, transactions, hooks and options of the content service.

    Args:
        store: the site database (the content migrations are applied on construction).
        hooks: the application's hooks.
        option_defaults: defaults of options taken from the configuration.
        clock: seconds since the epoch.
    """

    def __init__(
        self,
        store: SiteStore,
        hooks: Hooks,
        option_defaults: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.hooks = hooks
        self.clock = clock
        self.options = OptionStore(store, dict(option_defaults or {}))
        self._local = threading.local()
        migrate_content(store)

    # ------------------------------------------------------------------ transactions and hooks
    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, or the surrounding `batch`'s."""
        if getattr(self._local, "queue", None) is not None:
            yield self.store.connection()
            return
        with self.store.transaction() as db:
            yield db

    def _fire(self, name: str, *args: Any) -> None:
        """Fire an action now, or when the surrounding `batch` commits."""
        queue: list[tuple[str, tuple[Any, ...]]] | None = getattr(self._local, "queue", None)
        if queue is not None:
            queue.append((name, args))
        else:
            self.hooks.do_action(name, *args)

    @contextmanager
    def batch(self) -> Iterator[ContentBase]:
        """Many writes in one transaction (this thread's): all commit or none do, and their
        hooks fire after the commit, in order (none fire on a rollback)."""
        if getattr(self._local, "queue", None) is not None:
            raise RuntimeError("batches do not nest")
        self._local.queue = []
        try:
            with self.store.transaction():
                yield self
            queue: list[tuple[str, tuple[Any, ...]]] = self._local.queue
        finally:
            self._local.queue = None
        for name, args in queue:
            self.hooks.do_action(name, *args)

    def now(self) -> int:
        """The current time, whole seconds since the epoch."""
        return int(self.clock())

    # ------------------------------------------------------------------ options
    def get_option(self, name: str) -> Any:
        """The value of a known site option (its default when never set)."""
        return self.options.get(name)

    def update_option(self, name: str, value: Any) -> bool:
        """Set a site option; ``False`` when the value did not change.

        Fires ``updated_option(name, old, new)`` when it changed.

        Raises:
            InvalidValueError: an unknown option or a value its schema refuses.
        """
        self.options.validate(name, value)
        if name == "timezone" and value:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise InvalidValueError(
                    "invalid_option", "timezone is not a known timezone."
                ) from exc
        old = self.options.get(name)
        if old == value:
            return False
        with self._write():
            self.options.write(name, value)
        self._fire("updated_option", name, old, value)
        return True

    def timezone(self) -> tzinfo:
        """The site's timezone (option ``timezone``; UTC when empty or unknown)."""
        name = self.get_option("timezone")
        if name:
            try:
                return ZoneInfo(str(name))
            except (ZoneInfoNotFoundError, ValueError):
                return UTC
        return UTC
