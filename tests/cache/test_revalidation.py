"""Revalidation (RFC 9111 §4.3) and serving stale (§4.2.4), as tables: a stale page whose
application gave a validator is asked about, not rendered again; what may be served stale."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.cache import CacheEngine, CacheRules, MemoryStorage, PageCache
from sitecache.cache.http_dates import format_http_date
from tests.cache.conftest import FakeClock
from tests.cache.test_middleware import SITE, get

StartResponse = Any


class ValidatingApp:
    """An application that tags its page and answers 304 to a request naming its tag.

    Tests change ``control`` (its ``Cache-Control``), ``version`` (its body and tag), make it
    ``fail`` with a status, or raise.
    """

    def __init__(self, control: str) -> None:
        self.control = control
        self.version = 1
        self.extra: list[tuple[str, str]] = []
        self.fail = ""
        self.raises = False
        self.asked: list[dict[str, Any]] = []
        self.delay = 0.0
        self.modified = format_http_date(1_700_000_000)

    @property
    def etag(self) -> str:
        return f'"v{self.version}"'

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        self.asked.append(dict(environ))
        if self.delay:
            time.sleep(self.delay)
        if self.raises:
            raise RuntimeError("the application failed")
        if self.fail:
            start_response(self.fail, [("Content-Type", "text/plain")])
            return [b"failed"]
        headers = [("Cache-Control", self.control), ("ETag", self.etag),
                   ("Last-Modified", self.modified), ("Content-Type", "text/html"),
                   ("X-Version", str(self.version)), *self.extra]  # fmt: skip
        if environ.get("HTTP_IF_NONE_MATCH") == self.etag:
            start_response("304 Not Modified", headers)
            return []
        start_response("200 OK", headers)
        return [f"<p>version {self.version}</p>".encode() * 20]

    def conditional(self, index: int = -1) -> str | None:
        """The ``If-None-Match`` the application was asked with (``None``: not asked so)."""
        return self.asked[index].get("HTTP_IF_NONE_MATCH")


def cache_for(app: Any, clock: FakeClock, window: int = 10) -> PageCache:
    engine = CacheEngine(MemoryStorage(), CacheRules(hosts=frozenset({"example.org"})),
                         clock=clock)  # fmt: skip
    assert isinstance(engine.update_settings({"stale_while_revalidate": window}), dict)
    return PageCache(app, engine=engine)


# (Cache-Control, seconds later, the app's version then, expected Cache-Status, If-None-Match
# the app was asked with (None: no revalidation), body version served)
REVALIDATION_CASES: list[tuple[str, float, int, str, str | None, int]] = [
    # Stale within the window: the one request that revalidates gets a 304, stores it again.
    ("max-age=60", 65, 1,
     "sitecache; fwd=stale; fwd-status=304; stored; detail=max-age", '"v1"', 1),
    # Past the window: revalidated all the same (once per key).
    ("max-age=60", 600, 1,
     "sitecache; fwd=stale; fwd-status=304; stored; detail=max-age", '"v1"', 1),
    # The page changed: the full answer replaces it.
    ("max-age=60", 65, 2, "sitecache; fwd=stale; stored; detail=max-age", '"v1"', 2),
    # Fresh: no question asked.
    ("max-age=60", 30, 2, "sitecache; hit; ttl=30; detail=max-age", None, 1),
    # no-cache: stored, and revalidated before every use.
    ("no-cache", 0, 1, "sitecache; fwd=stale; fwd-status=304; stored; detail=none", '"v1"', 1),
    ("no-cache", 0, 2, "sitecache; fwd=stale; stored; detail=none", '"v1"', 2),
    ("max-age=600, no-cache", 1, 1,
     "sitecache; fwd=stale; fwd-status=304; stored; detail=max-age", '"v1"', 1),
    # must-revalidate: never served stale, even within the window.
    ("max-age=60, must-revalidate", 61, 1,
     "sitecache; fwd=stale; fwd-status=304; stored; detail=max-age", '"v1"', 1),
]  # fmt: skip


@pytest.mark.parametrize(
    ("control", "later", "version", "status", "asked", "served"), REVALIDATION_CASES
)
def test_a_stale_page_with_a_validator_is_revalidated(
    clock: FakeClock, control: str, later: float, version: int, status: str,
    asked: str | None, served: int,
) -> None:  # fmt: skip
    app = ValidatingApp(control)
    cache = cache_for(app, clock)
    get(cache, "/a/")
    clock.advance(later)
    app.version = version
    answer = get(cache, "/a/")
    assert answer.status_code == 200
    assert answer.headers["Cache-Status"] == status
    assert answer.data.startswith(f"<p>version {served}</p>".encode())
    assert len(app.asked) == (1 if asked is None else 2)
    if asked is not None:
        assert app.conditional() == asked
        assert app.asked[-1]["HTTP_IF_MODIFIED_SINCE"] == app.modified


def test_a_304_refreshes_the_stored_fields_and_the_lifetime(clock: FakeClock) -> None:
    app = ValidatingApp("max-age=60")
    cache = cache_for(app, clock)
    first = get(cache, "/a/")
    clock.advance(61)
    app.control = "max-age=300"
    app.extra = [("X-Extra", "new"), ("Content-Length", "3")]
    refreshed = get(cache, "/a/")
    assert refreshed.headers["X-Extra"] == "new"
    assert refreshed.headers["Cache-Control"] == "max-age=300"
    assert refreshed.headers["Content-Length"] == first.headers["Content-Length"]
    assert refreshed.data == first.data
    clock.advance(299)
    hit = get(cache, "/a/")
    assert hit.headers["Cache-Status"] == "sitecache; hit; ttl=1; detail=max-age"
    assert hit.headers["X-Extra"] == "new"
    assert len(app.asked) == 2


def test_a_weak_etag_stays_weak_and_is_what_the_app_is_asked_with(clock: FakeClock) -> None:
    app = ValidatingApp("max-age=60")
    app.extra = []
    cache = cache_for(app, clock)
    weak = 'W/"v1"'
    original = app.__call__

    def weakly(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        def tagged(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers = [(n, weak if n == "ETag" else v) for n, v in headers]
            return start_response(status, headers, exc_info)

        if environ.get("HTTP_IF_NONE_MATCH") == weak:
            environ = {**environ, "HTTP_IF_NONE_MATCH": app.etag}
        return original(environ, tagged)

    cache = cache_for(weakly, clock)
    assert get(cache, "/a/").headers["ETag"] == weak
    assert get(cache, "/a/", If_None_Match=weak).status_code == 304
    clock.advance(61)
    assert "fwd-status=304" in get(cache, "/a/").headers["Cache-Status"]
    assert app.asked[-1]["HTTP_IF_NONE_MATCH"] == app.etag  # the app saw its own tag


def test_the_clients_own_preconditions_and_range_are_not_passed_on_a_revalidation(
    clock: FakeClock,
) -> None:
    app = ValidatingApp("max-age=60")
    cache = cache_for(app, clock)
    get(cache, "/a/")
    clock.advance(61)
    answer = get(cache, "/a/", If_None_Match='"v1"', Range="bytes=0-3", If_Range='"v1"')
    assert answer.status_code == 304  # the client's own tag matches the refreshed page
    asked = app.asked[-1]
    assert asked["HTTP_IF_NONE_MATCH"] == '"v1"'
    assert "HTTP_RANGE" not in asked
    assert "HTTP_IF_RANGE" not in asked


# (Cache-Control, how the app fails, seconds later, served stale?)
FAILURE_CASES: list[tuple[str, str, float, bool]] = [
    ("max-age=60", "503 Service Unavailable", 65, True),
    ("max-age=60", "502 Bad Gateway", 65, True),
    ("max-age=60", "raise", 65, True),
    ("max-age=60", "404 Not Found", 65, False),
    # Past the window: the failure goes through...
    ("max-age=60", "503 Service Unavailable", 75, False),
    # ...unless the page allows more with stale-if-error.
    ("max-age=60, stale-if-error=100", "503 Service Unavailable", 150, True),
    ("max-age=60, stale-if-error=100", "503 Service Unavailable", 175, False),
    # Pages that forbid serving stale never are.
    ("max-age=60, must-revalidate", "503 Service Unavailable", 65, False),
    ("max-age=60, proxy-revalidate", "503 Service Unavailable", 65, False),
    ("s-maxage=60", "503 Service Unavailable", 65, False),
    ("no-cache", "503 Service Unavailable", 1, False),
]


@pytest.mark.parametrize(("control", "failure", "later", "stale"), FAILURE_CASES)
def test_a_stale_copy_answers_for_a_failing_application_where_allowed(
    clock: FakeClock, control: str, failure: str, later: float, stale: bool
) -> None:
    app = ValidatingApp(control)
    cache = cache_for(app, clock)
    get(cache, "/a/")
    clock.advance(later)
    if failure == "raise":
        app.raises = True
    else:
        app.fail = failure
    if failure == "raise" and not stale:
        with pytest.raises(RuntimeError):
            get(cache, "/a/")
        return
    answer = get(cache, "/a/")
    if stale:
        code = 500 if failure == "raise" else int(failure.split()[0])
        assert answer.status_code == 200
        assert answer.headers["Cache-Status"] == (
            f"sitecache; fwd=stale; fwd-status={code}; detail=stale"
        )
        assert answer.data.startswith(b"<p>version 1</p>")
    else:
        assert answer.status == failure


def test_its_own_stale_while_revalidate_serves_stale_at_once_and_revalidates_after(
    clock: FakeClock,
) -> None:
    app = ValidatingApp("max-age=60, stale-while-revalidate=120")
    cache = cache_for(app, clock, window=0)
    get(cache, "/a/")
    clock.advance(100)
    app.version = 2
    client = Client(cache, use_cookies=False)
    answer = client.get("/a/", base_url=SITE)
    # The stale copy, at once; the revalidation runs once the server closes the answer.
    assert answer.headers["Cache-Status"] == "sitecache; hit; ttl=-40; detail=stale"
    assert answer.data.startswith(b"<p>version 1</p>")
    assert len(app.asked) == 1
    answer.close()
    assert len(app.asked) == 2
    assert app.conditional() == '"v1"'
    fresh = get(cache, "/a/")
    assert fresh.headers["Cache-Status"] == "sitecache; hit; ttl=60; detail=max-age"
    assert fresh.data.startswith(b"<p>version 2</p>")
    clock.advance(60 + 121)  # past its own window: revalidated before the answer
    assert get(cache, "/a/").headers["Cache-Status"].startswith("sitecache; fwd=stale")


def test_without_its_own_window_the_setting_lets_others_be_served_stale_meanwhile(
    clock: FakeClock,
) -> None:
    app = ValidatingApp("max-age=60")
    cache = cache_for(app, clock, window=30)
    get(cache, "/a/")
    clock.advance(65)
    app.delay = 0.5
    answers: list[str] = []

    def ask() -> None:
        answers.append(get(cache, "/a/").headers["Cache-Status"])

    first = threading.Thread(target=ask)
    first.start()
    time.sleep(0.2)
    ask()  # while the first revalidates
    first.join()
    assert sorted(answers) == [
        "sitecache; fwd=stale; fwd-status=304; stored; detail=max-age",
        "sitecache; hit; ttl=-5; detail=stale",
    ]
    assert len(app.asked) == 2


def test_a_page_that_forbids_serving_stale_is_revalidated_once_for_concurrent_requests(
    clock: FakeClock,
) -> None:
    app = ValidatingApp("max-age=60, must-revalidate")
    cache = cache_for(app, clock, window=30)
    get(cache, "/a/")
    clock.advance(65)
    app.delay = 0.3
    answers: list[str] = []
    threads = [threading.Thread(target=lambda: answers.append(
        get(cache, "/a/").headers["Cache-Status"])) for _ in range(4)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(app.asked) == 2  # one revalidation for all four
    assert answers.count("sitecache; fwd=stale; fwd-status=304; stored; detail=max-age") == 1
    assert all("detail=stale" not in status for status in answers)


def test_a_purge_during_a_revalidation_keeps_the_refreshed_copy_out_of_the_storage(
    clock: FakeClock,
) -> None:
    app = ValidatingApp("max-age=60")
    cache = cache_for(app, clock)
    get(cache, "/a/")
    clock.advance(61)
    original = app.__call__

    def purging(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        cache.purge_tags(["anything"])  # moves the purge generation mid-revalidation
        return original(environ, start_response)

    cache.app = purging
    answer = get(cache, "/a/")
    assert answer.headers["Cache-Status"] == ("sitecache; fwd=stale; fwd-status=304; detail=purged")
    cache.app = app
    assert "fwd=stale" in get(cache, "/a/").headers["Cache-Status"]  # still stale: asked again
