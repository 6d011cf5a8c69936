"""Preload in-process: anonymous visits through the cache, progress, cancel, resume, schedule."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from sitecache.cache.api.preload import LOCK_NAME, PROGRESS_NAME, URLS_NAME
from sitecache.cache.api.timers import PRELOAD_REQUEST_NAME
from tests.auth.conftest import FakeClock, build_site
from tests.cache.api.conftest import Api, add_page
from tests.conftest import AppFactory


def serve(api: Api, count: int, seen: list[dict[str, Any]] | None = None) -> list[str]:
    """``count`` pages the preload visits (through the ``cache_preload_urls`` filter)."""
    paths = [f"/page-{number}" for number in range(count)]
    for path in paths:
        add_page(api.site, path, seen=seen)
    api.site.app.hooks.add_filter("cache_preload_urls", lambda urls, settings: [*urls, *paths])
    return paths


def test_a_preload_visits_every_url_and_fills_the_cache(api: Api) -> None:
    paths = serve(api, 5)
    progress = api.json("POST", "/preload", {"enable": True})
    assert progress["running"] is True
    assert progress["total"] == 6
    assert progress["started"] is not None
    assert progress["finished"] is None
    api.site.app.cache_api.preloader.wait(10)
    progress = api.json("GET", "/status")["preload"]
    assert progress["running"] is False
    assert (progress["done"], progress["failed"]) == (6, 0)
    assert progress["finished"] is not None
    listed = {row["url"] for row in api.json("GET", "/cache", query={"per_page": 100})}
    assert listed == {"http://example.org/", *(f"http://example.org{path}" for path in paths)}
    assert "; hit" in api.page(paths[0]).headers["Cache-Status"]


def test_a_finished_preload_has_written_its_counts_for_other_processes(api: Api) -> None:
    serve(api, 3)
    api.json("POST", "/preload", {"enable": True})
    api.site.app.cache_api.preloader.wait(10)
    # What `sitecache cache stats` in another process reads: the shared counters, with no
    # flush of this process's own counts in between.
    shared = api.site.app.cache.engine.storage.counters()
    assert shared.get("preload:miss", 0) == 4


def test_the_preload_visits_as_an_anonymous_visitor_in_process(api: Api) -> None:
    seen: list[dict[str, Any]] = []
    serve(api, 2, seen)
    api.json("POST", "/preload", {"enable": True})
    api.site.app.cache_api.preloader.wait(10)
    assert len(seen) == 2
    for environ in seen:
        assert "HTTP_COOKIE" not in environ
        assert "HTTP_AUTHORIZATION" not in environ
        assert environ["HTTP_USER_AGENT"] == "sitecache-preload"
        assert environ["HTTP_HOST"] == "example.org"
        # In-process: no socket carried the request.
        assert environ["wsgi.input"].read() == b""


def test_pages_that_cannot_be_cached_count_as_failed(api: Api) -> None:
    add_page(api.site, "/broken", status=500)
    add_page(api.site, "/cookie", headers={"Set-Cookie": "a=b"})
    api.site.app.hooks.add_filter(
        "cache_preload_urls", lambda urls, settings: [*urls, "/broken", "/cookie"]
    )
    api.json("POST", "/preload", {"enable": True})
    api.site.app.cache_api.preloader.wait(10)
    progress = api.json("GET", "/status")["preload"]
    assert (progress["total"], progress["done"], progress["failed"]) == (3, 3, 2)


class Gate:
    """A page view that blocks until opened (to hold a preload mid-way)."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.reached = threading.Event()

    def install(self, api: Api, path: str) -> None:
        from werkzeug.wrappers import Response

        def view(request: Any) -> Response:
            self.reached.set()
            self.open.wait(10)
            return Response("<html>" + "g" * 300 + "</html>", mimetype="text/html")

        api.site.app.views[path] = view


