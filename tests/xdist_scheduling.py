"""How a parallel run (pytest-xdist, ``pytest -n N --dist loadscope``) shares the tests among
its workers: whole scopes, longest first.

`ScopeScheduling` implements pytest-xdist's public scheduler protocol
(``xdist.scheduler.protocol.Scheduling``, returned from the ``pytest_xdist_make_scheduler``
hook) over two plain functions of a test id, so nothing here depends on a scheduler's private
methods: ``scope_of`` names the unit a worker takes whole (its tests never run on two workers
at once), ``rank_of`` says which units are handed out first (lower first; within a rank, the units
with more tests first, then in collection order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pytest


class Worker(Protocol):
    """What the scheduler uses of pytest-xdist's ``WorkerController``."""

    @property
    def shutting_down(self) -> bool: ...

    def send_runtest_some(self, indices: Sequence[int]) -> None: ...

    def shutdown(self) -> None: ...


def worker_count(tx: Sequence[str]) -> int:
    """How many workers the ``--tx`` specifications start (``-n 3`` is ``["popen"] * 3``; a
    specification may also say ``3*popen``)."""
    count = 0
    for spec in tx:
        times, star, _ = spec.partition("*")
        count += int(times) if star and times.isdigit() else 1
    return count


@dataclass
class _Unit:
    """The tests of one scope still to run, in collection order."""

    scope: str
    rank: int
    nodeids: list[str]


