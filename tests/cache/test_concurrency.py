"""`PageCache` under concurrency and faults (#15): purges that overlap renders and memory tiers,
collapsed misses, one regeneration per stale key, unreadable entries, Vary on CGI headers, and
the purge hold."""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.cache import (
    CacheEngine,
    CacheEntry,
    CacheRules,
    MemoryStorage,
    PageCache,
    Storage,
)
from sitecache.cache.entry import EXPIRES_OFFSET, EntryInfo
from sitecache.cache.fills import Fill
from sitecache.cache.storage import ANY_GENERATION, Dimension
from tests.cache.conftest import BACKENDS, FakeClock, PageApp, make_storage

SITE = "http://example.org"


def build(app: Any, storage: Storage | None = None, clock: FakeClock | None = None,
          hold_path: Path | None = None, **settings: Any) -> PageCache:  # fmt: skip
    engine = CacheEngine(
        storage or MemoryStorage(),
        CacheRules(hosts=frozenset({"example.org"})),
        clock=clock or FakeClock(),
        hold_path=hold_path,
    )
    if settings:
        assert isinstance(engine.update_settings(settings), dict)
    return PageCache(app, engine=engine)


def get(cache: PageCache, path: str = "/", **headers: str) -> Any:
    return Client(cache, use_cookies=False).get(path, base_url=SITE, headers=headers)


def cleanup(storage: Storage, backend: str) -> None:
    if backend == "redis":
        storage.clear_namespace()  # type: ignore[attr-defined]
    storage.close()


# ---------------------------------------------------------------------- purges and memory
class PurgedRightAfterStoring(MemoryStorage):
    """A purge lands between a render's store and the moment it keeps the page in memory, and
    another request of the same process runs in between (so the process has already seen the
    purge's generation when the render keeps its copy)."""

    def __init__(self) -> None:
        super().__init__()
        self.cache: PageCache | None = None
        self.purges = 0

    def put(self, key: str, data: bytes, info: EntryInfo, ttl: float | None, *,
            generation: object = ANY_GENERATION, replaces: bytes | None = None,
            release: tuple[str, str] | None = None) -> bool:  # fmt: skip
        stored = super().put(key, data, info, ttl, generation=generation, replaces=replaces)
        if stored and info.status and self.cache is not None and not self.purges:
            self.purges += 1
            self.cache.purge_all()
            get(self.cache, "/elsewhere/")  # another thread of this process, after the purge
        return stored


def test_a_purge_between_storing_and_keeping_in_memory_is_not_undone(page_app: PageApp) -> None:
    storage = PurgedRightAfterStoring()
    cache = build(page_app, storage)
    storage.cache = cache
    first = get(cache, "/post/")
    assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert storage.purges == 1
    second = get(cache, "/post/")
    assert not second.headers["Cache-Status"].startswith("sitecache; hit"), second.headers
    assert second.data != first.data  # rendered again, not the purged copy


class StoredWhileAPurgeLooks(MemoryStorage):
    """A render that read the generation before a purge began stores its page right after
    the purge has looked its keys up."""

    def __init__(self) -> None:
        super().__init__()
        self.late_render: tuple[str, bytes, EntryInfo, object] | None = None
        self.stored_late: bool | None = None

    def keys_for(self, dimension: Dimension, values: Iterable[str] | None) -> set[str]:
        found = super().keys_for(dimension, values)
        if self.late_render is not None:
            key, data, info, seen = self.late_render
            self.late_render = None
            self.stored_late = self.put(key, data, info, None, generation=seen)
        return found


def test_a_page_rendered_before_a_purge_began_never_outlives_it() -> None:
    from sitecache.cache.entry import encode_entry

    storage = StoredWhileAPurgeLooks()
    engine = CacheEngine(storage)
    old = CacheEntry(url=f"{SITE}/post/", host="example.org", path="/post/", variant="",
                     status=200, headers=(), body=b"old title", gzip_body=b"", created=1.0,
                     expires=0.0, tags=("post-1",))  # fmt: skip
    seen = storage.generation()  # the render began: it read the generation, then the site
    storage.late_render = ("a" * 32, encode_entry(old), old.info("a" * 32), seen)
    engine.purge_tags(["post-1"])  # the edit's purge
    assert storage.stored_late is False  # refused: the purge had begun
    assert storage.get("a" * 32) is None


