"""`PageCache` around a small WSGI app: keys, hits, misses, bypasses, purges, staleness."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.cache import (
    CacheEngine,
    CacheRules,
    DiskStorage,
    EntryInfo,
    MemoryStorage,
    PageCache,
    PurgeResult,
    Storage,
)
from sitecache.cache.entry import decode_entry
from sitecache.cache.storage import ANY_GENERATION, StorageError
from sitecache.domain_errors import InvalidURL
from sitecache.rest.error_handlers import ErrorHandlers
from tests.cache.conftest import FakeClock, PageApp, make_storage

SITE = "http://example.org"


def build(app: PageApp, storage: Storage | None = None, clock: FakeClock | None = None,
          **settings: Any) -> PageCache:  # fmt: skip
    engine = CacheEngine(
        storage or MemoryStorage(),
        CacheRules(hosts=frozenset({"example.org"})),
        clock=clock or FakeClock(),
    )
    if settings:
        assert isinstance(engine.update_settings(settings), dict)
    return PageCache(app, engine=engine)


def get(cache: PageCache, path: str = "/", **headers: str) -> Any:
    return Client(cache, use_cookies=False).get(path, base_url=SITE, headers=headers)


def test_a_miss_is_stored_and_the_next_request_is_a_hit(page_app: PageApp) -> None:
    cache = build(page_app)
    first = get(cache, "/post/")
    second = get(cache, "/post/")
    assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert second.headers["Cache-Status"] == "sitecache; hit; ttl=3600"
    assert second.data == first.data
    assert page_app.calls == 1
    assert second.headers["Age"] == "0"
    assert second.headers["ETag"].startswith('"')
    assert "Last-Modified" in second.headers


def test_a_hit_reports_its_age_and_remaining_ttl(page_app: PageApp, clock: FakeClock) -> None:
    cache = build(page_app, clock=clock)
    get(cache)
    clock.advance(100)
    hit = get(cache)
    assert hit.headers["Age"] == "100"
    assert hit.headers["Cache-Status"] == "sitecache; hit; ttl=3500"


def test_max_age_zero_keeps_a_page_fresh_until_purged(page_app: PageApp, clock: FakeClock) -> None:
    cache = build(page_app, clock=clock, max_age=0)
    get(cache)
    clock.advance(10**6)
    assert get(cache).headers["Cache-Status"] == "sitecache; hit"
    assert page_app.calls == 1


def test_head_is_answered_from_the_get_entry_and_a_head_miss_primes_it(page_app: PageApp) -> None:
    cache = build(page_app)
    head = Client(cache).head("/a/", base_url=SITE)
    assert head.data == b""
    assert head.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert page_app.seen[-1]["REQUEST_METHOD"] == "GET"
    body = get(cache, "/a/")
    assert body.headers["Cache-Status"].startswith("sitecache; hit")
    assert int(head.headers["Content-Length"]) == len(body.data)
    assert page_app.calls == 1


def test_the_gzip_copy_goes_to_clients_that_accept_gzip(page_app: PageApp) -> None:
    import gzip

    cache = build(page_app)
    plain = get(cache)
    zipped = get(cache, **{"Accept-Encoding": "gzip, deflate"})
    refused = get(cache, **{"Accept-Encoding": "gzip;q=0, identity"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.data) == plain.data
    assert "Content-Encoding" not in refused.headers
    assert refused.data == plain.data
    assert "Accept-Encoding" in zipped.headers["Vary"]
    assert zipped.headers["ETag"] != plain.headers["ETag"]


def test_a_miss_sends_the_identity_body_and_the_first_hit_asking_makes_the_copy(
    page_app: PageApp, storage: Storage
) -> None:
    # #32: no compressed copy is made on the miss; the first hit asking for a coding makes it
    # and stores it back, so other processes (a fresh cache on the same storage) read it.
    import gzip

    import brotli

    cache = build(page_app, storage)
    miss = get(cache, **{"Accept-Encoding": "gzip, br"})
    assert miss.headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    assert "Content-Encoding" not in miss.headers
    assert "Accept-Encoding" in miss.headers["Vary"]
    key = next(iter(cache.engine.keys_for("url", ["http://example.org/"])))
    first = cache.engine.load(key)
    assert first is not None
    assert first.copies == ()
    zipped = get(cache, **{"Accept-Encoding": "gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.data) == miss.data
    squeezed = get(cache, **{"Accept-Encoding": "gzip, deflate, br"})
    assert squeezed.headers["Content-Encoding"] == "br"
    assert brotli.decompress(squeezed.data) == miss.data
    assert len({miss.headers["ETag"], zipped.headers["ETag"], squeezed.headers["ETag"]}) == 3
    stored = cache.engine.load(key)
    assert stored is not None
    assert {coding for coding, _ in stored.copies} == {"gzip", "br"}
    assert (stored.created, stored.expires, stored.etag) == (first.created, first.expires,
                                                              first.etag)  # fmt: skip
    other = build(page_app, storage)  # another process: reads the copies, makes none
    again = get(other, **{"Accept-Encoding": "br"})
    assert again.headers["Cache-Status"].startswith("sitecache; hit")
    assert again.data == squeezed.data
    assert page_app.calls == 1


def test_a_miss_frees_its_fill_lock_with_its_write_where_the_storage_can(
    page_app: PageApp, storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # #32: on Redis the put script frees the fill lock: no round trip of its own.
    cache = build(page_app, storage)
    fill_store = cache.engine.fills.locks.storage  # type: ignore[attr-defined]
    released: list[str] = []
    original = fill_store.release_lock

    def counting(name: str, owner: str) -> None:
        released.append(name)
        original(name, owner)

    monkeypatch.setattr(fill_store, "release_lock", counting)
    assert get(cache, "/post/").headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"
    key = next(iter(cache.engine.keys_for("url", ["http://example.org/post/"])))
    assert fill_store.lock_owner(f"fill:{key}") is None
    assert (released == []) is storage.frees_locks_in_put
    assert cache.engine.fill_release_in_store is storage.frees_locks_in_put


def test_each_accept_encoding_value_gets_its_own_coding_every_time(page_app: PageApp) -> None:
    # The coding chosen for a value is remembered per cache; it never leaks to other values.
    cache = build(page_app)
    get(cache)
    cases = {"br;q=0, gzip": "gzip", "gzip;q=0, br": "br", "identity": None, "zstd": None}
    for _ in range(3):
        for value, coding in cases.items():
            answer = get(cache, **{"Accept-Encoding": value})
            assert answer.headers.get("Content-Encoding") == coding, value


def test_a_copy_made_after_a_purge_began_is_never_stored(page_app: PageApp) -> None:
    cache = build(page_app)
    get(cache)
    key = next(iter(cache.engine.keys_for("url", ["http://example.org/"])))
    entries = cache._entries
    generation = entries.generation()
    prepared = entries.prepared(key, cache.engine.clock(), generation)
    assert prepared is not None
    cache.purge_url("http://example.org/")  # between the hit's read and its copy
    sent, coding = entries.with_copy(key, prepared, "gzip", generation, 0)
    assert coding == "gzip"  # the client still gets its copy
    assert sent.copies["gzip"][0]
    assert cache.engine.load(key) is None  # but the purged page is not brought back


def test_compression_off_stores_no_gzip_copy(page_app: PageApp) -> None:
    cache = build(page_app, compression=False)
    get(cache)
    assert "Content-Encoding" not in get(cache, **{"Accept-Encoding": "gzip"}).headers


@pytest.mark.parametrize(
    ("header", "value_of"),
    [
        ("If-None-Match", lambda r: r.headers["ETag"]),
        ("If-Modified-Since", lambda r: r.headers["Last-Modified"]),
    ],
)
def test_conditional_requests_get_304(page_app: PageApp, header: str, value_of: Any) -> None:
    cache = build(page_app)
    first = get(cache)
    conditional = get(cache, **{header: value_of(first)})
    assert conditional.status_code == 304
    assert conditional.data == b""
    assert conditional.headers["Cache-Status"].startswith("sitecache; hit")


def test_use_304_off_answers_conditional_requests_in_full(page_app: PageApp) -> None:
    cache = build(page_app, use_304=False)
    first = get(cache)
    assert get(cache, **{"If-None-Match": first.headers["ETag"]}).status_code == 200


def test_an_if_none_match_for_another_representation_gets_the_page(page_app: PageApp) -> None:
    cache = build(page_app)
    get(cache)
    assert get(cache, **{"If-None-Match": '"nope"'}).status_code == 200


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Authorization": "Basic YWRtaW46cGFzcw=="}, "authorization"),
        ({"Cookie": "sitecache_session=abc"}, "logged_in_cookie"),
        ({"Cookie": "theme=dark; wordpress_logged_in_1=x"}, "logged_in_cookie"),
        ({"Cookie": "sitecache_comment_author_1=me"}, "logged_in_cookie"),
        ({"X-Forwarded-Host": "evil.example"}, "forwarded_host"),
    ],
)
def test_requests_with_credentials_bypass_with_their_reason(
    page_app: PageApp, headers: dict[str, str], reason: str
) -> None:
    cache = build(page_app)
    get(cache)  # an anonymous copy exists
    response = get(cache, **headers)
    assert response.headers["Cache-Status"] == f"sitecache; fwd=bypass; detail={reason}"
    assert page_app.calls == 2
    assert cache.engine.storage.summary(cache.engine.clock()).total == 1


def test_a_host_the_site_does_not_serve_is_never_keyed(page_app: PageApp) -> None:
    cache = build(page_app)
    response = Client(cache).get("/", base_url="http://evil.example")
    assert response.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=foreign_host"
    assert cache.engine.storage.summary(0).total == 0


def test_a_response_that_sets_a_cookie_is_never_stored(page_app: PageApp) -> None:
    page_app.headers.append(("Set-Cookie", "session=secret"))
    cache = build(page_app)
    first = get(cache)
    second = get(cache)
    assert first.headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=set_cookie"
    assert second.headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=set_cookie"
    assert page_app.calls == 2


def test_tracking_parameters_are_stripped_for_the_key_and_for_the_app(page_app: PageApp) -> None:
    cache = build(page_app)
    get(cache, "/a/?utm_source=news&fbclid=1")
    assert page_app.seen[-1]["QUERY_STRING"] == ""
    assert get(cache, "/a/").headers["Cache-Status"].startswith("sitecache; hit")
    assert get(cache, "/a/?page=2").headers["Cache-Status"] == (
        "sitecache; fwd=bypass; detail=query_string"
    )


def test_cached_query_strings_are_keyed_by_the_sorted_remaining_query(page_app: PageApp) -> None:
    cache = build(page_app, cache_query_strings=True)
    get(cache, "/a/?b=2&a=1&utm_medium=x")
    assert page_app.seen[-1]["QUERY_STRING"] == "b=2&a=1"
    assert get(cache, "/a/?a=1&b=2").headers["Cache-Status"].startswith("sitecache; hit")
    assert get(cache, "/a/?a=1").headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"


def test_query_values_with_distinct_bytes_never_share_a_key(page_app: PageApp) -> None:
    cache = build(page_app, cache_query_strings=True)
    get(cache, "/a/?q=%FF")
    assert get(cache, "/a/?q=%FE").headers["Cache-Status"].endswith("stored")
    assert get(cache, "/a/?q=%C3%A9").headers["Cache-Status"].endswith("stored")
    assert get(cache, "/a/?q=%c3%a9").headers["Cache-Status"].startswith("sitecache; hit")
    assert cache.purge_url("http://example.org/a/?q=%C3%A9").deleted == 1


def test_mobile_browsers_get_their_own_variant(page_app: PageApp) -> None:
    cache = build(page_app, mobile=True)
    get(cache, **{"User-Agent": "Mozilla/5.0 (iPhone)"})
    assert (
        get(cache, **{"User-Agent": "Mozilla/5.0 (X11)"}).headers["Cache-Status"].endswith("stored")
    )
    assert (
        get(cache, **{"User-Agent": "Mozilla/5.0 (iPhone)"})
        .headers["Cache-Status"]
        .startswith("sitecache; hit")
    )
    variants = sorted(row["variant"] for row in cache.engine.list_entries()[0])
    assert variants == ["", "mobile"]


def vary_names(response: Any) -> list[str]:
    return [
        name.strip().lower()
        for value in response.headers.getlist("Vary")
        for name in value.split(",")
        if name.strip()
    ]


def test_mobile_variants_say_vary_user_agent_on_hits_and_misses(page_app: PageApp) -> None:
    # Attack report item 14: the answers said only "Vary: Accept-Encoding", so a shared cache
    # downstream could serve the mobile copy to desktops.
    page_app.body = b"<html>" + b"x" * 2000 + b"</html>"  # large enough for a gzip copy
    cache = build(page_app, mobile=True)
    iphone, desktop = "Mozilla/5.0 (iPhone)", "Mozilla/5.0 (X11)"
    answers = [
        get(cache, **{"User-Agent": iphone}),
        get(cache, **{"User-Agent": desktop}),
        get(cache, **{"User-Agent": iphone, "Accept-Encoding": "gzip"}),
        get(cache, **{"User-Agent": desktop}),
    ]
    statuses = [answer.headers["Cache-Status"] for answer in answers]
    assert [status.split(";")[1].strip() for status in statuses] == [
        "fwd=uri-miss", "fwd=uri-miss", "hit", "hit",
    ]  # fmt: skip
    for answer in answers:
        assert vary_names(answer).count("user-agent") == 1, answer.headers
        assert "accept-encoding" in vary_names(answer)
    etag = answers[3].headers["ETag"]
    not_modified = get(cache, **{"User-Agent": desktop, "If-None-Match": etag})
    assert not_modified.status_code == 304
    assert "user-agent" in vary_names(not_modified)
    # Only the mobile keying adds it: the key itself never holds the user agent.
    assert len(cache.engine.list_entries()[0]) == 2
    bypassed = get(cache, "/site-json/", **{"User-Agent": iphone})
    assert "user-agent" not in vary_names(bypassed)
    assert "user-agent" not in vary_names(get(build(page_app), **{"User-Agent": iphone}))


def test_a_vary_the_app_sends_is_kept_and_extended_once(page_app: PageApp) -> None:
    page_app.headers.append(("Vary", "Accept-Language, user-agent"))
    cache = build(page_app, mobile=True)
    first = get(cache, **{"User-Agent": "iPhone", "Accept-Language": "fr"})
    assert vary_names(first) == ["accept-language", "user-agent", "accept-encoding"]
    page_app.headers[-1] = ("Vary", "*")
    star = get(cache, "/other/", **{"User-Agent": "iPhone"})
    assert vary_names(star) == ["*"]


def test_known_users_anonymous_serves_the_anonymous_page_without_login_cookies(
    page_app: PageApp,
) -> None:
    cache = build(page_app, known_users="anonymous")
    get(cache)
    response = get(cache, Cookie="sitecache_session=abc; theme=dark")
    assert response.headers["Cache-Status"].startswith("sitecache; hit")
    get(cache, "/other/", Cookie="sitecache_session=abc; theme=dark")
    assert page_app.seen[-1]["HTTP_COOKIE"] == "theme=dark"
    preview = get(cache, "/other/?preview=true", Cookie="sitecache_session=abc")
    assert preview.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=rest_or_admin"
    assert page_app.seen[-1]["HTTP_COOKIE"] == "sitecache_session=abc"
    rest = get(cache, "/site-json/", Cookie="sitecache_session=abc")
    assert rest.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=rest_or_admin"
    assert page_app.seen[-1]["HTTP_COOKIE"] == "sitecache_session=abc"


def test_headers_named_in_vary_are_part_of_the_key(page_app: PageApp) -> None:
    page_app.headers.append(("Vary", "Accept-Language"))
    cache = build(page_app)
    french = get(cache, **{"Accept-Language": "fr"})
    german = get(cache, **{"Accept-Language": "de"})
    assert german.headers["Cache-Status"] == "sitecache; fwd=vary-miss; stored"
    again = get(cache, **{"Accept-Language": "fr"})
    assert again.headers["Cache-Status"].startswith("sitecache; hit")
    assert again.data == french.data != german.data


def test_tags_come_from_the_cache_tag_header_and_purge_by_tag(page_app: PageApp) -> None:
    page_app.headers.append(("Cache-Tag", "post-1, home"))
    cache = build(page_app)
    get(cache, "/a/")
    get(cache, "/b/")
    result = cache.purge_tags(["post-1"])
    assert result.deleted == 2
    assert result.scope == "tag"
    assert result.urls == ["http://example.org/a/", "http://example.org/b/"]
    assert get(cache, "/a/").headers["Cache-Status"].endswith("stored")


def test_purge_by_url_and_path_removes_every_variant(page_app: PageApp) -> None:
    cache = build(page_app, mobile=True)
    get(cache, "/a/")
    get(cache, "/a/", **{"User-Agent": "iPhone"})
    get(cache, "/b/")
    result = cache.purge_url("/a/")
    assert isinstance(result, PurgeResult)
    assert result.deleted == 2
    assert cache.engine.storage.summary(cache.engine.clock()).total == 1
    assert cache.purge_url("http://example.org/b/").deleted == 1


@pytest.mark.parametrize(
    "url", ["http://evil.example/a/", "/a/../../etc/passwd", "ftp://example.org/", ""]
)
def test_purging_a_foreign_or_escaping_url_is_refused(page_app: PageApp, url: str) -> None:
    with pytest.raises(InvalidURL) as refused:
        build(page_app).purge_url(url)
    # The REST boundary answers it with a 400 (#17: a domain exception, not a returned error).
    assert ErrorHandlers().to_rest_error(refused.value).status == 400


def test_a_soft_purge_serves_stale_while_one_request_regenerates(
    page_app: PageApp, clock: FakeClock
) -> None:
    cache = build(page_app, clock=clock, stale_while_revalidate=30)
    get(cache)
    result = cache.purge_all(soft=True)
    assert result.soft
    assert result.deleted == 1
    regenerating = get(cache)
    assert regenerating.headers["Cache-Status"] == "sitecache; fwd=stale; stored"
    assert get(cache).headers["Cache-Status"].startswith("sitecache; hit; ttl=3600")
    assert page_app.calls == 2


def test_an_entry_past_its_stale_window_is_rendered_again(
    page_app: PageApp, clock: FakeClock
) -> None:
    cache = build(page_app, clock=clock, max_age=60, stale_while_revalidate=10)
    get(cache)
    clock.advance(75)
    assert get(cache).headers["Cache-Status"] == "sitecache; fwd=stale; stored"
    assert page_app.calls == 2


def test_a_stale_entry_is_served_while_another_request_holds_the_lock(
    page_app: PageApp, clock: FakeClock
) -> None:
    cache = build(page_app, clock=clock, max_age=60, stale_while_revalidate=10)
    first = get(cache)
    clock.advance(65)
    engine = cache.engine
    from sitecache.cache.keys import base_key

    lock = f"regen:{base_key('http://example.org/', '')}"
    assert engine.storage.acquire_lock(lock, "another-process", 30)
    stale = get(cache)
    assert stale.headers["Cache-Status"] == "sitecache; hit; ttl=-5; detail=stale"
    assert stale.data == first.data


@pytest.mark.parametrize("backend_name", ["memory", "disk", "redis"])
def test_fifty_concurrent_requests_for_an_expired_key_regenerate_once(
    page_app: PageApp, tmp_path: Path, backend_name: str
) -> None:
    clock = FakeClock()
    cache = build(page_app, make_storage(backend_name, tmp_path), clock,
                  max_age=60, stale_while_revalidate=30)  # fmt: skip
    get(cache)
    clock.advance(61)
    page_app.delay = 0.3  # the regeneration is slow: every other request arrives meanwhile
    barrier = threading.Barrier(50)
    statuses: list[str] = []

    def visit() -> None:
        barrier.wait()
        statuses.append(get(cache).headers["Cache-Status"])

    threads = [threading.Thread(target=visit) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    storage = cache.engine.storage
    if backend_name == "redis":
        storage.clear_namespace()  # type: ignore[attr-defined]
    assert page_app.calls == 2  # the first store and exactly one regeneration
    assert statuses.count("sitecache; fwd=stale; stored") == 1
    # The others were served the stale copy, or (one that reached the lock only after the
    # regeneration stored) the regenerated page: never a second regeneration.
    others = [s for s in statuses if s != "sitecache; fwd=stale; stored"]
    assert all(s.endswith("detail=stale") or s.startswith("sitecache; hit; ttl=") for s in others)
    assert sum(status.endswith("detail=stale") for status in statuses) >= 40


def test_a_purge_in_one_worker_is_seen_by_another_on_its_next_request(
    page_app: PageApp, tmp_path: Path
) -> None:
    # Two engines over one disk directory behave as two gunicorn workers.
    worker_one = build(page_app, DiskStorage(tmp_path))
    worker_two = build(page_app, DiskStorage(tmp_path))
    get(worker_one)
    assert get(worker_two).headers["Cache-Status"].startswith("sitecache; hit")
    assert get(worker_two).headers["Cache-Status"].startswith("sitecache; hit")  # memory tier
    worker_one.purge_all()
    assert get(worker_two).headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"


def test_a_settings_change_in_one_worker_reaches_another_within_a_second(
    page_app: PageApp, tmp_path: Path
) -> None:
    clock = FakeClock()
    worker_one = build(page_app, DiskStorage(tmp_path), clock)
    worker_two = build(page_app, DiskStorage(tmp_path), clock)
    get(worker_two)
    assert isinstance(worker_one.engine.update_settings({"enabled": False}), dict)
    clock.advance(1.0)
    assert get(worker_two).headers["Cache-Status"] == "sitecache; fwd=bypass; detail=disabled"


class BrokenStorage(MemoryStorage):
    """A store whose every read and write fails (a full disk, Redis down)."""

    def get(self, key: str, generation: object = None) -> bytes | None:
        raise StorageError("disk full")

    def put(
        self,
        key: str,
        data: bytes,
        info: EntryInfo,
        ttl: float | None,
        *,
        generation: object = ANY_GENERATION,
        replaces: bytes | None = None,
        release: tuple[str, str] | None = None,
    ) -> bool:
        raise StorageError("disk full")

    def generation(self) -> object:
        raise StorageError("disk full")


def test_a_storage_failure_passes_the_request_through_and_logs_once(
    page_app: PageApp, caplog: pytest.LogCaptureFixture
) -> None:
    cache = build(page_app, BrokenStorage())
    responses = [get(cache) for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 200]
    assert responses[0].headers["Cache-Status"] == "sitecache; fwd=bypass; detail=storage_error"
    assert len([r for r in caplog.records if "unavailable" in r.getMessage()]) == 1


class CountingStorage(MemoryStorage):
    """Counts the calls a hit makes."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        attribute = super().__getattribute__(name)
        if callable(attribute) and not name.startswith("_") and name != "calls":
            super().__getattribute__("calls").append(name)
        return attribute


