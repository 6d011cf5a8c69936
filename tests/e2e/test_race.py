"""Readers and REST edits together: no read that starts after an edit returned shows the old page.

Short runs of the race harness (`tests.e2e.race`; ``bench/race_bench.py`` runs long ones) on real
gunicorn nodes with the gthread workers of ``sitecache serve``: one node on the disk cache (with
and without ``clear_on_post_edit``), and two nodes sharing a Redis cache and one site database,
every request sent with the site's public Host as a load balancer would.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cache.conftest import REDIS_URL, redis_or_skip
from tests.e2e.race import HOST, RaceReport, RaceSite, admin_auth, run_race, setup_site, start_nodes
from tests.e2e.server import LiveServer

DURATION = 4.0


@pytest.fixture
def disk_node(tmp_path: Path) -> Iterator[list[LiveServer]]:
    nodes = start_nodes(tmp_path, 1, [])
    yield nodes
    for node in nodes:
        node.stop()


@pytest.fixture
def redis_nodes(tmp_path: Path) -> Iterator[list[LiveServer]]:
    redis_or_skip()
    namespace = f"race-{uuid.uuid4().hex}"
    nodes = start_nodes(
        tmp_path,
        2,
        [
            'cache_backend = "redis"',
            f'redis_url = "{REDIS_URL}"',
            f'cache_namespace = "{namespace}"',
        ],
    )
    yield nodes
    for node in nodes:
        node.stop()
    from sitecache.cache.storage.redis import RedisStorage

    RedisStorage(REDIS_URL, namespace).clear_namespace()


def race(nodes: list[LiveServer], *, settings: dict[str, object] | None = None) -> RaceReport:
    site = setup_site(nodes[0], admin_auth(nodes[0]), HOST)
    if settings:
        set_settings(nodes[0], site, settings)
    return run_race(nodes, site, duration=DURATION)


def set_settings(node: LiveServer, site: RaceSite, settings: dict[str, object]) -> None:
    response = node.request(
        "POST",
        "/site-json/site-cache/v1/settings",
        json.dumps(settings),
        {**site.auth, "Host": HOST},
    )
    assert response.status == 200, response.body


def assert_no_stale_read(report: RaceReport, nodes: list[LiveServer]) -> None:
    print(report.summary())
    failed = report.stale or report.stuck or report.errors or report.missing
    if failed:
        for node in nodes:
            print(f"----- {node.log_path} -----\n{node.log()[-4000:]}")
    assert report.edits >= 5, report.summary()
    assert report.reads >= 100, report.summary()
    assert not report.errors, report.summary()
    assert not report.dropped, report.summary()
    assert not report.missing, report.summary()
    assert not report.stale, report.summary()
    assert not report.stuck, report.summary()


def test_no_read_after_an_edit_returned_is_stale_on_one_disk_node(
    disk_node: list[LiveServer],
) -> None:
    assert_no_stale_read(race(disk_node), disk_node)


def test_no_read_is_stale_when_an_edit_clears_the_whole_site(disk_node: list[LiveServer]) -> None:
    report = race(disk_node, settings={"clear_on_post_edit": True})
    assert_no_stale_read(report, disk_node)


def test_no_read_is_stale_on_two_nodes_sharing_redis(redis_nodes: list[LiveServer]) -> None:
    assert_no_stale_read(race(redis_nodes), redis_nodes)
