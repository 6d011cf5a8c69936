"""Fixtures shared by every test package: applications with a private data directory; the
test tiers (`tests.tiers`); how a parallel run (pytest-xdist) shares the tests among its
workers (`tests.xdist_scheduling`)."""

from __future__ import annotations

import errno
import importlib.metadata
import socket
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pytest
from hypothesis import settings
from werkzeug.test import Client

from sitecache.app import App, create_app
from sitecache.auth.db import DbConnection
from sitecache.domain_errors import DomainError
from sitecache.errors import RestError
from sitecache.rest.error_handlers import ErrorHandlers
from tests.data_dirs import DataDirTemplate
from tests.postgres import WorkerSchema
from tests.tiers import ServerGuard, tier_mark
from tests.xdist_scheduling import ScopeScheduling

AppFactory = Callable[..., App]

#: How long one example of a property may take before Hypothesis fails it: two seconds rather
#: than its 200 ms, a timing and not a property (on two cores shared with other work, an example
#: of the cache's coding choice took 276 ms and failed the run).
EXAMPLE_DEADLINE = timedelta(seconds=2)
settings.register_profile("sitecache", deadline=EXAMPLE_DEADLINE)
settings.load_profile("sitecache")

#: The site store's engines; a test module marked `both_engines` runs on each.
ENGINES = ("sqlite", "postgresql")
both_engines = pytest.mark.both_engines


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "both_engines: the tests that use a database run on SQLite and PostgreSQL"
    )
    # A test that starts a server process without the e2e or faults mark fails, loudly.
    guard = ServerGuard()
    guard.install()
    config.pluginmanager.register(guard, "sitecache-server-guard")


#: The modules that list installed packages' entry points (plugins, cache plugins, themes).
ENTRY_POINT_READERS = (
    "sitecache.cache.api.plugins",
    "sitecache.site.extensions",
    "sitecache.site.themes",
)


@pytest.fixture(scope="session", autouse=True)
def entry_points_read_once_per_path() -> Iterator[None]:
    """Every application build lists the installed packages' entry points (about 2.6 ms, some
    3,000 builds in `make check`): listed once per ``sys.path`` and group in a test process.
    A test that installs a package puts a new directory on ``sys.path``, which lists again."""
    read: dict[tuple[tuple[str, ...], str], importlib.metadata.EntryPoints] = {}

    def entry_points(*, group: str) -> importlib.metadata.EntryPoints:
        key = (tuple(sys.path), group)
        found = read.get(key)
        if found is None:
            found = read[key] = importlib.metadata.entry_points(group=group)
        return found

    with pytest.MonkeyPatch.context() as patch:
        for module in ENTRY_POINT_READERS:
            patch.setattr(f"{module}.entry_points", entry_points)
        yield


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `both_engines` that builds applications (it uses ``database_url``, often
    through ``app_factory``) runs once per engine; one that needs no database runs once."""
    marked = metafunc.definition.get_closest_marker("both_engines") is not None
    if marked and "database_url" in metafunc.fixturenames:
        metafunc.parametrize("database_url", ENGINES, indirect=True)


@pytest.fixture
def database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The site database of the test's applications: "" (SQLite under the data directory),
    or, for a module marked `both_engines`, also a migrated PostgreSQL schema the test has to
    itself: its worker's, holding only what the migrations wrote (`tests.postgres.WorkerSchema`)."""
    engine = getattr(request, "param", "sqlite")
    if engine == "sqlite":
        yield ""
        return
    worker_schema = request.getfixturevalue("postgres_worker_schema")
    with worker_schema.lease() as url:
        yield url


@pytest.fixture(scope="session")
def postgres_worker_schema() -> Iterator[WorkerSchema]:
    """This test process's migrated PostgreSQL schema (migrated once, put back after each
    test that used it), dropped when the session ends."""
    schema = WorkerSchema()
    yield schema
    schema.close()


@pytest.fixture(scope="session")
def data_dir_template(tmp_path_factory: pytest.TempPathFactory) -> DataDirTemplate:
    """This test process's migrated data directory (`tests.data_dirs`), made on first use."""
    return DataDirTemplate(tmp_path_factory.mktemp("data-dir-template") / "var")


def uses_template(config: dict[str, Any]) -> bool:
    """Whether an application of ``config`` starts on a copy of the migrated data directory:
    its site database and page cache both live there (SQLite, disk) and its data directory
    does not exist yet (a test building a second application on one directory restarts it)."""
    return (
        config.get("database_url", "") == ""
        and config.get("cache_backend", "disk") == "disk"
        and not Path(config["data_dir"]).exists()
    )