def test_a_hit_reads_only_the_purge_generation_from_storage(page_app: PageApp) -> None:
    storage = CountingStorage()
    cache = build(page_app, storage)
    get(cache)
    storage.calls.clear()
    for _ in range(20):
        get(cache)
    assert set(storage.calls) == {"generation"}


def test_counters_are_flushed_at_most_once_a_second(page_app: PageApp, clock: FakeClock) -> None:
    storage = CountingStorage()
    cache = build(page_app, storage, clock)
    for _ in range(10):
        get(cache)
    assert storage.counters().get("hit", 0) == 0
    clock.advance(1.0)
    get(cache)
    assert storage.counters()["hit"] == 9
    assert storage.calls.count("add_counters") <= 3


def test_stats_count_requests_bypass_reasons_and_purges(page_app: PageApp) -> None:
    cache = build(page_app)
    get(cache)
    get(cache)
    get(cache, Authorization="Bearer x")
    cache.purge_tags(["nothing"])
    stats = cache.engine.stats()
    assert stats["requests"]["hit"] == 1
    assert stats["requests"]["miss"] == 1
    assert stats["requests"]["bypass"] == 1
    assert stats["bypass_reasons"] == {"authorization": 1}
    assert stats["purges"] == {"tag": 1}
    assert stats["entries"]["total"] == 1
    assert stats["since"] == int(cache.engine.clock())
    cache.engine.counters.reset()
    assert cache.engine.stats()["requests"]["hit"] == 0


