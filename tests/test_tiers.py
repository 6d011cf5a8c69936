"""The test tiers (which tests start servers) and how a parallel run shares the tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from tests.conftest import FAULT_SCOPE, pytest_collection_modifyitems, xdist_rank, xdist_scope
from tests.tiers import UnmarkedServerError, starts_server, tier_mark
from tests.xdist_scheduling import ScopeScheduling, worker_count


# ---------------------------------------------------------------------- tiers
@pytest.mark.parametrize(
    ("nodeid", "fixtures", "expected"),
    [
        ("tests/e2e/test_site.py::test_home", (), "e2e"),
        ("tests/examples/test_flask_app.py::test_page", (), "e2e"),
        ("tests/faults/test_abuse.py::test_flood", (), "faults"),
        ("tests/cache/test_http_semantics_e2e.py::test_post", (), "e2e"),
        # a build, not a unit test: the documentation site through Sphinx
        ("tests/docs/test_site.py::test_builds", (), "e2e"),
        ("tests/docs/test_drift.py::test_keys", (), None),
        ("tests/cache/test_breaker.py::test_hung", ("tmp_path", "private_redis"), "faults"),
        ("tests/cache/test_breaker.py::test_opens", ("tmp_path",), None),
        ("tests/test_app.py::test_ok", ("app", "client"), None),
        # a directory name inside another path is not the directory
        ("tests/cache/e2e/test_x.py::test_y", (), None),
    ],
)
def test_tier_mark_by_directory_module_and_fixture(
    nodeid: str, fixtures: tuple[str, ...], expected: str | None
) -> None:
    assert tier_mark(nodeid, fixtures) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ([sys.executable, "-m", "gunicorn", "--bind", "127.0.0.1:0", "a:b"], "python -m gunicorn"),
        (["/usr/sbin/nginx", "-c", "/tmp/n.conf"], "nginx"),
        (["/usr/sbin/nginx", "-t", "-c", "/tmp/n.conf"], None),  # checks a configuration
        (["redis-server", "--port", "7000"], "redis-server"),
        (["redis-server", "--version"], None),
        (["su", "postgres", "-s", "/bin/sh", "-c", "/usr/lib/pg/bin/initdb -D x"], "initdb"),
        (["su", "postgres", "-c", "whoami"], None),  # a user named postgres is no server
        ("pg_ctl -D data start", "pg_ctl"),
        (["/usr/bin/chromedriver", "--port=0"], "chromedriver"),
        ([".venv/bin/sitecache", "--data-dir", "var", "serve", "--bind", ":0"], "sitecache serve"),
        (["echo", "sitecache", "serve"], None),
        ([sys.executable, "-m", "sitecache.cli", "serve"], "sitecache serve"),
        ([sys.executable, "-m", "sitecache.cli", "init"], None),
        ([sys.executable, "-c", "import gunicorn; print('-m gunicorn')"], None),
        ([b"/usr/bin/uwsgi", b"--http", b":0"], "uwsgi"),
        (["git", "status"], None),
    ],
)  # fmt: skip
def test_starts_server_names_the_server_a_command_starts(
    command: Sequence[str | bytes] | str, expected: str | None
) -> None:
    assert starts_server(command) == expected


def test_an_unmarked_test_that_starts_a_server_fails_loudly() -> None:
    # The guard refuses before the program runs: it need not exist.
    with pytest.raises(UnmarkedServerError, match="starts a server \\(gunicorn\\)") as refused:
        subprocess.run(["/nonexistent/bin/gunicorn", "app:app"], check=False)
    assert "test_an_unmarked_test_that_starts_a_server_fails_loudly" in str(refused.value)
    assert "not marked e2e or faults" in str(refused.value)
    # A program that is no server runs.
    assert subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0


@pytest.mark.e2e
def test_a_marked_test_may_start_a_server() -> None:
    with pytest.raises(FileNotFoundError):  # refused by the system, not by the guard
        subprocess.run(["/nonexistent/bin/gunicorn", "app:app"], check=False)


@dataclass
class FakeItem:
    """A collected test, as much of it as the marking hook reads."""

    nodeid: str
    fixturenames: tuple[str, ...] = ()
    marks: list[str] = field(default_factory=list)

    def get_closest_marker(self, name: str) -> str | None:
        return name if name in self.marks else None

    def add_marker(self, name: str) -> None:
        self.marks.append(name)


def test_collection_marks_each_server_test_once(pytestconfig: pytest.Config) -> None:
    items = [
        FakeItem("tests/e2e/test_site.py::test_home"),
        FakeItem("tests/faults/test_abuse.py::test_flood", marks=["e2e"]),
        FakeItem("tests/cache/test_breaker.py::test_hung", ("private_redis",)),
        FakeItem("tests/examples/test_flask_app.py::test_page", marks=["e2e"]),
        FakeItem("tests/test_app.py::test_ok", ("app",)),
    ]
    pytest_collection_modifyitems(pytestconfig, items)  # type: ignore[arg-type]
    assert [item.marks for item in items] == [
        ["e2e"],
        ["e2e", "faults"],
        ["faults"],
        ["e2e"],  # marked already: not twice
        [],
    ]


# ---------------------------------------------------------------------- parallel runs
def test_xdist_scope_groups_races_faults_modules_and_independent_tests() -> None:
    assert xdist_scope("tests/e2e/test_race.py::test_a") == "tests/e2e/races"
    assert xdist_scope("tests/e2e/test_soak_short.py::test_b") == "tests/e2e/races"
    assert xdist_scope("tests/faults/test_abuse.py::test_c") == FAULT_SCOPE
    assert xdist_scope("tests/faults/test_sqlite_outages.py::test_d[x]") == FAULT_SCOPE
    assert xdist_scope("tests/e2e/test_site.py::test_e") == "tests/e2e/test_site.py"
    independent = "tests/e2e/test_any_server.py::test_f[waitress]"
    assert xdist_scope(independent) == independent
    assert xdist_scope("tests/test_app.py::TestX::test_g") == "tests/test_app.py"


def test_xdist_rank_starts_the_longest_scopes_first() -> None:
    assert xdist_rank("tests/e2e/test_race.py::test_a") == 0
    assert xdist_rank("tests/faults/test_abuse.py::test_c") == 0
    assert xdist_rank("tests/e2e/test_site.py::test_e") == 1
    assert xdist_rank("tests/examples/test_flask_app.py::test_f") == 1
    assert xdist_rank("tests/cache/test_http_semantics_e2e.py::test_g") == 1
    assert xdist_rank("tests/test_app.py::test_g") == 2


def test_worker_count_reads_the_tx_specifications() -> None:
    assert worker_count(["popen"] * 3) == 3
    assert worker_count(["2*popen", "popen//python=python3"]) == 3


@dataclass(eq=False)
class FakeWorker:
    """A worker that records what it is sent (pytest-xdist's ``WorkerController`` in short)."""

    name: str
    sent: list[list[int]] = field(default_factory=list)
    shutting_down: bool = False

    def send_runtest_some(self, indices: Sequence[int]) -> None:
        self.sent.append(list(indices))

    def shutdown(self) -> None:
        self.shutting_down = True


COLLECTION = [
    "tests/test_app.py::test_1",
    "tests/test_app.py::test_2",
    "tests/e2e/test_site.py::test_3",
    "tests/e2e/test_race.py::test_4",
    "tests/test_cli.py::test_5",
    "tests/e2e/test_soak_short.py::test_6",
    "tests/faults/test_abuse.py::test_7",
    "tests/faults/test_sqlite_outages.py::test_8",
]


def started(workers: int) -> tuple[ScopeScheduling, list[FakeWorker]]:
    scheduler = ScopeScheduling(workers, xdist_scope, xdist_rank)
    nodes = [FakeWorker(f"gw{n}") for n in range(workers)]
    for node in nodes:
        scheduler.add_node(node)
        assert not scheduler.collection_is_completed
        scheduler.add_node_collection(node, COLLECTION)
    assert scheduler.collection_is_completed
    scheduler.schedule()
    return scheduler, nodes


def run_all(scheduler: ScopeScheduling, nodes: list[FakeWorker]) -> dict[str, list[str]]:
    """Complete every test in the order each worker was sent them; which worker ran what."""
    ran: dict[str, list[str]] = {node.name: [] for node in nodes}
    done: dict[str, int] = {node.name: 0 for node in nodes}
    while not scheduler.tests_finished:
        progressed = False
        for node in nodes:
            sent = [index for batch in node.sent for index in batch]
            if done[node.name] < len(sent):
                index = sent[done[node.name]]
                done[node.name] += 1
                ran[node.name].append(COLLECTION[index])
                scheduler.mark_test_complete(node, index)
                progressed = True
        assert progressed, "the scheduler left work nobody was sent"
    # What each worker holds back until it is shut down (its last test) runs then.
    for node in nodes:
        assert node.shutting_down
        sent = [index for batch in node.sent for index in batch]
        for index in sent[done[node.name] :]:
            ran[node.name].append(COLLECTION[index])
            scheduler.mark_test_complete(node, index)
    return ran


def test_each_scope_runs_whole_on_one_worker_longest_first() -> None:
    scheduler, nodes = started(2)
    # The race modules and the fault suite first, one to each worker.
    assert [COLLECTION[i] for i in nodes[0].sent[0]] == [COLLECTION[3], COLLECTION[5]]
    assert [COLLECTION[i] for i in nodes[1].sent[0]] == [COLLECTION[6], COLLECTION[7]]
    ran = run_all(scheduler, nodes)
    assert sorted(ran["gw0"] + ran["gw1"]) == sorted(COLLECTION)  # each test once
    for scope in {xdist_scope(nodeid) for nodeid in COLLECTION}:
        holders = [
            name for name, tests in ran.items() if any(xdist_scope(t) == scope for t in tests)
        ]
        assert len(holders) == 1, scope
    assert all(node.shutting_down for node in nodes)
    assert not scheduler.has_pending


def test_the_run_finishes_when_a_worker_that_ran_dry_has_left() -> None:
    scheduler, nodes = started(2)
    early, late = nodes
    # The early worker finishes its units and leaves (pytest-xdist removes a finished worker).
    while not early.shutting_down:
        held = scheduler.assigned[early][0]
        scheduler.mark_test_complete(early, COLLECTION.index(held))
    for held in list(scheduler.assigned[early]):
        scheduler.mark_test_complete(early, COLLECTION.index(held))
    assert scheduler.remove_node(early) is None
    assert scheduler.collection_is_completed
    assert not scheduler.tests_finished  # the late one still works
    while scheduler.assigned[late][1:]:
        scheduler.mark_test_complete(late, COLLECTION.index(scheduler.assigned[late][0]))
    assert scheduler.tests_finished  # what makes pytest-xdist shut the session down


def test_within_a_rank_the_larger_scopes_go_first() -> None:
    collection = [
        "tests/test_a.py::test_1",
        "tests/test_b.py::test_1",
        "tests/test_b.py::test_2",
        "tests/test_b.py::test_3",
        "tests/test_c.py::test_1",
        "tests/test_c.py::test_2",
        "tests/e2e/test_d.py::test_1",
    ]
    scheduler = ScopeScheduling(1, xdist_scope, xdist_rank)
    node = FakeWorker("gw0")
    scheduler.add_node(node)
    scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    assert node.sent[0] == [6]  # the end-to-end module first, by its rank
    assert node.sent[1] == [1, 2, 3]  # then the largest module
    assert [unit.scope for unit in scheduler.queue] == ["tests/test_c.py", "tests/test_a.py"]


def test_a_worker_is_given_more_before_it_runs_dry() -> None:
    scheduler, nodes = started(1)
    [node] = nodes
    # one unit (two tests) sent; after the first completes, one is left: the next unit comes
    assert len(node.sent) == 1
    scheduler.mark_test_complete(node, node.sent[0][0])
    assert len(node.sent) == 2
    assert not node.shutting_down


def test_more_workers_than_scopes_leaves_the_extra_ones_shut_down() -> None:
    scheduler, nodes = started(8)
    idle = [node for node in nodes if not node.sent]
    assert idle
    assert all(node.shutting_down for node in idle)
    run_all(scheduler, nodes)


def test_a_crashed_worker_gives_back_its_unfinished_tests_but_the_one_that_crashed() -> None:
    scheduler, nodes = started(2)
    crashed = nodes[0]
    first, second = crashed.sent[0]
    assert scheduler.remove_node(crashed) == COLLECTION[first]
    # a new worker takes the rest of the scope, first
    replacement = FakeWorker("gw2")
    scheduler.add_node(replacement)
    scheduler.add_node_collection(replacement, COLLECTION)
    scheduler.schedule()
    assert replacement.sent[0] == [second]
    nodes = [nodes[1], replacement]
    ran = run_all(scheduler, nodes)
    assert sorted(ran["gw1"] + ran["gw2"]) == sorted(set(COLLECTION) - {COLLECTION[first]})


def test_a_worker_that_collected_other_tests_gets_nothing() -> None:
    scheduler, _ = started(2)
    stranger = FakeWorker("gw9")
    scheduler.add_node(stranger)
    scheduler.add_node_collection(stranger, COLLECTION[:3])
    scheduler.schedule()
    assert stranger.sent == []


def test_tests_taken_back_from_a_worker_run_next() -> None:
    scheduler, nodes = started(1)
    [node] = nodes
    sent = node.sent[0]
    scheduler.remove_pending_tests_from_node(node, sent[1:])
    # sent again before any other unit (to the only worker, which has room again)
    assert node.sent[1] == sent[1:]
    scheduler.mark_test_pending(COLLECTION[0])
    assert scheduler.queue[0].nodeids == [COLLECTION[0]]  # the worker has two tests: queued


def test_different_collections_are_reported_and_nothing_runs() -> None:
    reports: list[pytest.CollectReport] = []

    class Hook:
        def pytest_collectreport(self, report: pytest.CollectReport) -> None:
            reports.append(report)

    scheduler = ScopeScheduling(2, xdist_scope, xdist_rank, Hook())
    one, two = FakeWorker("gw0"), FakeWorker("gw1")
    for node, collection in ((one, COLLECTION), (two, COLLECTION[1:])):
        scheduler.add_node(node)
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    [report] = reports
    assert report.failed
    assert COLLECTION[0] in str(report.longrepr)
    assert one.sent == two.sent == []
    assert scheduler.tests_finished