def test_a_second_start_while_running_changes_nothing(api: Api) -> None:
    gate = Gate()
    gate.install(api, "/gate")
    serve(api, 3)
    api.site.app.hooks.add_filter("cache_preload_urls", lambda urls, settings: ["/gate", *urls])
    first = api.json("POST", "/preload", {"enable": True})
    assert gate.reached.wait(5)
    second = api.json("POST", "/preload", {"enable": True})
    assert second["running"] is True
    assert (second["started"], second["total"]) == (first["started"], first["total"])
    gate.open.set()
    api.site.app.cache_api.preloader.wait(10)
    assert api.json("GET", "/status")["preload"]["done"] == first["total"]


def test_cancel_stops_at_once_and_is_idempotent(api: Api) -> None:
    gate = Gate()
    gate.install(api, "/gate")
    paths = serve(api, 20)
    api.site.app.hooks.add_filter("cache_preload_urls", lambda urls, settings: ["/gate", *urls])
    api.json("POST", "/preload", {"enable": True})
    assert gate.reached.wait(5)
    cancelled = api.json("POST", "/preload", {"enable": False})
    assert cancelled["running"] is False
    assert cancelled["finished"] is not None
    gate.open.set()
    api.site.app.cache_api.preloader.wait(10)
    progress = api.json("GET", "/status")["preload"]
    assert progress["running"] is False
    assert progress["done"] < progress["total"]
    assert "stored" in api.page(paths[-1]).headers["Cache-Status"]  # never preloaded
    assert api.json("POST", "/preload", {"enable": False}) == progress


def test_cancel_with_nothing_running_is_a_no_op(api: Api) -> None:
    assert api.json("POST", "/preload", {"enable": False})["running"] is False


def test_a_preload_whose_process_died_resumes_where_it_stopped(api: Api) -> None:
    paths = serve(api, 4)
    engine = api.site.app.cache.engine
    urls = ["/", *paths]
    # What a killed process leaves: progress "running" at 2 of 5, its lock gone (expired).
    engine.storage.set_value(
        URLS_NAME, json.dumps({"base": "http://example.org", "urls": urls}).encode()
    )
    state = {"running": True, "total": 5, "done": 2, "failed": 0, "current": urls[2],
             "started": engine.clock(), "finished": None, "run_id": "r1"}  # fmt: skip
    engine.storage.set_value(PROGRESS_NAME, json.dumps(state).encode())
    timers = api.site.app.cache_api.timers
    assert timers.tick() is True
    api.site.app.cache_api.preloader.wait(10)
    progress = api.json("GET", "/status")["preload"]
    assert (progress["running"], progress["done"]) == (False, 5)
    listed = {row["url"] for row in api.json("GET", "/cache")}
    # Only the URLs after the resume point were visited.
    assert listed == {f"http://example.org{path}" for path in urls[2:]}


def test_a_preload_held_by_another_process_is_not_resumed(api: Api) -> None:
    engine = api.site.app.cache.engine
    state = {"running": True, "total": 5, "done": 2, "run_id": "r1"}
    engine.storage.set_value(PROGRESS_NAME, json.dumps(state).encode())
    assert engine.storage.acquire_lock(LOCK_NAME, "another-process", 30)
    assert api.site.app.cache_api.preloader.resume() is False
    assert api.json("POST", "/preload", {"enable": True})["done"] == 2


def test_a_scheduled_preload_runs_every_preload_interval(api: Api) -> None:
    serve(api, 1)
    api.json("POST", "/settings", {"preload_interval": 10})
    timers = api.site.app.cache_api.timers
    now = api.site.app.cache.engine.clock()
    assert timers.run_preload_if_due(now) is False  # schedules the first run
    assert api.json("GET", "/status")["preload"]["next_run"] is not None
    assert timers.run_preload_if_due(now + 599) is False
    assert timers.run_preload_if_due(now + 601) is True
    api.site.app.cache_api.preloader.wait(10)
    progress = api.json("GET", "/status")["preload"]
    assert progress["done"] == 2
    assert progress["next_run"] is not None


