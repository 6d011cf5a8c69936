"""`ContentBase`: what every part of the content service shares: the database, transactions
and batches, the hooks (fired after commit), the clock and the site options.

Every write runs in a transaction whose hook calls are queued and fired after it commits. The
`transaction_listeners` see the queued calls twice: just before the commit, with the open
transaction (to record work owed by the change in the same transaction, e.g. the cache's purge
outbox), and right after the hooks fired: even when an action raises (the committed change's
listeners always run; the action's exception then reaches the caller).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, tzinfo
from typing import Any, Protocol, TypeVar, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sitecache.auth.db import DbConnection
from sitecache.auth.store import SiteStore
from sitecache.domain_errors import InvalidValueError
from sitecache.hooks import Hooks
from sitecache.site.migrations import register_content
from sitecache.site.options import PAGE_OPTIONS, OptionStore

__all__ = ["ContentBase", "HookCall", "TransactionListener", "transactional"]

#: One queued action: ``(name, arguments)``.
HookCall = tuple[str, tuple[Any, ...]]


class TransactionListener(Protocol):
    """Told of every content transaction's hook calls (see the module docstring)."""

    def before_commit(self, db: DbConnection, calls: Sequence[HookCall]) -> None:
        """The transaction is about to commit; writes to ``db`` commit with it (or not)."""

    def after_commit(self, calls: Sequence[HookCall]) -> None:
        """The transaction committed and its hooks fired."""


Method = TypeVar("Method", bound=Callable[..., Any])


def transactional(method: Method) -> Method:
    """Run a write method in one transaction (`ContentBase.batch`): its writes, the reads it
    makes after them and its hook calls belong to it, so the transaction listeners see every
    hook call before the commit."""

    @functools.wraps(method)
    def in_transaction(self: ContentBase, *args: Any, **kwargs: Any) -> Any:
        with self.batch():
            return method(self, *args, **kwargs)

    return cast(Method, in_transaction)


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
        #: told of each transaction's hook calls before and after it commits
        self.transaction_listeners: list[TransactionListener] = []
        #: changes with every committed write transaction: what was read before it moved may
        #: be stale (a request's memo of posts reads again)
        self.generation = 0
        register_content(store)

    # ------------------------------------------------------------------ transactions and hooks
    @contextmanager
    def _write(self) -> Iterator[DbConnection]:
        """A write transaction, or the surrounding one's (see `batch`)."""
        with self.batch():
            yield self.store.connection()

    def _fire(self, name: str, *args: Any) -> None:
        """Fire an action now, or when the surrounding transaction commits."""
        queue: list[HookCall] | None = getattr(self._local, "queue", None)
        if queue is not None:
            queue.append((name, args))
        else:
            self.hooks.do_action(name, *args)

    def queue_action(self, name: str, *args: Any) -> None:
        """Fire an action when the surrounding transaction commits (now when there is none);
        the transaction listeners see it with the content service's own actions."""
        self._fire(name, *args)

    @contextmanager
    def batch(self) -> Iterator[ContentBase]:
        """Writes in one transaction (this thread's; a batch inside a batch joins it): all
        commit or none do, and their hooks fire after the commit, in order (none fire on a
        rollback). The transaction listeners see the hook calls before and after (after even
        when an action raises: that exception is raised once they ran)."""
        if getattr(self._local, "queue", None) is not None:
            yield self
            return
        queue: list[HookCall] = []
        self._local.queue = queue
        try:
            with self.store.transaction() as db:
                yield self
                for listener in self.transaction_listeners:
                    listener.before_commit(db, queue)
        finally:
            self._local.queue = None
        self.generation += 1
        # The change is committed whatever its actions do: an action that raises (a plugin's
        # bug) stops the actions after it, as a fatal error would, but never keeps the
        # listeners from applying what the change owes (its cache purge) before the error
        # reaches the caller.
        try:
            for name, args in queue:
                self.hooks.do_action(name, *args)
        finally:
            for listener in self.transaction_listeners:
                listener.after_commit(queue)

    def now(self) -> int:
        """The current time, whole seconds since the epoch."""
        return int(self.clock())

    # ------------------------------------------------------------------ options
    def get_option(self, name: str) -> Any:
        """The value of a known site option (its default when never set)."""
        return self.options.get(name)

    @transactional
    def update_option(self, name: str, value: Any) -> bool:
        """Set a site option; ``False`` when the value did not change.

        Fires ``updated_option(name, old, new)`` when it changed.

        Raises:
            InvalidValueError: an unknown option or a value its schema refuses; a
                `PAGE_OPTIONS` value other than 0 that is not a published page's id.
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
            if name in PAGE_OPTIONS and value:
                self._check_page_option(name, int(value))
            self.options.write(name, value)
            self._fire("updated_option", name, old, value)
        return True

    def _check_page_option(self, name: str, page_id: int) -> None:
        """Refuse a front-page option naming anything but a published page (read inside the
        write's transaction, so the page cannot go between the check and the write).

        Raises:
            InvalidValueError: ``rest_invalid_param`` with the option's message in ``params``.
        """
        row = (
            self.store.connection()
            .execute("SELECT type, status FROM posts WHERE id = ?", (page_id,))
            .fetchone()
        )
        if row is None or str(row[0]) != "page" or str(row[1]) != "publish":
            message = f"{name} is not the ID of a published page."
            raise InvalidValueError(
                "rest_invalid_param", f"Invalid parameter(s): {name}", {"params": {name: message}}
            )

    def timezone(self) -> tzinfo:
        """The site's timezone (option ``timezone``; UTC when empty or unknown)."""
        name = self.get_option("timezone")
        if name:
            try:
                return ZoneInfo(str(name))
            except (ZoneInfoNotFoundError, ValueError):
                return UTC
        return UTC
