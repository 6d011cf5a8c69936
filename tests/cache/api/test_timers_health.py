"""The cache's scheduled work under any server: fork-safe lazy timers and ``/status`` warnings
when GC or scheduled preloads are not running (#16)."""

from __future__ import annotations

import json
import os
import time

import pytest

from sitecache.cache import CacheEngine, MemoryStorage, PageCache
from sitecache.cache.api import CacheApi
from sitecache.cache.api.timers import GC_NAME
from sitecache.hooks import Hooks
from tests.cache.api.conftest import Api


def codes(api: Api) -> list[str]:
    return [warning["code"] for warning in api.json("GET", "/status")["warnings"]]


def test_status_warns_when_no_process_runs_the_timers(api: Api) -> None:
    # Before #16, under waitress or uWSGI nothing ran GC, and /status said nothing.
    warnings = api.json("GET", "/status")["warnings"]
    [warning] = [w for w in warnings if w["code"] == "timers_not_running"]
    assert "has never run" in warning["message"]
    api.site.app.cache_api.timers.tick()
    assert "timers_not_running" not in codes(api)


def test_status_warns_when_the_timers_stopped_beating(api: Api) -> None:
    timers = api.site.app.cache_api.timers
    timers.tick(time.time() - 100)
    warnings = api.json("GET", "/status")["warnings"]
    [warning] = [w for w in warnings if w["code"] == "timers_not_running"]
    assert "last ran 10" in warning["message"]


def test_timers_just_started_in_this_process_are_not_reported_missing(api: Api) -> None:
    timers = api.site.app.cache_api.timers
    timers.interval = 60  # started, not ticked yet
    timers.ensure_running()
    try:
        assert timers.running
        assert "timers_not_running" not in codes(api)
    finally:
        timers.stop()


def test_status_warns_when_gc_is_overdue(api: Api) -> None:
    engine = api.site.app.cache.engine
    timers = api.site.app.cache_api.timers
    now = engine.clock()
    timers.tick(now)
    engine.storage.set_value(
        GC_NAME, json.dumps({"last_run": None, "next_run": now - 700}).encode()
    )
    assert "gc_overdue" in codes(api)
    assert timers.run_gc_if_due(now) is True
    assert "gc_overdue" not in codes(api)


def test_status_warns_when_a_scheduled_preload_is_overdue(api: Api) -> None:
    api.json("POST", "/settings", {"preload_interval": 10})
    cache_api = api.site.app.cache_api
    now = cache_api.engine.clock()
    cache_api.timers.tick(now)
    state = cache_api.preloader.state()
    state["next_run"] = now - 120
    cache_api.preloader.write_state(state)
    assert "preload_overdue" in codes(api)
    api.json("POST", "/settings", {"preload_interval": 0})
    assert "preload_overdue" not in codes(api)


def test_the_first_request_starts_the_timers_whatever_the_server(api: Api) -> None:
    cache_api = api.site.app.cache_api
    cache_api.autostart_timers = True  # what cache_timers = true (the default) sets
    try:
        # A werkzeug test client sends no SERVER_SOFTWARE at all.
        assert api.page("/").status_code in (200, 404)
        assert cache_api.timers.running
    finally:
        cache_api.timers.stop()


def test_cache_timers_false_leaves_them_off(api: Api) -> None:
    assert api.page("/").status_code in (200, 404)
    assert not api.site.app.cache_api.timers.running


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_worker_starts_its_own_timers_and_never_passes_for_its_parent() -> None:
    # gunicorn --preload: the application is made in the master, workers are forked from it.
    engine = CacheEngine(MemoryStorage())
    api = CacheApi(PageCache(lambda environ, start: [], engine=engine), Hooks())
    api.timers.interval = 60
    api.timers.ensure_running()
    held = engine.acquire("timers", 60)  # the parent holds the lock (this thread)
    assert held is not None
    pid = os.fork()
    if pid == 0:  # the worker
        status = 0
        try:
            if api.timers.running:  # the parent's thread does not exist here
                status |= 1
            api.timers.ensure_running()
            if not api.timers.running:
                status |= 2
            # The same thread ident and the same engine, but another process: not the holder.
            if engine.acquire("timers", 60) is not None:
                status |= 4
            api.timers.stop()
        except BaseException:
            status |= 8
        os._exit(status)
    _, code = os.waitpid(pid, 0)
    api.timers.stop()
    assert os.waitstatus_to_exitcode(code) == 0
