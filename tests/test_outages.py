"""What every edge answers while the site's database fails (#29): REST routes a JSON 503
``site_unavailable`` (or 507 ``site_storage_full``) with ``Retry-After``, pages the site's
message page with the same status, forms never mistake it for their own refusal, ``/healthz``
answers within its time limit whatever hangs, and the page cache serves what it holds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.auth.db import StoreFull, StoreUnavailable
from sitecache.config import ConfigError, load_config
from sitecache.errors import RestError
from sitecache.ops_views import HEALTH_TIMEOUT
from sitecache.rest.response import error_to_response
from sitecache.timed_probe import TimedProbe
from tests.auth.conftest import basic, client_for
from tests.conftest import AppFactory

HOME = "http://example.org"


class Outage:
    """Makes an application's site store fail (or hang) on every new use."""

    def __init__(self, app: App, monkeypatch: pytest.MonkeyPatch) -> None:
        self.app = app
        self.error: Exception | None = None
        self.hang = 0.0
        store = app.auth.store
        real = store.connection

        def connection() -> Any:
            if self.hang:
                time.sleep(self.hang)
            if self.error is not None:
                raise self.error
            return real()

        monkeypatch.setattr(store, "connection", connection)
        monkeypatch.setattr(store, "transaction", self._transaction(store.transaction))

    def _transaction(self, real: Callable[[], Any]) -> Callable[[], Any]:
        def transaction() -> Any:
            if self.error is not None:
                raise self.error
            return real()

        return transaction


@pytest.fixture
def down(app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch) -> tuple[App, Outage]:
    app = app_factory()
    user = app.auth.users.create("boss", "password123", "administrator", "boss@example.org")
    password, _ = app.auth.app_passwords.create(user, "tests")
    app.outage_auth = basic("boss", password)  # type: ignore[attr-defined]
    return app, Outage(app, monkeypatch)


def test_rest_answers_a_json_503_with_retry_after(down: tuple[App, Outage]) -> None:
    app, outage = down
    client = client_for(app)
    outage.error = StoreUnavailable("gone", retry_after=9)
    response = client.get("/site-json/site/v2/posts")
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "9"
    assert response.json is not None
    assert response.json["code"] == "site_unavailable"
    assert response.json["data"]["status"] == 503
    # Also when it fails in authentication, before any handler.
    headers = app.outage_auth  # type: ignore[attr-defined]
    response = client.post("/site-json/site/v2/posts", headers=headers, json={"title": "x"})
    assert response.status_code == 503
    assert response.json is not None
    assert response.json["code"] == "site_unavailable"


def test_rest_answers_507_when_the_disk_is_full(down: tuple[App, Outage]) -> None:
    app, outage = down
    outage.error = StoreFull("no space")
    response = client_for(app).get("/site-json/site/v2/posts")
    assert response.status_code == 507
    assert response.json is not None
    assert response.json["code"] == "site_storage_full"
    assert "Retry-After" in response.headers


def test_pages_answer_the_message_page_with_503(down: tuple[App, Outage]) -> None:
    app, outage = down
    outage.error = StoreUnavailable("gone")
    client = client_for(app)
    for path in ("/", "/?p=1", "/category/uncategorized/"):
        response = client.get(path, base_url=HOME)
        assert response.status_code == 503, (path, response.text[:300])
        assert response.mimetype == "text/html"
        assert response.headers["Retry-After"] == "5"
        assert "no-store" in response.headers["Cache-Control"]
        assert "Temporarily unavailable" in response.text
        assert "does not answer" in response.text


def test_the_comment_form_does_not_take_an_outage_for_its_refusal(
    down: tuple[App, Outage],
) -> None:
    app, outage = down
    outage.error = StoreUnavailable("gone")
    response = client_for(app).post(
        "/comment-post",
        base_url=HOME,
        headers={"Origin": HOME},
        data={"comment_post_ID": "1", "author": "Ann", "email": "a@example.org", "comment": "x"},
    )
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"


def test_a_cached_page_is_served_while_the_database_is_down(down: tuple[App, Outage]) -> None:
    app, outage = down
    client = Client(app)
    first = client.get("/", base_url=HOME)
    assert first.status_code == 200
    assert client.get("/", base_url=HOME).headers["Cache-Status"].startswith("sitecache; hit")
    outage.error = StoreUnavailable("gone")
    response = client.get("/", base_url=HOME)
    assert response.status_code == 200
    assert "hit" in response.headers["Cache-Status"]


def test_healthz_answers_in_time_while_the_database_hangs(down: tuple[App, Outage]) -> None:
    app, outage = down
    client = Client(app)
    assert client.get("/healthz").status_code == 200
    outage.hang = 5.0
    for _ in range(3):  # the hung check is not started again, nor waited for
        started = time.monotonic()
        response = client.get("/healthz")
        assert time.monotonic() - started < HEALTH_TIMEOUT + 0.5
        assert response.status_code == 503
        assert response.json is not None
        assert response.json["checks"]["database"]["status"] == "fail"
        assert response.json["checks"]["storage"]["status"] == "ok"
    outage.hang = 0.0
    deadline = time.monotonic() + 10
    while client.get("/healthz").status_code != 200:  # the hung check ends, the next passes
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_retry_after_comes_from_the_error_data() -> None:
    response = error_to_response(RestError("x", "y", {"status": 503, "retry_after": 12}))
    assert response.headers["Retry-After"] == "12"
    assert "Retry-After" not in error_to_response(RestError("x", "y", {"status": 500})).headers


def test_a_timed_probe_never_waits_past_its_deadline_nor_piles_up_threads() -> None:
    release = threading.Event()
    calls: list[int] = []

    def hanging() -> None:
        calls.append(1)
        release.wait(10)

    probe = TimedProbe("test", hanging)
    started = time.monotonic()
    assert probe.run(0.2) == "did not answer in time"
    assert probe.run(0.2) == "did not answer in time"
    assert time.monotonic() - started < 1
    assert len(calls) == 1  # the second call did not start another check
    release.set()
    time.sleep(0.1)
    assert probe.run(1.0) is None
    probe.stop()

    def failing() -> None:
        raise RuntimeError("broken")

    probe = TimedProbe("failing", failing)
    assert probe.run(1.0) == "RuntimeError: broken"
    probe.stop()


def test_the_database_timeouts_are_configuration() -> None:
    config = load_config(
        {
            "database_connect_timeout": 3,
            "database_pool_timeout": 1.5,
            "database_busy_timeout": 0.5,
            "database_retry_after": 30,
        }
    )
    limits = config.store_limits()
    assert (limits.connect_seconds, limits.pool_timeout, limits.busy_timeout) == (3, 1.5, 0.5)
    assert limits.retry_after == 30
    defaults = load_config({}).store_limits()
    assert (defaults.connect_timeout, defaults.pool_timeout, defaults.busy_timeout) == (2, 2, 4)
    for key, value in (("database_pool_timeout", 0), ("database_retry_after", 0)):
        with pytest.raises(ConfigError, match=key):
            load_config({key: value})
