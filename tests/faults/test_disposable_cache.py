"""#29's cache rows on real processes: a damaged disk-cache index (before boot, while serving,
in a directory that cannot be written), the data directory's disk full, the static-file purge
race and a Redis key of the wrong type. Each proves the acceptance's figures
(`tests.faults.cache_faults.check_figures`: no HTTP 500, nothing over 10 s, recovery within
5 s, nothing lost or stale) and what its row must show."""

from __future__ import annotations

import json
from pathlib import Path

from tests.faults.cache_faults import check_figures
from tests.faults.cache_scenarios import (
    cache_directory_read_only,
    corrupt_index_before_boot,
    corrupt_index_while_serving,
    disk_full,
    redis_wrong_type,
    static_purge_race,
)


def show(result: dict[str, object]) -> str:
    return json.dumps(result, indent=1, default=str)


def test_a_damaged_index_is_moved_aside_by_the_command_line_and_the_booting_workers(
    tmp_path: Path,
) -> None:
    result = corrupt_index_before_boot(tmp_path)
    print(show(result))
    checks = result["checks"]
    assert isinstance(checks, dict)
    assert checks["cli_status_exit"] == 0, result  # the first draft: exit 1
    assert checks["cli_status_rebuilt"], result
    assert checks["cli_flush_all_exit"] == 0, result  # the first draft: exit 1
    assert checks["healthz"] == 200, result
    assert "cache_storage_rebuilt" in checks["warnings"], result
    assert checks["quarantined"] == 1, result  # the newest copy only
    check_figures(result)


def test_an_index_damaged_while_serving_is_moved_aside_once_without_a_restart(
    tmp_path: Path,
) -> None:
    result = corrupt_index_while_serving(tmp_path, seconds=7.0)
    print(show(result))
    checks = result["checks"]
    assert isinstance(checks, dict)
    assert checks["quarantined"] == 1, result  # once, whichever worker found it
    assert checks["healthz"] == 200, result
    check_figures(result)


def test_an_index_that_cannot_be_moved_aside_is_passed_through_until_it_can(
    tmp_path: Path,
) -> None:
    result = cache_directory_read_only(tmp_path)
    print(show(result))
    checks = result["checks"]
    assert isinstance(checks, dict)
    # Read-only: every page served, uncached, and said why.
    assert checks["requests_read_only"] > 0, result
    assert checks["bypassed_read_only"] > 0, result
    status, body = checks["healthz_read_only"]
    assert status == 200, result  # the cache is disposable: the node keeps serving
    assert body["status"] == "warn", result
    assert body["checks"]["storage"] == {"status": "warn", "backend": "disk", "error": "damaged"}
    assert "cache_storage_unusable" in body["warnings"], result
    assert "cache_storage_unusable" in checks["warnings_read_only"], result
    # Writable again: moved aside, the cache works, nothing to warn of but the copy.
    assert checks["healthz"] == 200, result
    assert "cache_storage_unusable" not in checks["warnings"], result
    assert "cache_storage_rebuilt" in checks["warnings"], result
    assert checks["quarantined"] == 1, result
    check_figures(result)


def test_a_full_disk_serves_pages_unstored_reports_the_disk_and_stores_again_once_freed(
    tmp_path: Path,
) -> None:
    result = disk_full(tmp_path)
    print(show(result))
    checks = result["checks"]
    assert isinstance(checks, dict)
    assert checks["served_unstored"] > 0, result  # misses answered, not stored
    assert checks["hits_while_full"] > 0, result  # cached pages still served
    status, body = checks["healthz_full"]
    assert status == 503, result
    assert body["failing"] == ["disk"], result  # the first draft: 200 "ok"
    assert body["checks"]["disk"]["disks"][0]["level"] == "full", result
    assert "disk_full" in checks["warnings_full"], result
    assert checks["healthz_ok_after_s"] <= 5, result
    assert checks["healthz"] == 200, result
    check_figures(result)


def test_no_static_copy_outlives_the_purge_that_landed_while_it_was_written(
    tmp_path: Path,
) -> None:
    result = static_purge_race(tmp_path, seconds=6.0)
    print(show(result))
    checks = result["checks"]
    assert isinstance(checks, dict)
    assert checks["stale_copies"] == [], result  # the first draft: copies of older versions
    assert checks["copies_read"] > 0, result  # copies are written all the same
    assert checks["final_copy_current"], result
    check_figures(result)


def test_a_redis_key_of_the_wrong_type_is_dropped_and_the_cache_starts_empty(
    tmp_path: Path,
) -> None:
    result = redis_wrong_type(tmp_path, seconds=7.0)
    print(show(result))
    checks = result["checks"]
    assert isinstance(checks, dict)
    assert checks["foreign_left"] == [], result
    check_figures(result)