class ReadWhileAPurgeRemoves(MemoryStorage):
    """A request reads the entry into memory while a purge is between its two bumps."""

    def __init__(self) -> None:
        super().__init__()
        self.cache: PageCache | None = None

    def read_during_the_next_purge(self, cache: PageCache) -> None:
        """Have the next delete or purge of everything read the page through ``cache``."""
        self.cache = cache

    def _read_now(self) -> None:
        cache, self.cache = self.cache, None
        if cache is not None:
            cache.tier = type(cache.tier)(cache.tier.max_bytes)  # nothing kept before
            assert get(cache).headers["Cache-Status"].startswith("sitecache; hit")

    def delete(self, keys: Iterable[str]) -> Any:
        self._read_now()
        return super().delete(keys)

    def invalidate_all(self) -> Any:
        self._read_now()  # a purge of everything: between its bumps, before the new epoch
        return super().invalidate_all()


@pytest.mark.parametrize("scope", ["all", "url"])
def test_a_copy_read_into_memory_during_a_purge_is_not_served_after_it(
    page_app: PageApp, scope: str
) -> None:
    storage = ReadWhileAPurgeRemoves()
    cache = build(page_app, storage)
    first = get(cache)
    storage.read_during_the_next_purge(cache)
    if scope == "all":
        cache.purge_all()
    else:
        cache.purge_url("/")
    assert storage.cache is None  # the read happened inside the purge
    after = get(cache)
    assert after.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert after.data != first.data


class EditedWhileRendering(PageApp):
    """The content changes (and is purged) while a render of the old content is in flight."""

    def __init__(self) -> None:
        super().__init__()
        self.cache: PageCache | None = None
        self.version = 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        shown = self.version
        if self.cache is not None and shown == 0:
            self.version = 1
            self.cache.purge_all()  # the edit's purge runs before this render is stored
        self.calls += 1
        start_response("200 OK", [("Content-Type", "text/html")])
        return [f"<html><body>{'<p>x</p>' * 40} version {shown}</body></html>".encode()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_render_that_overlapped_a_purge_is_answered_but_not_stored(
    tmp_path: Path, backend: str
) -> None:
    app = EditedWhileRendering()
    storage = make_storage(backend, tmp_path)
    cache = build(app, storage)
    app.cache = cache
    try:
        first = get(cache)
        assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=purged"
        assert b"version 0" in first.data
        second = get(cache)
        assert b"version 1" in second.data
        assert second.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    finally:
        cleanup(storage, backend)


# ---------------------------------------------------------------------- collapsed misses
def concurrently(count: int, visit: Any) -> list[Any]:
    barrier = threading.Barrier(count)
    results: list[Any] = []
    lock = threading.Lock()

    def run() -> None:
        barrier.wait()
        result = visit()
        with lock:
            results.append(result)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


@pytest.mark.parametrize("backend", BACKENDS)
def test_sixty_concurrent_first_requests_render_the_page_once(
    page_app: PageApp, tmp_path: Path, backend: str
) -> None:
    storage = make_storage(backend, tmp_path)
    cache = build(page_app, storage)
    page_app.delay = 0.3
    try:
        answers = concurrently(60, lambda: get(cache, "/popular/"))
        statuses = [answer.headers["Cache-Status"] for answer in answers]
        assert page_app.calls == 1, statuses
        assert statuses.count("sitecache; fwd=uri-miss; stored") == 1
        # Every other request waited on the one render, or (on a loaded machine, where a thread
        # may start only after the page was stored) found it stored: never a second render.
        others = [status for status in statuses if not status.endswith("; stored")]
        assert len(others) == 59
        assert all(
            status == "sitecache; fwd=uri-miss; collapsed" or status.startswith("sitecache; hit")
            for status in others
        ), statuses
        assert len({answer.data for answer in answers}) == 1
    finally:
        cleanup(storage, backend)


def test_waiters_in_other_processes_are_answered_from_the_lead(
    page_app: PageApp, tmp_path: Path
) -> None:
    # Two engines over one disk directory behave as two worker processes.
    lead_process = build(page_app, make_storage("disk", tmp_path))
    other_process = build(page_app, make_storage("disk", tmp_path))
    page_app.delay = 0.4
    lead = threading.Thread(target=get, args=(lead_process, "/slow/"))
    lead.start()
    time.sleep(0.1)
    waiter = get(other_process, "/slow/")
    lead.join()
    assert waiter.headers["Cache-Status"] == "sitecache; fwd=uri-miss; collapsed"
    assert page_app.calls == 1


def test_a_page_that_may_not_be_stored_is_rendered_for_every_waiter(page_app: PageApp) -> None:
    cache = build(page_app)
    page_app.headers.append(("Set-Cookie", "visitor=1"))
    page_app.delay = 0.2
    answers = concurrently(10, lambda: get(cache, "/cookie/"))
    assert page_app.calls == 10  # nothing to share: each request gets its own answer
    assert all("detail=set_cookie" in answer.headers["Cache-Status"] for answer in answers)
    # Remembered as "pass" for a while: later requests render at once, without a lock.
    fill = cache.engine.fills.begin(get_key(cache, "/cookie/"))
    assert fill.lead
    assert fill.owner is None
    assert not fill.registered


def get_key(cache: PageCache, path: str) -> str:
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": path, "HTTP_HOST": "example.org",
               "wsgi.url_scheme": "http", "SCRIPT_NAME": "", "QUERY_STRING": ""}  # fmt: skip
    _, decision = cache._classifier.classify(environ, cache.engine.settings())
    return decision.base