def test_a_preload_requested_through_the_storage_starts_in_the_timer_process(api: Api) -> None:
    api.site.app.cache.engine.storage.set_value(PRELOAD_REQUEST_NAME, b"1")
    assert api.site.app.cache_api.timers.tick() is True
    api.site.app.cache_api.preloader.wait(10)
    assert api.json("GET", "/status")["preload"]["done"] == 1
    assert not api.site.app.cache.engine.storage.get_value(PRELOAD_REQUEST_NAME)


def test_enable_must_be_a_boolean_and_present(api: Api) -> None:
    for body in ({}, {"enable": "maybe"}, {"enable": True, "running": False}, {"start": True}):
        response = api.call("POST", "/preload", body)
        assert response.status_code == 400, body
        assert response.get_json()["code"] == "rest_invalid_param"
    assert api.json("GET", "/status")["preload"]["started"] is None


def test_only_one_process_runs_the_timers(app_factory: AppFactory, tmp_path: Any) -> None:
    first = build_site(app_factory(data_dir=str(tmp_path / "shared")), FakeClock())
    second_app = app_factory(data_dir=str(tmp_path / "shared"))
    assert first.app.cache_api.timers.tick() is True
    assert second_app.cache_api.timers.tick() is False
    first.app.cache_api.timers.stop()
    assert second_app.cache_api.timers.tick() is True


def test_gc_removes_expired_entries_within_its_time_budget(api: Api) -> None:
    paths = serve(api, 3)
    for path in paths:
        api.page(path)
    engine = api.site.app.cache.engine
    keys = engine.storage.keys_for("host", None)
    engine.storage.mark_stale(keys, engine.clock() - 3600)
    timers = api.site.app.cache_api.timers
    now = engine.clock()
    timers.run_gc_if_due(now)
    started = time.monotonic()
    assert timers.run_gc_if_due(now + 601) is True
    assert time.monotonic() - started < 5
    assert api.json("GET", "/cache") == []
    gc = timers.gc_state()
    assert gc["last_run"] == now + 601
    assert gc["next_run"] == now + 601 + 600


@pytest.mark.parametrize(
    "environ",
    [{"SERVER_SOFTWARE": "gunicorn/23"}, {"SERVER_SOFTWARE": "waitress"}, {}],
    ids=["gunicorn", "waitress", "no-server-software"],
)
def test_requests_on_many_threads_start_one_timer_thread(api: Api, environ: dict[str, str]) -> None:
    # #16: under any PEP 3333 server, not only when SERVER_SOFTWARE says gunicorn.
    cache_api = api.site.app.cache_api
    cache_api.autostart_timers = True  # as create_app() sets it (cache_timers = true)
    barrier = threading.Barrier(8)

    def request() -> None:
        barrier.wait()
        cache_api.tick(time.time() + 10, environ)

    threads = [threading.Thread(target=request) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        named = [t for t in threading.enumerate() if t.name == "sitecache-timers"]
        assert len(named) == 1
        assert cache_api.timers.running
    finally:
        cache_api.timers.stop()
    assert not cache_api.timers.running


def test_the_content_site_names_the_urls_newest_first_within_preload_posts(api: Api) -> None:
    content = api.site.app.content
    author = api.site.users["administrator"].id
    for number in range(3):
        content.create_post(
            title=f"Post {number}", status="publish", author=author, date_gmt=1_700_000_000 + number
        )
    urls = api.site.app.cache_api.preload_urls()
    assert urls[0] == "http://example.org/"
    assert [url.rsplit("/", 2)[-2] for url in urls[1:4]] == ["post-2", "post-1", "post-0"]
    api.json("POST", "/settings", {"preload_posts": 1, "preload_taxonomies": False})
    assert len(api.site.app.cache_api.preload_urls()) == 2
    api.json("POST", "/preload", {"enable": True})
    api.site.app.cache_api.preloader.wait(10)
    progress = api.json("GET", "/status")["preload"]
    assert (progress["done"], progress["failed"]) == (2, 0)