@dataclass
class ScopeScheduling:
    """Hands each worker whole scopes, in the order of their rank.

    A worker gets a new unit when it has at most one test left: pytest-xdist's worker holds
    back its last test until it knows the next one (or is told to stop), so a worker is never
    left idle waiting for work that exists. Once every unit is handed out, a worker that runs
    dry is shut down. A worker that crashes gives its unfinished tests back (except the one
    that crashed, which pytest-xdist reports), to the front of the queue.
    """

    expected_workers: int
    scope_of: Callable[[str], str]
    rank_of: Callable[[str], int]
    hook: Any = None  # the session's ``config.hook``: a collection mismatch is reported there
    collection: list[str] | None = None
    queue: list[_Unit] = field(default_factory=list)
    assigned: dict[Any, list[str]] = field(default_factory=dict)
    collections: dict[Any, list[str]] = field(default_factory=dict)
    positions: dict[Any, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def for_config(
        cls, config: pytest.Config, scope_of: Callable[[str], str], rank_of: Callable[[str], int]
    ) -> ScopeScheduling:
        """The scheduler of the run ``config`` describes (its ``--tx`` workers)."""
        return cls(worker_count(config.getvalue("tx")), scope_of, rank_of, config.hook)

    # ------------------------------------------------------------------ the protocol's state
    @property
    def nodes(self) -> list[Any]:
        """The workers taking part (added and not removed)."""
        return list(self.assigned)

    @property
    def collection_is_completed(self) -> bool:
        """Whether every expected worker has reported its collection (and stays so once the
        tests are handed out, whichever workers finish or crash since)."""
        return self.collection is not None or len(self.collections) >= self.expected_workers

    @property
    def tests_finished(self) -> bool:
        """Whether nothing is left but the last test each worker holds until shut down."""
        if not self.collection_is_completed or self.queue:
            return False
        return all(len(pending) <= 1 for pending in self.assigned.values())

    @property
    def has_pending(self) -> bool:
        """Whether any test is still to run, queued or assigned."""
        return bool(self.queue) or any(self.assigned.values())

    # ------------------------------------------------------------------ workers
    def add_node(self, node: Worker) -> None:
        """A worker came up: it takes work once the collection is complete."""
        self.assigned.setdefault(node, [])

    def add_node_collection(self, node: Worker, collection: Sequence[str]) -> None:
        """Record what ``node`` collected; a worker started later (replacing a crashed one)
        must have collected the same tests, or it is given nothing."""
        if self.collection is not None and list(collection) != self.collection:
            return
        self.collections[node] = list(collection)
        self.positions[node] = {nodeid: index for index, nodeid in enumerate(collection)}

    def remove_node(self, node: Worker) -> str | None:
        """Forget ``node``; return the test it was running if it still had tests (it crashed),
        whose unfinished tests go back to the front of the queue."""
        pending = self.assigned.pop(node, [])
        self.collections.pop(node, None)
        self.positions.pop(node, None)
        if not pending:
            return None
        crashed, *rest = pending
        self._queue_next(rest)
        return crashed

    # ------------------------------------------------------------------ tests
    def schedule(self) -> None:
        """Build the queue of units once every worker has collected, then hand out work; when
        called again (a worker was added), hand out work to the workers that lack it."""
        if self.collection is not None:
            for node in self.nodes:
                self._refill(node)
            return
        collections = list(self.collections.values())
        if any(other != collections[0] for other in collections[1:]):
            self._report_mismatch()
            return
        self.collection = collections[0]
        # Within a rank the larger units first, so that no worker is left with a long module
        # while the others idle (sorted() is stable: units of one size keep their order).
        self.queue = sorted(
            self._units(self.collection), key=lambda unit: (unit.rank, -len(unit.nodeids))
        )
        for node in self.nodes:
            self._refill(node)

    def mark_test_complete(self, node: Worker, item_index: int, duration: float = 0) -> None:
        """``node`` finished the test at ``item_index`` of its collection."""
        self.assigned[node].remove(self.collections[node][item_index])
        self._refill(node)

    def mark_test_pending(self, item: str) -> None:
        """Run ``item`` again (a plugin asked for a rerun): next, in a unit of its own."""
        self._queue_next([item])

    def remove_pending_tests_from_node(self, node: Worker, indices: Sequence[int]) -> None:
        """Take back the tests at ``indices`` that ``node`` was given but has not started:
        they are queued next."""
        taken = {self.collections[node][index] for index in indices}
        self.assigned[node] = [nodeid for nodeid in self.assigned[node] if nodeid not in taken]
        self._queue_next([nodeid for nodeid in self.collections[node] if nodeid in taken])

    # ------------------------------------------------------------------ handing out
    def _units(self, nodeids: Sequence[str]) -> list[_Unit]:
        """``nodeids`` grouped by scope, each unit where its first test came."""
        units: dict[str, _Unit] = {}
        for nodeid in nodeids:
            scope = self.scope_of(nodeid)
            units.setdefault(scope, _Unit(scope, self.rank_of(nodeid), [])).nodeids.append(nodeid)
        return list(units.values())

    def _queue_next(self, nodeids: Sequence[str]) -> None:
        """Queue ``nodeids`` before everything else, and hand out work."""
        self.queue[:0] = self._units(nodeids)
        for node in self.nodes:
            self._refill(node)

    def _refill(self, node: Worker) -> None:
        """Give ``node`` the next units while it has at most one test left, or shut it down
        when there is nothing more to give."""
        if node.shutting_down or node not in self.collections or self.collection is None:
            return
        pending = self.assigned[node]
        while len(pending) <= 1 and self.queue:
            unit = self.queue.pop(0)
            pending.extend(unit.nodeids)
            position = self.positions[node]
            node.send_runtest_some([position[nodeid] for nodeid in unit.nodeids])
        if not self.queue and len(pending) <= 1:
            node.shutdown()

    def _report_mismatch(self) -> None:
        """Fail the run: the workers collected different tests (a test's parameters change
        from one process to the next, say), so an index means different tests."""
        first, *others = self.collections.values()
        lines = ["the workers collected different tests:"]
        for other in others:
            lines += [f"  only on one: {nodeid}" for nodeid in set(first) ^ set(other)]
        report = pytest.CollectReport(
            nodeid="", outcome="failed", longrepr="\n".join(lines[:50]), result=None
        )
        if self.hook is not None:
            self.hook.pytest_collectreport(report=report)