def test_a_lead_that_fails_lets_its_waiters_render(page_app: PageApp) -> None:
    failures = {"left": 1}

    def flaky(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if failures["left"]:
            failures["left"] -= 1
            time.sleep(0.2)
            raise RuntimeError("the first render breaks")
        return page_app(environ, start_response)

    cache = build(flaky)
    outcomes: list[str] = []

    def visit() -> str:
        try:
            return str(get(cache, "/fragile/").headers["Cache-Status"])
        except RuntimeError:
            return "error"

    outcomes = concurrently(8, visit)
    assert outcomes.count("error") == 1
    assert page_app.calls >= 1
    assert all(outcome.startswith("sitecache;") for outcome in outcomes if outcome != "error")


# ---------------------------------------------------------------------- stale regeneration
class RegeneratedBeforeTheLock(MemoryStorage):
    """Another process regenerates a stale key between this request's lookup and its lock."""

    def __init__(self) -> None:
        super().__init__()
        self.other: PageCache | None = None

    def acquire_lock(self, name: str, owner: str, ttl: float) -> bool:
        other, self.other = self.other, None
        if other is not None and name.startswith("regen:"):
            assert get(other).headers["Cache-Status"] == "sitecache; fwd=stale; stored"
        return super().acquire_lock(name, owner, ttl)


def test_a_stale_key_regenerated_meanwhile_is_not_regenerated_again(page_app: PageApp) -> None:
    clock = FakeClock()
    storage = RegeneratedBeforeTheLock()
    this = build(page_app, storage, clock, max_age=60, stale_while_revalidate=30)
    other = PageCache(page_app, engine=CacheEngine(storage, this.rules, clock=clock))
    get(this)
    clock.advance(61)
    storage.other = other
    answer = get(this)
    assert page_app.calls == 2  # the first store and the other process's regeneration
    assert answer.headers["Cache-Status"].startswith("sitecache; hit; ttl=")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_stale_key_is_regenerated_once_by_requests_arriving_over_time(
    page_app: PageApp, tmp_path: Path, backend: str
) -> None:
    clock = FakeClock()
    storage = make_storage(backend, tmp_path)
    cache = build(page_app, storage, clock, max_age=60, stale_while_revalidate=30)
    try:
        get(cache)
        clock.advance(61)
        page_app.delay = 0.15
        statuses: list[str] = []
        lock = threading.Lock()

        def visit() -> None:
            status = get(cache).headers["Cache-Status"]
            with lock:
                statuses.append(status)

        threads = []
        for _ in range(30):  # arriving before, during and after the regeneration
            thread = threading.Thread(target=visit)
            thread.start()
            threads.append(thread)
            time.sleep(0.01)
        for thread in threads:
            thread.join()
        assert page_app.calls == 2, statuses  # the first store and one regeneration
        assert statuses.count("sitecache; fwd=stale; stored") == 1
    finally:
        cleanup(storage, backend)


# ---------------------------------------------------------------------- unreadable entries
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 1e300])
@pytest.mark.parametrize("offset", [4, EXPIRES_OFFSET])
def test_an_entry_with_corrupted_times_is_a_miss_not_an_error(
    page_app: PageApp, value: float, offset: int
) -> None:
    storage = MemoryStorage()
    cache = build(page_app, storage)
    get(cache)
    for key in storage.keys_for("host", None):
        data = storage.get(key)
        assert data is not None
        storage._shelf.data[key] = data[:offset] + struct.pack(">d", value) + data[offset + 8 :]
    cache.tier = type(cache.tier)(cache.tier.max_bytes)  # a new worker: nothing in memory
    answer = get(cache)
    assert answer.status_code == 200
    assert answer.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"


