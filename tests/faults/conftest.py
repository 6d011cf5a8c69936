"""Fixtures of the fault-injection suite (#29): services of the tests' own that a test breaks
at will (`tests.faults.services`) and sites deployed on them (`tests.faults.site`).

Every fixture skips with the reason when the machine forbids what it needs (no PostgreSQL
binaries, no ``redis-server``, ``mount`` refused), never silently; ``.ci/run`` installs the
binaries. The machine's own Redis and PostgreSQL are never touched.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.faults.services import (
    OwnPostgres,
    OwnRedis,
    ServiceRefused,
    TmpfsMount,
    private_directory,
)

TmpfsFactory = Callable[[str, str], TmpfsMount]


def _refused(exc: ServiceRefused, required_by: str = "") -> None:
    """Skip: the machine forbids what the test needs; fail instead where CI promised it
    (``required_by`` names the variable ``.ci/run`` sets, e.g. ``SITECACHE_REQUIRE_POSTGRES``)."""
    if required_by and os.environ.get(required_by) == "1":
        pytest.fail(f"{exc} ({required_by}=1: .ci/run installs it)")
    pytest.skip(f"the machine forbids it: {exc}")


@pytest.fixture
def own_postgres() -> Iterator[OwnPostgres]:
    """A PostgreSQL cluster of the test's own (``initdb``, started, a ``test`` database),
    stopped and removed afterwards; the test stops and starts it at will."""
    directory = private_directory("sitecache-faults-pg-")
    try:
        try:
            server = OwnPostgres(directory)
        except ServiceRefused as exc:
            _refused(exc, "SITECACHE_REQUIRE_POSTGRES")
            raise  # pragma: no cover - skip raises
        server.init()
        try:
            yield server
        finally:
            server.stop("immediate")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    """A ``redis-server`` of the test's own without persistence, stopped afterwards."""
    try:
        server = OwnRedis(tmp_path / "redis")
    except ServiceRefused as exc:
        _refused(exc, "SITECACHE_REQUIRE_REDIS")
        raise  # pragma: no cover - skip raises
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[TmpfsFactory]:
    """Mount size-limited tmpfs file systems (``tmpfs(name, "16m")``), unmounted afterwards;
    skips where mounting is refused (not root, a container without the capability)."""
    mounted: list[TmpfsMount] = []

    def mount(name: str, size: str) -> TmpfsMount:
        disk = TmpfsMount(tmp_path / name, size)
        try:
            disk.mount()
        except ServiceRefused as exc:
            _refused(exc)
        mounted.append(disk)
        return disk

    yield mount
    for disk in reversed(mounted):
        disk.unmount()