def test_gc_deletes_entries_past_their_stale_window(page_app: PageApp, clock: FakeClock) -> None:
    cache = build(page_app, clock=clock, max_age=60, stale_while_revalidate=10)
    get(cache, "/a/")
    clock.advance(30)
    get(cache, "/b/")
    clock.advance(45)  # /a/ is 75 s old (dead), /b/ 45 s (fresh)
    result = cache.engine.purge_expired(budget=1.0)
    assert result.deleted == 1
    assert result.urls == ["http://example.org/a/"]


def test_redis_down_passes_every_request_through(page_app: PageApp) -> None:
    from sitecache.cache.storage.redis import RedisStorage

    cache = build(page_app, RedisStorage("redis://127.0.0.1:1/0", "down", timeout=0.2))
    responses = [get(cache) for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 200]
    assert {r.headers["Cache-Status"] for r in responses} == {
        "sitecache; fwd=bypass; detail=storage_error"
    }
    assert page_app.calls == 3


def test_the_debug_log_names_requests_without_secrets(page_app: PageApp, tmp_path: Path) -> None:
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})))
    assert isinstance(engine.update_settings({"debug": True, "cache_query_strings": True}), dict)
    log = tmp_path / "logs" / "debug.log"
    cache = PageCache(page_app, engine=engine, debug_log=log)
    get(cache, "/a/?token=s3cret", Cookie="sitecache_session=c00kie", Authorization="Basic cXdl")
    get(cache, "/b/")
    get(cache, "/b/")
    cache.close()
    text = log.read_text()
    assert "GET /a/ ?token 200 sitecache; fwd=bypass; detail=authorization" in text
    assert "GET /b/ 200 sitecache; hit" in text
    for secret in ("s3cret", "c00kie", "cXdl"):
        assert secret not in text
    assert oct(log.stat().st_mode & 0o777) == "0o600"