# ---------------------------------------------------------------------- Vary
def test_vary_on_content_type_keys_each_variant_apart() -> None:
    def negotiated(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        kind = environ.get("CONTENT_TYPE", "")
        start_response("200 OK", [("Content-Type", "text/html"), ("Vary", "Content-Type")])
        return [f"<html><body>{'<p>.</p>' * 40}for {kind or 'nobody'}</body></html>".encode()]

    cache = build(negotiated)
    client = Client(cache, use_cookies=False)
    first = client.get("/", base_url=SITE, headers={"Content-Type": "text/plain"})
    assert b"for text/plain" in first.data
    other = client.get("/", base_url=SITE, headers={"Content-Type": "application/json"})
    assert b"for application/json" in other.data, other.headers["Cache-Status"]
    again = client.get("/", base_url=SITE, headers={"Content-Type": "text/plain"})
    assert again.headers["Cache-Status"].startswith("sitecache; hit")
    assert b"for text/plain" in again.data


# ---------------------------------------------------------------------- the purge hold
def test_while_a_purge_is_owed_every_process_bypasses_and_stores_nothing(
    page_app: PageApp, tmp_path: Path
) -> None:
    marker = tmp_path / "purge-hold"
    one = build(page_app, make_storage("disk", tmp_path / "cache"), hold_path=marker)
    two = build(page_app, make_storage("disk", tmp_path / "cache"), hold_path=marker)
    get(one)
    assert get(two).headers["Cache-Status"].startswith("sitecache; hit")
    one.engine.hold.engage("Redis is down")
    for process in (one, two):
        answer = get(process)
        assert answer.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=purge_pending"
    assert get(two, "/new/").headers["Cache-Status"].endswith("detail=purge_pending")
    assert two.engine.storage.keys_for("url", [f"{SITE}/new/"]) == set()
    two.engine.hold.release()
    assert get(one).headers["Cache-Status"].startswith("sitecache; hit")


def test_a_hold_marker_that_cannot_be_read_holds(tmp_path: Path) -> None:
    from sitecache.cache.hold import PurgeHold

    hold = PurgeHold(tmp_path / "purge-hold")
    assert not hold.active()
    (tmp_path / "purge-hold").unlink()
    assert hold.active()  # fail closed


def test_a_hold_works_without_a_marker_in_this_process() -> None:
    from sitecache.cache.hold import PurgeHold

    hold = PurgeHold()
    hold.engage("disk full")
    assert hold.active()
    assert hold.reason == "disk full"
    assert hold.since() is not None
    hold.release()
    assert not hold.active()


def test_a_request_that_missed_just_before_the_lead_stored_does_not_render_again(
    page_app: PageApp,
) -> None:
    # The race behind a second render: this request's lookup missed, then the lead stored the
    # page and left before this request asked to lead. It is sent back to the storage instead.
    cache = build(page_app)
    fills = cache.engine.fills
    lead = fills.begin("k")
    assert lead.lead
    fills.finish(lead, stored=True)
    late = fills.begin("k")
    assert not late.lead
    assert late.recheck
    assert late.event is not None
    assert late.event.is_set()  # nothing to wait for
    fills.forget("k")  # its lookup found nothing (purged since): lead again
    again = fills.begin("k")
    assert again.lead
    fills.finish(again, stored=False)


def test_a_lead_makes_no_event_until_a_waiter_of_its_process_asks_for_one(
    page_app: PageApp,
) -> None:
    # Most misses have no waiter: their lead makes no event; the first local waiter makes the
    # one every waiter of the key shares, and the lead's finish sets it.
    cache = build(page_app)
    fills = cache.engine.fills
    lead = fills.begin("k")
    assert lead.lead
    assert _event(lead) is None
    first, second = fills.begin("k"), fills.begin("k")
    assert not first.lead
    assert first.event is not None
    assert second.event is first.event
    assert _event(lead) is first.event
    assert not first.event.is_set()
    fills.finish(lead, stored=True)
    assert first.event.is_set()
    alone = fills.begin("other")
    fills.finish(alone, stored=False)
    assert alone.event is None


def _event(fill: Fill) -> threading.Event | None:
    """A fill's event now (read through a call: mypy keeps no narrowing across it)."""
    return fill.event


def test_a_page_purged_right_after_it_was_stored_is_rendered_and_stored_again(
    page_app: PageApp,
) -> None:
    cache = build(page_app)
    assert get(cache, "/fresh/").headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    cache.engine.purge_all()
    second = get(cache, "/fresh/")  # within the stored memo's second, but the page is gone
    assert second.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert page_app.calls == 2
    assert get(cache, "/fresh/").headers["Cache-Status"].startswith("sitecache; hit")
