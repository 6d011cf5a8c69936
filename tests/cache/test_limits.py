"""What anonymous clients can make the cache store is bounded (#15 points 6 and 9): entry and
size caps with background eviction, no keys for loopback ports the server does not listen on,
and ``rejected_uris`` matched in one search within one time budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import regex
from werkzeug.test import Client

from sitecache.cache import CacheEngine, CacheRules, CacheSettings, MemoryStorage, PageCache
from sitecache.cache.rejected import MAX_TOTAL_LENGTH, RejectedUris
from sitecache.cache.settings import validate_settings_update
from sitecache.domain_errors import InvalidSettings
from sitecache.rest.error_handlers import ErrorHandlers
from tests.cache.conftest import BACKENDS, FakeClock, PageApp, make_storage


def fill(cache: PageCache, count: int, prefix: str = "/page") -> None:
    client = Client(cache, use_cookies=False)
    for number in range(count):
        response = client.get(f"{prefix}-{number}/", base_url="http://example.org")
        assert response.headers["Cache-Status"].endswith("stored")


@pytest.mark.parametrize("backend", BACKENDS)
def test_past_max_entries_the_soonest_to_expire_are_evicted_without_a_purge(
    page_app: PageApp, tmp_path: Path, backend: str
) -> None:
    clock = FakeClock()
    storage = make_storage(backend, tmp_path)
    engine = CacheEngine(storage, CacheRules(hosts=frozenset({"example.org"})), clock=clock)
    assert isinstance(engine.update_settings({"max_entries": 20}), dict)
    cache = PageCache(page_app, engine=engine)
    try:
        fill(cache, 10, "/early")
        clock.advance(100)
        fill(cache, 20, "/late")
        assert storage.summary(clock()).total == 30
        generation = storage.generation()
        result = engine.enforce_limits()
        assert result is not None
        assert result.scope == "evicted"
        assert result.deleted == 12  # down to 90 % of the cap
        assert storage.summary(clock()).total == 18
        left = {info["url"] for info in engine.list_entries(1, 100)[0]}
        assert not any("/early-" in url for url in left)  # those expire first
        assert storage.generation() == generation  # eviction invalidates nothing
        assert engine.enforce_limits() is None
        assert engine.stats()["purges"]["evicted"] == 1
    finally:
        if backend == "redis":
            storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


def test_past_max_size_mb_entries_are_evicted_down_to_ninety_percent(page_app: PageApp) -> None:
    storage = MemoryStorage(max_bytes=1 << 30)
    engine = CacheEngine(storage, CacheRules(hosts=frozenset({"example.org"})))
    assert isinstance(engine.update_settings({"max_size_mb": 1}), dict)
    page_app.body = b"<html><body>" + b"x" * 60_000 + b"</body></html>"
    cache = PageCache(page_app, engine=engine)
    fill(cache, 25)
    summary = storage.summary(0)
    assert summary.bytes + summary.compressed_bytes > 1024 * 1024
    engine.enforce_limits()
    summary = storage.summary(0)
    assert summary.bytes + summary.compressed_bytes <= 0.9 * 1024 * 1024


def test_the_timer_holder_enforces_the_caps(page_app: PageApp, tmp_path: Path) -> None:
    from sitecache.cache.api.preload import Preloader
    from sitecache.cache.api.timers import CacheTimers

    engine = CacheEngine(
        make_storage("disk", tmp_path), CacheRules(hosts=frozenset({"example.org"}))
    )
    assert isinstance(engine.update_settings({"max_entries": 5}), dict)
    cache = PageCache(page_app, engine=engine)
    fill(cache, 12)
    timers = CacheTimers(engine, Preloader(cache, lambda: [], lambda: "", lambda: 0))
    assert timers.tick() is True
    assert engine.storage.summary(engine.clock()).total <= 5


@pytest.mark.parametrize("body", [{"max_entries": -1}, {"max_size_mb": "big"},
                                  {"max_entries": 10**12}])  # fmt: skip
def test_the_caps_are_validated(body: dict[str, Any]) -> None:
    with pytest.raises(InvalidSettings) as refused:
        validate_settings_update(body)
    assert set(refused.value.details["details"]) == set(body)
    # The REST boundary answers it as the 400 rest_invalid_param it always was.
    answer = ErrorHandlers().to_rest_error(refused.value)
    assert (answer.code, answer.status) == ("rest_invalid_param", 400)
    assert set(answer.data["details"]) == set(body)


# ---------------------------------------------------------------------- hosts
def visit(cache: PageCache, host: str, server_port: str) -> str:
    environ = {"SERVER_PORT": server_port, "SERVER_NAME": "127.0.0.1"}
    response = Client(cache, use_cookies=False).get(
        "/", headers={"Host": host}, environ_overrides=environ
    )
    return str(response.headers["Cache-Status"])


def test_without_site_url_only_the_listening_port_of_loopback_is_keyed(page_app: PageApp) -> None:
    cache = PageCache(page_app)  # no hosts: loopback defaults
    assert visit(cache, "127.0.0.1:8000", "8000").endswith("stored")
    assert visit(cache, "localhost", "8000").endswith("stored")
    for port in ("1", "8001", "65535"):
        status = visit(cache, f"127.0.0.1:{port}", "8000")
        assert status == "sitecache; fwd=bypass; detail=foreign_host", port
    assert cache.engine.storage.summary(0).total == 2


# ---------------------------------------------------------------------- rejected_uris
def test_two_hundred_patterns_cost_one_search_per_path() -> None:
    patterns = [rf"^/private-{number}/" for number in range(200)]
    rejected = RejectedUris(patterns)
    assert rejected.joined is not None
    assert rejected.separate == ()
    assert rejected.matches("/private-137/page/")
    assert not rejected.matches("/public/")


@pytest.mark.parametrize(
    ("pattern", "rejected_path", "kept_path"),
    [
        (r"^/(\w+)/\1/$", "/twice/twice/", "/twice/once/"),  # a backreference
        (r"(?i)^/SHOUT/", "/shout/x/", "/whisper/"),  # a global inline flag
        (r"^/(?P<word>\w+)/(?P=word)/$", "/a/a/", "/a/b/"),
    ],
)
def test_patterns_that_cannot_be_joined_keep_their_meaning(
    pattern: str, rejected_path: str, kept_path: str
) -> None:
    rejected = RejectedUris([r"^/other/", pattern])
    assert len(rejected.separate) == 1
    assert rejected.matches(rejected_path)
    assert not rejected.matches(kept_path)


def test_every_search_of_a_path_shares_one_budget_and_fails_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rejected = RejectedUris([r"^/a/", r"^/(x)\1/", r"^/(y)\1/", r"^/(z)\1/"], budget=0.05)
    given: list[float] = []

    class Recording:
        def __init__(self, inner: regex.Pattern[str]) -> None:
            self.inner = inner

        def search(self, text: str, timeout: float) -> Any:
            given.append(timeout)
            return self.inner.search(text, timeout=timeout)

    rejected.joined = Recording(rejected.joined)  # type: ignore[arg-type, assignment]
    rejected.separate = tuple(Recording(p) for p in rejected.separate)  # type: ignore[misc]
    assert not rejected.matches("/b/")
    assert len(given) == 4
    assert all(timeout <= 0.05 for timeout in given)
    assert given == sorted(given, reverse=True)  # each search gets what is left

    class OutOfTime:
        def search(self, text: str, timeout: float) -> Any:
            raise TimeoutError("regex timed out")

    rejected.separate = (OutOfTime(),)  # type: ignore[assignment]
    assert rejected.matches("/b/")  # out of time: rejected (fail closed), never stored


def test_the_patterns_combined_size_is_bounded() -> None:
    with pytest.raises(InvalidSettings) as refused:
        validate_settings_update({"rejected_uris": ["x" * 400] * 30})
    message = refused.value.details["details"]["rejected_uris"]["message"]
    assert str(MAX_TOTAL_LENGTH) in message
    answer = ErrorHandlers().to_rest_error(refused.value)
    assert (answer.code, answer.status) == ("rest_invalid_param", 400)
    assert answer.data["details"]["rejected_uris"]["message"] == message
    assert isinstance(validate_settings_update({"rejected_uris": ["x" * 400] * 20}), dict)
    settings = CacheSettings.from_values({"rejected_uris": [r"^/secret/"]})
    assert settings.rejected_uris.matches("/secret/a")
