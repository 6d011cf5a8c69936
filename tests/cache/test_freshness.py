"""Freshness (RFC 9111 §4.2), rule by rule, as tables: what the application's header fields
give a stored page, and what `PageCache` does with it as time passes."""

from __future__ import annotations

from typing import Any

import pytest

from sitecache.cache import CacheEngine, CacheRules, MemoryStorage, PageCache
from sitecache.cache.capture import Captured, response_facts
from sitecache.cache.freshness import Freshness, Heuristic, response_freshness
from sitecache.cache.http_dates import format_http_date
from tests.cache.conftest import FakeClock, PageApp
from tests.cache.test_middleware import SITE, get

NOW = 1_800_000_000.0

#: A header value given as seconds from now is an HTTP-date (``Date``, ``Expires``, ...).
Header = tuple[str, "str | float"]


def fields(headers: list[Header], now: float = NOW) -> list[tuple[str, str]]:
    """``headers`` with every number turned into the HTTP-date that many seconds from now."""
    return [
        (name, value if isinstance(value, str) else format_http_date(now + value))
        for name, value in headers
    ]


def freshness_of(
    headers: list[Header],
    status: int = 200,
    *,
    heuristic: Heuristic = "max_age",
    max_age: int = 3600,
    took: float = 0.0,
) -> Freshness:
    captured = Captured()
    captured.status = f"{status} X"
    captured.headers = fields(headers)
    facts = response_facts(captured)
    return response_freshness(facts.headers, status, requested=NOW - took, arrived=NOW,
                              heuristic=heuristic, max_age=max_age, cache_404=True)  # fmt: skip


# (header fields, expected rule, lifetime, age at arrival)
LIFETIME_CASES: list[tuple[list[Header], str, float, float]] = [
    ([], "max_age", 3600, 0),
    ([("Cache-Control", "max-age=60")], "max-age", 60, 0),
    ([("Cache-Control", "MaX-aGe=60")], "max-age", 60, 0),
    ([("Cache-Control", 'max-age="60"')], "max-age", 60, 0),
    ([("Cache-Control", "max-age=0060")], "max-age", 60, 0),
    # s-maxage is this shared cache's own, whichever comes first or is shorter.
    ([("Cache-Control", "max-age=60, s-maxage=5")], "s-maxage", 5, 0),
    ([("Cache-Control", "max-age=60"), ("Cache-Control", "s-maxage=500")], "s-maxage", 500, 0),
    # CDN-Cache-Control comes before both (RFC 9213).
    ([("Cache-Control", "s-maxage=5"), ("CDN-Cache-Control", "max-age=90")],
     "cdn-cache-control", 90, 0),
    # A CDN-Cache-Control that does not parse is ignored.
    ([("Cache-Control", "max-age=5"), ("CDN-Cache-Control", "max-age=90, &&")], "max-age", 5, 0),
    # The first occurrence counts; a quoted "max-age" is no directive.
    ([("Cache-Control", "max-age=60, max-age=1")], "max-age", 60, 0),
    ([("Cache-Control", 'ext="max-age=99", max-age=7')], "max-age", 7, 0),
    # Invalid values make the page stale.
    ([("Cache-Control", "max-age=-1")], "max-age", 0, 0),
    ([("Cache-Control", "max-age='60'")], "max-age", 0, 0),
    ([("Cache-Control", "max-age=60a")], "max-age", 0, 0),
    ([("Cache-Control", "max-age=99999999999")], "max-age", 2**31, 0),
    # Expires minus Date; Expires before Cache-Control's absence only.
    ([("Expires", 300), ("Date", 0)], "expires", 300, 0),
    ([("Expires", 300), ("Date", 100)], "expires", 200, 0),
    ([("Expires", 100), ("Date", 400)], "expires", 0, 0),
    ([("Expires", "0")], "expires", 0, 0),
    ([("Expires", "Thu, 01 Jan 2099 00:00:00 UTC")], "expires", 0, 0),
    ([("Expires", 300), ("Cache-Control", "max-age=10")], "max-age", 10, 0),
    # Age counts; so does a Date in the past (the larger of the two).
    ([("Cache-Control", "max-age=60"), ("Age", "20")], "max-age", 60, 20),
    ([("Cache-Control", "max-age=60"), ("Age", "20, 90")], "max-age", 60, 20),
    ([("Cache-Control", "max-age=60"), ("Age", "20"), ("Age", "90")], "max-age", 60, 20),
    ([("Cache-Control", "max-age=60"), ("Age", "-5")], "max-age", 60, 0),
    ([("Cache-Control", "max-age=60"), ("Age", "5.0")], "max-age", 60, 0),
    ([("Cache-Control", "max-age=60"), ("Date", -30)], "max-age", 60, 30),
    ([("Cache-Control", "max-age=60"), ("Date", -30), ("Age", "40")], "max-age", 60, 40),
    ([("Cache-Control", "max-age=60"), ("Date", 30)], "max-age", 60, 0),
    # no-cache: stored at most to be revalidated before each use.
    ([("Cache-Control", "no-cache")], "none", 0, 0),
    ([("Cache-Control", "max-age=60, no-cache")], "max-age", 0, 0),
]  # fmt: skip


