"""A short soak (``bench/soak.py`` runs the long one): three nodes, eight connections each, mixed
reads, edits, comments and purges for about eight seconds, one node killed with SIGKILL and
restarted mid-run. Goals: no error on a surviving node, no page older than an edit or purge that
had returned, nothing left stale, no acknowledged edit or comment lost, the killed node serving
again.
"""

from __future__ import annotations

from pathlib import Path

from tests.cache.conftest import REDIS_URL, redis_or_skip
from tests.e2e.cluster import Cluster
from tests.e2e.soak import Sample, Soak, SoakPost, SoakReport, run_soak
from tests.postgres import schema


def test_a_short_soak_with_a_node_killed_meets_every_goal(tmp_path: Path) -> None:
    redis_or_skip()
    # The site in one PostgreSQL (a schema of its own), each node with its own data directory.
    with schema() as database_url:
        cluster = Cluster(tmp_path, 3, redis_url=REDIS_URL, database_url=database_url)
        cluster.start()
        try:
            report = run_soak(cluster, connections=8, seconds=8.0, progress=print)
        finally:
            cluster.stop()
    print(report.table())
    if not report.ok:
        print(cluster.logs())
    # The run did something of each kind, and the kill happened.
    assert all(report.by_kind.get(kind, 0) > 0 for kind in ("page", "rest", "edit", "comment",
                                                            "purge")), report.by_kind  # fmt: skip
    assert report.edits > 0, report.table()
    assert report.errors_killed > 0, "the killed node never refused a request"
    assert report.killed_served_after_restart > 0, report.table()
    assert not report.errors_surviving, report.errors_surviving[:5]
    assert not report.stale, report.stale[:5]
    assert not report.unsettled, report.unsettled[:5]
    assert not report.lost_edits, report.lost_edits
    assert not report.lost_comments, report.lost_comments[:10]


def test_the_checker_counts_reads_older_than_a_returned_edit_or_purge(tmp_path: Path) -> None:
    soak = Soak(Cluster(tmp_path), [SoakPost(0, 10, "/a/"), SoakPost(1, 11, "/b/")], {}, killed=2)
    soak.floors[0] = [(5.0, 3, "an edit"), (2.0, 1, "an edit"), (7.0, 2, "a purge")]
    soak.floors[1] = [(4.0, 6, "a purge")]
    soak.killed_at, soak.restarted_at = 2.0, 20.0
    soak.samples = [
        Sample("page", 0, 1.0, 0.1, 200, {0: 0, 1: 0}),  # before any write returned: fresh
        Sample("page", 0, 5.5, 0.1, 200, {0: 3, 1: 6}),  # shows both floors: fresh
        Sample("page", 1, 5.5, 0.1, 200, {0: 2}),  # edit v3 had returned at 5.0: stale
        Sample("rest", 1, 8.0, 0.1, 200, {0: 2}),  # a later purge noted v2, but v3 stands
        Sample("page", 0, 4.5, 0.1, 200, {1: 5}),  # purge noted v6 at 4.0: stale
        Sample("page", 1, 3.0, 0.1, 503, {}, "HTTP 503"),  # an error on a surviving node
        Sample("page", 2, 3.0, 0.1, 0, {}, "refused"),  # an error on the killed node
        Sample("page", 2, 21.0, 0.1, 200, {0: 3}),  # the killed node after its restart
    ]
    report = SoakReport(3, 1, 10.0, killed=2)
    soak.judge(report)
    assert len(report.stale) == 3, report.stale
    assert "after a purge that returned v6" in report.stale[2]
    assert report.errors_surviving == ["node 1: HTTP 503"]
    assert report.errors_killed == 1
    assert (report.requests, report.answered) == (8, 7)  # the refused one has no latency
    assert report.killed_served_after_restart == 1
    assert not report.ok