# ---------------------------------------------------------------------- review findings
def test_a_page_rendered_across_a_purge_is_answered_but_not_stored(page_app: PageApp) -> None:
    cache = build(page_app)
    original = page_app.__call__

    def purging_app(environ: dict[str, Any], start_response: Any) -> Any:
        result = original(environ, start_response)
        cache.purge_tags(["post-1"])  # an editor saves while the page renders
        return result

    cache.app = purging_app
    response = get(cache, "/post/")
    assert response.headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=purged"
    cache.app = page_app
    assert get(cache, "/post/").headers["Cache-Status"] == "sitecache; fwd=uri-miss; stored"


@pytest.mark.parametrize("path", ["//site-json/", "//index.php/site-json/", "//login"])
def test_rest_and_login_paths_bypass_however_many_leading_slashes(
    page_app: PageApp, path: str
) -> None:
    response = Client(build(page_app), use_cookies=False).get(
        path, base_url=SITE, environ_overrides={"PATH_INFO": path}
    )
    assert response.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=rest_or_admin"


def test_a_mounted_app_bypasses_its_rest_paths_and_keeps_admin_cookies(page_app: PageApp) -> None:
    cache = build(page_app, known_users="anonymous")
    response = Client(cache, use_cookies=False).get(
        "/site-admin/",
        base_url=SITE + "/blog",
        headers={"Cookie": "sitecache_session=abc"},
    )
    assert response.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=rest_or_admin"
    assert page_app.seen[-1]["HTTP_COOKIE"] == "sitecache_session=abc"