@pytest.fixture
def app_factory(
    tmp_path: Path, database_url: str, data_dir_template: DataDirTemplate
) -> Iterator[AppFactory]:
    """Build applications whose data lives under the test's temporary directory (and in the
    test's own PostgreSQL schema when ``database_url`` names one); closed afterwards. A new
    SQLite site starts on a copy of this process's migrated data directory
    (`tests.data_dirs`): the same files its first start would make, made once."""
    built: list[App] = []

    def factory(**overrides: Any) -> App:
        config: dict[str, Any] = {
            "database_url": database_url,
            "data_dir": str(tmp_path / "var"),
            "site_url": "http://example.org",
            # The cheapest scrypt cost allowed: tests create many users and log in often.
            "password_hash_cost": 1024,
            # No background timer thread per test application: tests tick the timers
            # themselves (tests/e2e run real servers, where the timers start by themselves).
            "cache_timers": False,
        }
        config.update(overrides)
        if uses_template(config):
            data_dir_template.copy_to(Path(config["data_dir"]))
        app = create_app(config)
        built.append(app)
        return app

    yield factory
    # Everything each application opened (a PostgreSQL pool before its schema goes, a debug
    # log file, timer threads), whatever the test did with it.
    for app in built:
        app.close()


@pytest.fixture
def app(app_factory: AppFactory) -> App:
    """An application at http://example.org with default settings."""
    return app_factory()


@pytest.fixture
def client(app: App) -> Client:
    """A werkzeug test client for ``app``."""
    return Client(app)


#: the port of `make run` and of the README's examples
README_PORT = 8000


@pytest.fixture
def port_8000_taken() -> Iterator[None]:
    """Port 8000 held by another listener (``make run``, say) for the test's duration, so a
    test that depends on it fails here rather than on whoever's machine has it taken (#16)."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Several holders at once (pytest-xdist workers each running such a test) all bind it, so
    # none lets it go while another test relies on it; a listener without SO_REUSEPORT (what
    # a server does) still cannot.
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        try:
            holder.bind(("127.0.0.1", README_PORT))
            holder.listen()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            # Already taken by another process: exactly the situation to test.
        yield
    finally:
        holder.close()


def rest_error_of(error: DomainError) -> RestError:
    """The REST error a domain exception answers with (the default error handlers' table)."""
    return ErrorHandlers().to_rest_error(error)


@runtime_checkable
class TraceableConnection(Protocol):
    """A site-store connection that reports each statement it runs (sqlite3's connection and
    `sitecache.auth.postgres.PostgresConnection` both do; `DbConnection` does not promise it)."""

    def set_trace_callback(self, callback: Callable[[str], object] | None, /) -> None: ...


def traceable(connection: DbConnection) -> TraceableConnection:
    """``connection`` itself, checked to be able to trace its statements."""
    assert isinstance(connection, TraceableConnection), type(connection)
    return connection


# ------------------------------------------------------------ tiers and parallel runs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that start servers (`tests.tiers.tier_mark`): ``make check`` leaves
    them out, ``make e2e`` runs only them."""
    for item in items:
        mark = tier_mark(item.nodeid, getattr(item, "fixturenames", ()))
        if mark is not None and item.get_closest_marker(mark) is None:
            item.add_marker(mark)


#: End-to-end modules whose tests each keep the whole machine busy for seconds (the race
#: harness: readers and edits, killed workers, a hung Redis; the short soak): one scope, never
#: two at once.
RACE_MODULES = frozenset(
    {"tests/e2e/test_cache_faults.py", "tests/e2e/test_race.py", "tests/e2e/test_soak_short.py"}
)
#: End-to-end modules whose tests share no server (each deploys its own site): any worker may
#: take any of them.
INDEPENDENT_MODULES = frozenset({"tests/e2e/test_any_server.py", "tests/e2e/test_static_nginx.py"})


#: The fault-injection suite: its own PostgreSQL, Redis and disks, broken under load; one
#: worker runs it whole.
FAULT_SCOPE = "tests/faults"


def xdist_scope(nodeid: str) -> str:
    """The unit of work a worker takes whole: the test's module (its module-scoped servers
    start once), the race modules together, the fault suite together, each test of an
    independent module alone."""
    module = nodeid.split("::", 1)[0]
    if module in RACE_MODULES:
        return "tests/e2e/races"
    if module.startswith(FAULT_SCOPE + "/"):
        return FAULT_SCOPE
    return nodeid if module in INDEPENDENT_MODULES else module


def xdist_rank(nodeid: str) -> int:
    """Which scopes start first: the race modules and the fault suite (the longest), the
    other modules that start servers (seconds each, mostly waiting on them), then the rest."""
    if xdist_scope(nodeid) in ("tests/e2e/races", FAULT_SCOPE):
        return 0
    return 1 if tier_mark(nodeid, ()) is not None else 2


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> ScopeScheduling | None:
    """``--dist loadscope`` with `xdist_scope` as the scope, in the order of `xdist_rank`
    (`tests.xdist_scheduling`: pytest-xdist's public scheduler protocol; its own
    ``--dist loadgroup`` marks are lost under pytest 9, which no longer lets it rename the
    test ids that carry them)."""
    if config.getvalue("dist") != "loadscope":
        return None
    return ScopeScheduling.for_config(config, xdist_scope, xdist_rank)
