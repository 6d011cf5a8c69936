"""Every ``Cache-Status`` value the cache writes has a row in `CACHE_STATUS_VALUES` (the table
the reference documentation is generated from), and every row is a value the cache writes:
scenarios drive a real `PageCache` through each outcome and compare the shapes of the values
(numbers, reasons and lifetime rules left out) with the table's."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.cache import CacheEngine, CacheRules, MemoryStorage, PageCache
from sitecache.cache.freshness import LIFETIME_RULES
from sitecache.cache.outcome import CACHE_STATUS_VALUES, OUTCOME_REASONS, Outcome
from sitecache.cache.policy import REQUEST_GUARDS, RESPONSE_GUARDS
from tests.cache.conftest import FakeClock
from tests.cache.test_outcome import NO_GUARD_CASES
from tests.doc_pages import DOCS

SITE = "http://example.org"
StartResponse = Callable[..., Any]
_FWD = re.compile(r"fwd=(?:uri-miss|vary-miss|stale)")


def shape(value: str) -> str:
    """``value`` with its numbers and reasons (a request guard's, a response guard's, the
    cache's own) replaced by their kind, ``detail=stale`` of a stale copy served kept; a
    refusal's or failure's ``fwd`` (any of the three) as ``<fwd>``. Lifetime rules are left
    out: any answer from (or into) a stored page may name one."""
    kinds = {guard.reason: "request" for guard in REQUEST_GUARDS}
    kinds.update({guard.reason: "response" for guard in RESPONSE_GUARDS})
    kinds.update({reason: "outcome" for reason in OUTCOME_REASONS})
    parts = []
    for part in value.split("; "):
        name, _, argument = part.partition("=")
        served_stale = argument == "stale" and ("; hit" in value or "fwd-status" in value)
        if name in ("ttl", "fwd-status"):
            part = f"{name}=N"
        elif name == "detail" and served_stale:
            pass  # a stale copy served (not the reason a stale-on-arrival page was refused)
        elif name == "detail" and argument in LIFETIME_RULES:
            continue
        elif name == "detail" and argument in kinds:
            part = f"detail=<{kinds[argument]} reason>"
        parts.append(part)
    found = "; ".join(parts)
    if found.endswith(" reason>") and "fwd-status" not in found:
        found = _FWD.sub("fwd=<fwd>", found)
    return found


class ScriptedApp:
    """A WSGI app whose next answers the test sets: status, header fields, what it does on a
    conditional request."""

    def __init__(self) -> None:
        self.status = "200 OK"
        self.headers: list[tuple[str, str]] = []
        self.not_modified_for = ""
        self.on_call: Callable[[], object] | None = None

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if self.on_call is not None:
            self.on_call()
        if self.not_modified_for and environ.get("HTTP_IF_NONE_MATCH") == self.not_modified_for:
            start_response("304 Not Modified", [("ETag", self.not_modified_for)])
            return []
        start_response(self.status, [("Content-Type", "text/html"), *self.headers])
        return [b"<html><body><p>A page.</p></body></html>"]


class Scenario:
    """A cache in front of a `ScriptedApp`, on a clock that moves when told to."""

    def __init__(self, **settings: Any) -> None:
        self.clock = FakeClock()
        self.app = ScriptedApp()
        engine = CacheEngine(
            MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})), clock=self.clock
        )
        self.cache = PageCache(self.app, engine=engine)
        if settings:
            engine.update_settings(settings)
        self.seen: list[str] = []

    def get(self, path: str = "/", **headers: str) -> str:
        answer = Client(self.cache, use_cookies=False).get(path, base_url=SITE, headers=headers)
        value = str(answer.headers["Cache-Status"])
        self.seen.append(value)
        return value


def fresh_and_until_purged() -> list[str]:
    timed, forever = Scenario(), Scenario(max_age=0)
    return [timed.get(), timed.get(), forever.get(), forever.get()]


def lifetimes_of_the_page() -> list[str]:
    found = []
    for field in ("max-age=60", "s-maxage=60", "public, max-age=60, s-maxage=30"):
        scenario = Scenario()
        scenario.app.headers = [("Cache-Control", field)]
        found += [scenario.get(), scenario.get()]
    return found


def stale_while_revalidate() -> list[str]:
    scenario = Scenario()
    scenario.app.headers = [("Cache-Control", "max-age=1, stale-while-revalidate=60")]
    scenario.get()
    scenario.clock.advance(5)
    return [scenario.get()]


def revalidated_with_304() -> list[str]:
    scenario = Scenario()
    scenario.app.headers = [("Cache-Control", "max-age=1"), ("ETag", '"v1"')]
    scenario.app.not_modified_for = '"v1"'
    scenario.get()
    scenario.clock.advance(5)
    stored = scenario.get()
    scenario.clock.advance(5)
    scenario.app.on_call = scenario.cache.purge_all  # an editor saves meanwhile
    return [stored, scenario.get()]


def stale_if_error() -> list[str]:
    scenario = Scenario()
    scenario.app.headers = [("Cache-Control", "max-age=1, stale-if-error=60")]
    scenario.get()
    scenario.clock.advance(5)
    scenario.app.status = "503 Service Unavailable"
    return [scenario.get()]


def rendered_again_when_stale() -> list[str]:
    scenario = Scenario()
    scenario.app.headers = [("Cache-Control", "max-age=1")]
    scenario.get()
    scenario.clock.advance(5)
    again = scenario.get()
    scenario.clock.advance(5)
    scenario.app.headers.append(("Set-Cookie", "a=b"))  # the new answer may not be stored
    return [again, scenario.get()]


def varied() -> list[str]:
    scenario = Scenario()
    scenario.app.headers = [("Vary", "Accept-Language")]
    return [scenario.get(**{"Accept-Language": "en"}), scenario.get(**{"Accept-Language": "fr"})]


def bypassed_and_refused() -> list[str]:
    scenario = Scenario()
    scenario.app.headers = [("Set-Cookie", "a=b")]
    logged_in = scenario.get("/", Cookie="wordpress_logged_in_x=1")
    return [scenario.get("/?q=1"), scenario.get("/"), logged_in]


def the_cache_could_not_take_part() -> list[str]:
    from tests.cache.conftest import PageApp

    found = []
    for setup, _ in NO_GUARD_CASES:
        cache = setup(PageApp())
        answer = Client(cache, use_cookies=False).get("/", base_url=SITE)
        found.append(str(answer.headers["Cache-Status"]))
    return found


def zero_lifetime() -> list[str]:
    revalidated, unvalidated = Scenario(), Scenario()
    revalidated.app.headers = [("Cache-Control", "s-maxage=0"), ("ETag", '"v1"')]
    revalidated.app.not_modified_for = '"v1"'
    unvalidated.app.headers = [("Cache-Control", "s-maxage=0")]
    return [revalidated.get(), revalidated.get(), unvalidated.get(), unvalidated.get()]


SCENARIOS = [
    fresh_and_until_purged,
    zero_lifetime,
    lifetimes_of_the_page,
    stale_while_revalidate,
    revalidated_with_304,
    stale_if_error,
    rendered_again_when_stale,
    varied,
    bypassed_and_refused,
    the_cache_could_not_take_part,
]
#: Rows no single-threaded scenario reaches (a request waiting for another's render).
CONCURRENT_ONLY = {"collapsed_into"}


@pytest.fixture(scope="module")
def written() -> dict[str, str]:
    """Each shape the scenarios saw, with one value of it."""
    found: dict[str, str] = {}
    for scenario in SCENARIOS:
        for value in scenario():
            found.setdefault(shape(value), value)
    return found


def test_a_zero_s_maxage_page_is_stored_and_revalidated_before_each_use() -> None:
    # (What the tuning guide says: s-maxage=0 is not "never stored".)
    assert zero_lifetime() == [
        "sitecache; fwd=uri-miss; stored; detail=s-maxage",
        "sitecache; fwd=stale; fwd-status=304; stored; detail=s-maxage",
        "sitecache; fwd=uri-miss; detail=no_cache",  # no validator: nothing to revalidate with
        "sitecache; fwd=uri-miss; detail=no_cache",
    ]


def test_every_value_the_cache_writes_has_a_row(written: dict[str, str]) -> None:
    table = {shape(row.header) for row in CACHE_STATUS_VALUES}
    missing = {value for found, value in written.items() if found not in table}
    assert not missing, f"Cache-Status values without a row in CACHE_STATUS_VALUES: {missing}"


def test_every_row_is_a_value_the_cache_writes(written: dict[str, str]) -> None:
    unseen = {
        row.header
        for row in CACHE_STATUS_VALUES
        if shape(row.header) not in written and row.made_by not in CONCURRENT_ONLY
    }
    assert not unseen, f"rows no scenario produced: {unseen}"


def test_every_way_to_make_an_outcome_has_a_row() -> None:
    constructors = {
        name
        for name, member in inspect.getmembers(Outcome)
        if isinstance(inspect.getattr_static(Outcome, name), classmethod)
    }
    assert constructors <= {row.made_by for row in CACHE_STATUS_VALUES}
    assert {"FRESH_HIT", "STALE_HIT"} <= {row.made_by for row in CACHE_STATUS_VALUES}
    for row in CACHE_STATUS_VALUES:
        assert row.meaning.endswith("."), row


def test_the_docs_name_only_values_of_the_table() -> None:
    # The hand-written pages quote Cache-Status values: each must be one the table has.
    table = {shape(row.header) for row in CACHE_STATUS_VALUES}
    quoted = {
        value
        for page in DOCS.rglob("*.md")
        if "_build" not in page.parts
        for value in re.findall(r"`(sitecache; [^`<]+)`", page.read_text(encoding="utf-8"))
    }
    assert quoted  # the pages do quote some
    assert {value for value in quoted if shape(value) not in table} == set()