@pytest.mark.parametrize(
    "host", ["example.org:1", "example.org:abc", "EXAMPLE.org", "example.org."]
)
def test_other_spellings_of_the_host_are_never_keyed(page_app: PageApp, host: str) -> None:
    cache = build(page_app)
    response = Client(cache, use_cookies=False).get("/", base_url=SITE, headers={"Host": host})
    assert response.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=foreign_host"
    assert cache.engine.storage.summary(0).total == 0


def test_the_memory_backend_stays_within_its_bound(page_app: PageApp) -> None:
    storage = MemoryStorage(max_bytes=20_000)
    cache = build(page_app, storage, cache_query_strings=True)
    for number in range(100):
        get(cache, f"/p{number}/")
    assert storage.summary(0).bytes <= 20_000
    assert 0 < storage.summary(0).total < 100


def test_the_memory_backend_keeps_each_page_as_the_entry_the_tier_holds(
    page_app: PageApp,
) -> None:
    # A miss on the memory backend encodes nothing: the store keeps the very entry the memory
    # tier serves (one copy of the body), and encodes it only when asked for its bytes.
    storage = MemoryStorage()
    cache = build(page_app, storage)
    get(cache, "/p/")
    (key,) = storage.keys_for("host", None)
    kept = storage.get_entry(key)
    assert kept is not None
    prepared = cache.tier.get(key, storage.generation())
    assert prepared is not None
    assert kept is prepared.entry
    assert decode_entry(storage.get(key)) == kept