@pytest.mark.parametrize(("headers", "rule", "lifetime", "age"), LIFETIME_CASES)
def test_the_lifetime_comes_from_the_response_first(
    headers: list[Header], rule: str, lifetime: float, age: float
) -> None:
    freshness = freshness_of(headers)
    assert (freshness.rule, freshness.lifetime, freshness.age) == (rule, lifetime, age)


def test_the_time_the_answer_took_counts_in_its_age() -> None:
    assert freshness_of([("Cache-Control", "max-age=60"), ("Age", "10")], took=2.5).age == 12.5


# (status, header fields, heuristic, expected rule, lifetime)
HEURISTIC_CASES: list[tuple[int, list[Header], Heuristic, str, float]] = [
    (200, [], "max_age", "max_age", 3600),
    (301, [], "max_age", "none", 0),
    (200, [("Last-Modified", -10_000), ("Date", 0)], "max_age", "max_age", 3600),
    # RFC 9111 §4.2.2: a tenth of the time since Last-Modified, at most max_age.
    (200, [("Last-Modified", -10_000), ("Date", 0)], "last_modified", "last-modified", 1000),
    (200, [("Last-Modified", -100_000), ("Date", 0)], "last_modified", "last-modified", 3600),
    (410, [("Last-Modified", -10_000)], "last_modified", "last-modified", 1000),
    (200, [], "last_modified", "none", 0),
    # A status that is not heuristically cacheable gets none, unless public.
    (500, [("Last-Modified", -10_000)], "last_modified", "none", 0),
    (599, [("Last-Modified", -10_000), ("Cache-Control", "public")], "last_modified",
     "last-modified", 1000),
]  # fmt: skip


@pytest.mark.parametrize(("status", "headers", "heuristic", "rule", "lifetime"), HEURISTIC_CASES)
def test_a_response_stating_no_lifetime_gets_the_deployments_heuristic(
    status: int, headers: list[Header], heuristic: Heuristic, rule: str, lifetime: float
) -> None:
    freshness = freshness_of(headers, status, heuristic=heuristic)
    assert (freshness.rule, freshness.lifetime) == (rule, lifetime)


def test_max_age_zero_makes_a_page_that_states_nothing_fresh_until_purged() -> None:
    freshness = freshness_of([], max_age=0)
    assert freshness.forever
    assert freshness.expires(NOW) == 0.0
    assert not freshness_of([("Cache-Control", "max-age=5")], max_age=0).forever


# (header fields, expected stale window (None: the setting), background, error window)
STALE_CASES: list[tuple[list[Header], int | None, bool, int]] = [
    ([("Cache-Control", "max-age=60")], None, False, 0),
    ([("Cache-Control", "max-age=60, stale-while-revalidate=30")], 30, True, 0),
    ([("Cache-Control", "max-age=60, stale-if-error=300")], None, False, 300),
    ([("Cache-Control", "max-age=60, must-revalidate, stale-while-revalidate=30")], 0, False, 0),
    ([("Cache-Control", "max-age=60, proxy-revalidate")], 0, False, 0),
    ([("Cache-Control", "s-maxage=60, stale-if-error=300")], 0, False, 0),
    ([("Cache-Control", "no-cache")], 0, False, 0),
]


@pytest.mark.parametrize(("headers", "window", "background", "error"), STALE_CASES)
def test_what_a_stale_copy_may_do_is_decided_when_it_is_stored(
    headers: list[Header], window: int | None, background: bool, error: int
) -> None:
    freshness = freshness_of(headers)
    assert (freshness.stale_window, freshness.background, freshness.error_window) == (
        window, background, error,
    )  # fmt: skip


def cache_for(app: PageApp, clock: FakeClock, **settings: Any) -> PageCache:
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})),
                         clock=clock)  # fmt: skip
    assert isinstance(engine.update_settings({"stale_while_revalidate": 0, **settings}), dict)
    return PageCache(app, engine=engine)


# (header fields of the page, seconds later, served from the cache then?, Cache-Status detail)
SERVED_CASES: list[tuple[list[Header], float, bool, str]] = [
    ([("Cache-Control", "max-age=60")], 59, True, "max-age"),
    ([("Cache-Control", "max-age=60")], 61, False, ""),
    ([("Cache-Control", "s-maxage=60, max-age=5000")], 61, False, ""),
    ([("Cache-Control", "max-age=60"), ("Age", "50")], 9, True, "max-age"),
    ([("Cache-Control", "max-age=60"), ("Age", "50")], 11, False, ""),
    ([("Expires", 120), ("Date", 0)], 119, True, "expires"),
    ([("Expires", 120), ("Date", 0)], 121, False, ""),
    ([("Expires", 120), ("Date", -60)], 119, True, "expires"),
    ([("Expires", 120), ("Date", -60)], 121, False, ""),
    ([("CDN-Cache-Control", "max-age=600"), ("Cache-Control", "max-age=5")], 300, True,
     "cdn-cache-control"),
    ([], 3599, True, ""),
    ([], 3601, False, ""),
]  # fmt: skip


