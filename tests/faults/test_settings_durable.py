"""The cache settings and plugin switches survive the cache storage (#29 row 5): a Redis of
the test's own (no persistence) is restarted, flushed and made to evict under a real site
(`sitecache serve`, its settings changed over REST), and not one setting changes; the server
log says the copy was rebuilt and nothing was lost.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.faults.services import OwnRedis
from tests.faults.site import FaultSite

CACHE_API = "/site-json/site-cache/v1"
#: An administrator's choices, none of them a default.
CHOSEN: dict[str, Any] = {
    "max_age": 7777,
    "rejected_uris": ["/private/", "/members/"],
    "cache_query_strings": True,
    "lock_down": True,
    "preload_posts": 25,
}
SWITCHES = {"awaiting_moderation": True, "domain_mapping": True}
#: Seconds within which every worker serves the same settings again (a poll round is 1 s).
SETTLE_SECONDS = 5.0


@pytest.fixture
def site(
    tmp_path: Path, own_redis: OwnRedis, request: pytest.FixtureRequest
) -> Iterator[FaultSite]:
    """A site whose page cache lives in the test's own Redis, its settings and switches set."""
    deployed = FaultSite(
        tmp_path / "site", ['cache_backend = "redis"', f'redis_url = "{own_redis.url()}"']
    )
    deployed.init(demo=False)
    deployed.serve()
    failed_before = request.session.testsfailed
    try:
        deployed.admin_json("POST", f"{CACHE_API}/settings", CHOSEN)
        deployed.admin_json("POST", f"{CACHE_API}/plugins", SWITCHES)
        yield deployed
    finally:
        deployed.stop()
        if request.session.testsfailed > failed_before:
            print(f"\n----- server log -----\n{deployed.log()[-20000:]}")


def _state(site: FaultSite) -> tuple[dict[str, Any], dict[str, bool]]:
    """Every setting and every switch as the server answers them."""
    settings = site.admin_json("GET", f"{CACHE_API}/settings")
    plugins = site.admin_json("GET", f"{CACHE_API}/plugins")
    return settings, {plugin["key"]: plugin["enabled"] for plugin in plugins}


def _unchanged(site: FaultSite, before: tuple[dict[str, Any], dict[str, bool]]) -> None:
    """Every answer for `SETTLE_SECONDS` (both workers answer some) equals ``before``."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        settings, switches = _state(site)
        changed = {key: value for key, value in settings.items() if before[0].get(key) != value}
        assert not changed, f"settings changed: {changed}"
        assert switches == before[1]
        time.sleep(0.2)


def _chosen(site: FaultSite) -> tuple[dict[str, Any], dict[str, bool]]:
    state = _state(site)
    assert {key: state[0][key] for key in CHOSEN} == CHOSEN
    assert all(state[1][key] for key in SWITCHES)
    return state


def test_a_redis_restart_changes_no_setting(site: FaultSite, own_redis: OwnRedis) -> None:
    before = _chosen(site)
    own_redis.restart()  # no persistence: every key is gone
    time.sleep(1.5)  # a poll round: the workers find the copy missing
    _unchanged(site, before)
    assert "copied back from the site's database (nothing was lost)" in site.log()


def test_flushdb_changes_no_setting(site: FaultSite, own_redis: OwnRedis) -> None:
    before = _chosen(site)
    for _ in range(3):
        own_redis.flushdb()
        time.sleep(1.5)
        _unchanged(site, before)


def test_eviction_changes_no_setting(tmp_path: Path, site: FaultSite, own_redis: OwnRedis) -> None:
    before = _chosen(site)
    client = redis.Redis(port=own_redis.port)
    client.config_set("maxmemory", "4mb")
    client.config_set("maxmemory-policy", "allkeys-lru")
    filler = b"x" * 64 * 1024
    for index in range(200):  # 12.5 MB into 4 MB: Redis evicts
        client.set(f"filler:{index}", filler)
    assert int(client.info("stats")["evicted_keys"]) > 0
    # Whether or not the LRU picked them, the copies themselves are evicted too.
    copies = [key for key in client.scan_iter("*:v:*") if key.endswith((b":settings", b":plugins"))]
    if copies:
        client.delete(*copies)
    time.sleep(1.5)
    _unchanged(site, before)