def test_a_memory_backend_that_overrides_put_and_get_sees_every_page_through_them(
    page_app: PageApp,
) -> None:
    written: list[bytes] = []

    class Recording(MemoryStorage):
        def get(self, key: str, generation: object = None) -> bytes | None:
            return super().get(key, generation)

        def put(self, key: str, data: bytes, info: EntryInfo, ttl: float | None, *,
                generation: object = ANY_GENERATION, replaces: bytes | None = None,
                release: tuple[str, str] | None = None) -> bool:  # fmt: skip
            written.append(data)
            return super().put(key, data, info, ttl, generation=generation,
                               replaces=replaces, release=release)  # fmt: skip

    storage = Recording()
    cache = build(page_app, storage)
    get(cache, "/p/")
    (key,) = storage.keys_for("host", None)
    assert [decode_entry(data) for data in written] == [storage.get_entry(key)]
    cache.tier.clear()
    assert get(cache, "/p/").headers["Cache-Status"].startswith("sitecache; hit")


def test_a_stale_copy_in_memory_is_refreshed_from_storage_before_regenerating(
    page_app: PageApp, tmp_path: Path
) -> None:
    clock = FakeClock()
    one = build(page_app, DiskStorage(tmp_path), clock, max_age=60, stale_while_revalidate=30)
    two = build(page_app, DiskStorage(tmp_path), clock)
    get(one)
    get(two)  # both workers hold the page in memory
    clock.advance(65)
    assert get(one).headers["Cache-Status"] == "sitecache; fwd=stale; stored"
    assert get(two).headers["Cache-Status"].startswith("sitecache; hit; ttl=")
    assert page_app.calls == 2