@pytest.mark.parametrize(("headers", "later", "hit", "detail"), SERVED_CASES)
def test_a_stored_page_is_served_while_fresh_by_its_own_lifetime(
    page_app: PageApp, clock: FakeClock, headers: list[Header], later: float, hit: bool,
    detail: str,
) -> None:  # fmt: skip
    page_app.headers += fields(headers, clock.now)
    cache = cache_for(page_app, clock)
    assert "stored" in get(cache).headers["Cache-Status"]
    clock.advance(later)
    answer = get(cache)
    status = answer.headers["Cache-Status"]
    assert status.startswith("sitecache; hit") is hit, status
    assert page_app.calls == (1 if hit else 2)
    if hit:
        assert status.endswith(f"; detail={detail}") if detail else "detail" not in status


def test_the_age_answered_counts_the_apps_age_and_the_time_stored(
    page_app: PageApp, clock: FakeClock
) -> None:
    page_app.headers += [("Cache-Control", "max-age=600"), ("Age", "100")]
    cache = cache_for(page_app, clock)
    assert get(cache).headers["Age"] == "100"
    clock.advance(30)
    hit = get(cache)
    assert hit.headers["Age"] == "130"
    assert hit.headers["Cache-Status"] == "sitecache; hit; ttl=470; detail=max-age"


def test_the_apps_date_is_kept(page_app: PageApp, clock: FakeClock) -> None:
    date = format_http_date(clock.now - 5)
    page_app.headers += [("Cache-Control", "max-age=600"), ("Date", date)]
    cache = cache_for(page_app, clock)
    get(cache)
    clock.advance(30)
    hit = get(cache)
    assert hit.headers.getlist("Date") == [date]
    assert hit.headers["Age"] == "35"  # the Date was 5 seconds old on arrival


@pytest.mark.parametrize(
    ("status", "headers", "stored"),
    [
        ("301 Moved Permanently", [("Location", "/b/")], False),
        ("301 Moved Permanently", [("Location", "/b/"), ("Cache-Control", "max-age=60")], True),
        ("410 Gone", [("Expires", 60)], True),
        ("500 Internal Server Error", [("Cache-Control", "max-age=60")], True),
        ("500 Internal Server Error", [], False),
        ("206 Partial Content", [("Cache-Control", "max-age=60"),
                                 ("Content-Range", "bytes 0-9/100")], False),
    ],
)  # fmt: skip
def test_a_status_other_than_200_is_stored_only_with_a_lifetime_of_its_own(
    page_app: PageApp, clock: FakeClock, status: str, headers: list[Header], stored: bool
) -> None:
    page_app.status = status
    page_app.headers += fields(headers, clock.now)
    cache = cache_for(page_app, clock)
    first = get(cache, "/a/")
    assert first.status == status
    assert ("stored" in first.headers["Cache-Status"]) is stored
    again = get(cache, "/a/")
    assert again.status == status
    assert again.headers["Cache-Status"].startswith("sitecache; hit") is stored


def test_a_page_stating_no_lifetime_is_not_stored_under_the_last_modified_heuristic(
    page_app: PageApp, clock: FakeClock
) -> None:
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"}),
                         heuristic="last_modified"), clock=clock)  # fmt: skip
    cache = PageCache(page_app, engine=engine)
    assert get(cache, "/a/").headers["Cache-Status"] == "sitecache; fwd=uri-miss; detail=no_cache"
    page_app.headers.append(("Last-Modified", format_http_date(clock.now - 1000)))
    assert get(cache, "/b/").headers["Cache-Status"] == (
        "sitecache; fwd=uri-miss; stored; detail=last-modified"
    )
    clock.advance(99)
    assert get(cache, "/b/").headers["Cache-Status"].startswith("sitecache; hit; ttl=1")
    clock.advance(2)
    assert "hit" not in get(cache, "/b/").headers["Cache-Status"]


def test_a_soft_purge_of_a_page_with_a_lifetime_of_its_own_makes_it_stale(
    page_app: PageApp, clock: FakeClock
) -> None:
    page_app.headers.append(("Cache-Control", "max-age=600"))
    cache = cache_for(page_app, clock, stale_while_revalidate=30)
    get(cache, "/a/")
    assert cache.purge_url(f"{SITE}/a/", soft=True).deleted == 1
    assert "hit" not in get(cache, "/a/").headers["Cache-Status"].split("; ")[1]
