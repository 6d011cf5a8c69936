"""`Storage` is the sum of its roles: each member of the protocol belongs to one role (or to
the store's own upkeep), and every built-in backend plays each role."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sitecache.cache.storage import (
    Announcer,
    EntryStore,
    Generations,
    LockStore,
    SharedState,
    Storage,
)
from sitecache.cache.storage.opening import missing_members
from tests.cache.conftest import BACKENDS, make_storage

ROLES = (EntryStore, SharedState, LockStore, Generations, Announcer)
#: what a store does for itself rather than for one role
UPKEEP = {"backend", "location", "fill_locks", "warnings", "on_reset", "close"}


def members(protocol: type) -> set[str]:
    """The public members ``protocol`` itself declares."""
    return {name for name in vars(protocol) if not name.startswith("_")} | set(
        getattr(protocol, "__annotations__", {})
    )


def test_every_member_of_storage_belongs_to_exactly_one_role() -> None:
    declared = [members(role) for role in ROLES]
    every = set().union(*declared)
    assert sum(len(names) for names in declared) == len(every)  # no member in two roles
    assert members(Storage) == UPKEEP
    assert all(role in Storage.__mro__ for role in ROLES)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    storage = make_storage(request.param, tmp_path / "cache")
    yield storage
    storage.close()


def test_every_built_in_backend_plays_every_role(store: Storage) -> None:
    assert missing_members(store) == []
    for role in ROLES:
        assert all(hasattr(store, name) for name in members(role)), role.__name__