def test_the_app_is_closed_once_its_response_is_stored(page_app: PageApp) -> None:
    closed: list[bool] = []

    class Body(list[bytes]):
        def close(self) -> None:
            closed.append(True)

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        start_response("200 OK", [("Content-Type", "text/html")])
        return Body([b"<p>page</p>"])

    cache = build(page_app)
    cache.app = app
    get(cache)
    assert closed == [True]


def test_a_cached_404_never_answers_304(page_app: PageApp) -> None:
    page_app.status = "404 Not Found"
    cache = build(page_app, cache_404=True)
    first = get(cache)
    assert first.headers["Cache-Status"].endswith("stored")
    again = get(cache, **{"If-None-Match": "*"})
    assert again.status_code == 404


def test_a_get_with_a_body_bypasses(page_app: PageApp) -> None:
    response = Client(build(page_app)).get("/", base_url=SITE, data=b"q=1")
    assert response.headers["Cache-Status"] == "sitecache; fwd=bypass; detail=request_body"


@pytest.mark.parametrize("control", ["max-age=0", "public, s-maxage=0", "s-maxage=0, max-age=60"])
def test_an_origin_lifetime_of_zero_is_not_stored(page_app: PageApp, control: str) -> None:
    page_app.headers.append(("Cache-Control", control))
    response = get(build(page_app))
    assert response.headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=no_cache"


def test_repeated_query_names_keep_their_value_order_in_the_key(page_app: PageApp) -> None:
    cache = build(page_app, cache_query_strings=True)
    get(cache, "/a/?sort=title&sort=date")
    assert get(cache, "/a/?sort=date&sort=title").headers["Cache-Status"].endswith("stored")
    assert (
        get(cache, "/a/?sort=title&sort=date").headers["Cache-Status"].startswith("sitecache; hit")
    )
