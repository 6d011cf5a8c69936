"""A content change and its purge cannot be separated (#15 point 3): the purge is written to the
outbox in the change's transaction, applied after the commit, retried while the storage fails,
and the cache fails closed (every page bypasses) until it is applied."""

from __future__ import annotations

import json
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.auth.db import OperationalError
from sitecache.cache.storage import StorageError
from sitecache.invalidation import OUTBOX_KIND
from tests.conftest import both_engines, traceable
from tests.site.conftest import SmallSite
from tests.site.test_cache_invalidation import SITE, is_hit, pages, status

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


__all__ = ["pages"]  # the fixture, shared with the invalidation tests


class Outage:
    """Makes the cache storage fail (as a stopped Redis or a full disk does) until lifted."""

    def __init__(self, app: App, monkeypatch: pytest.MonkeyPatch) -> None:
        self.down = False
        storage = app.cache.engine.storage
        for name in ("bump_generation", "delete", "keys_for", "get",
                     "generation", "put", "mark_stale"):  # fmt: skip
            monkeypatch.setattr(storage, name, self._failing(getattr(storage, name)))

    def _failing(self, method: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if self.down:
                raise StorageError("Redis: Timeout reading from socket")
            return method(*args, **kwargs)

        return call


@pytest.fixture
def outage(app: App, monkeypatch: pytest.MonkeyPatch) -> Outage:
    return Outage(app, monkeypatch)


def owed(app: App) -> list[Any]:
    rows = app.auth.store.connection().execute(
        "SELECT payload FROM outbox WHERE kind = ? ORDER BY id", (OUTBOX_KIND,)
    )
    return [json.loads(row[0]) for row in rows.fetchall()]


def body(app: App, path: str) -> bytes:
    return bytes(Client(app, use_cookies=False).get(path, base_url=SITE).data)


def test_an_edit_records_its_purge_in_its_own_transaction(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    statements: list[str] = []
    traceable(app.auth.store.connection()).set_trace_callback(statements.append)
    app.content.update_post(site.post.id, title="Edited")
    traceable(app.auth.store.connection()).set_trace_callback(None)
    commit = statements.index("COMMIT")
    update = next(i for i, s in enumerate(statements) if s.startswith("UPDATE posts"))
    outbox = next(i for i, s in enumerate(statements) if s.startswith("INSERT INTO outbox"))
    assert update < outbox < commit  # one transaction holds the change and what it owes
    assert owed(app) == []  # applied after the commit, before update_post returned
    assert not is_hit(app, pages["post"])


def test_a_rolled_back_change_owes_nothing(app: App, site: SmallSite) -> None:
    def failing_request() -> None:
        with app.content.batch():
            app.content.update_post(site.post.id, title="Never")
            raise RuntimeError("the request failed half way")

    with pytest.raises(RuntimeError):
        failing_request()
    assert owed(app) == []
    assert app.content.get_post(site.post.id).title != "Never"  # type: ignore[union-attr]


def test_a_failed_purge_is_kept_and_the_cache_fails_closed_until_it_is_applied(
    app: App, site: SmallSite, pages: dict[str, str], outage: Outage
) -> None:
    outage.down = True
    app.content.update_post(site.post.id, title="Edited while the cache is down")
    assert len(owed(app)) == 1
    engine = app.cache.engine
    assert engine.hold.active()
    # Every page, related or not, is answered live: nothing older than the edit is served.
    for name, path in pages.items():
        assert status(app, path) == "sitecache; fwd=bypass; detail=purge_pending", name
    assert b"Edited while the cache is down" in body(app, pages["post"])
    warnings = app.cache_api.status()["warnings"]
    assert [w["code"] for w in warnings if w["code"] == "purges_pending"] == ["purges_pending"]
    assert "1 purge(s) owed" in next(w["message"] for w in warnings
                                     if w["code"] == "purges_pending")  # fmt: skip
    # Still down: a retry keeps the row and the hold.
    assert app.invalidation.drain() is False
    assert len(owed(app)) == 1
    assert engine.hold.active()
    # The storage answers again: the next retry (a timer tick) applies it and lets go.
    outage.down = False
    app.cache_api.timers.tick()
    assert owed(app) == []
    assert not engine.hold.active()
    assert status(app, pages["post"]) == "sitecache; fwd=uri-miss; stored"
    assert b"Edited while the cache is down" in body(app, pages["post"])
    assert is_hit(app, pages["unrelated"])  # only the related pages were purged


def test_a_purge_left_by_a_crash_after_the_commit_is_applied_by_the_next_tick(
    app: App, site: SmallSite, pages: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The process dies between the commit and the purge: the row is there, nothing applied.
    monkeypatch.setattr(app.invalidation, "after_commit", lambda calls: None)
    app.content.update_post(site.post.id, title="Edited before a crash")
    assert len(owed(app)) == 1
    assert is_hit(app, pages["post"])  # not purged yet
    app.cache_api.timers.tick()  # any process's next timer tick
    assert owed(app) == []
    assert not is_hit(app, pages["post"])
    assert b"Edited before a crash" in body(app, pages["post"])


def test_lock_down_consumes_owed_purges_without_purging(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    assert isinstance(app.cache.engine.update_settings({"lock_down": True}), dict)
    app.content.update_post(site.post.id, title="Quietly edited")
    assert owed(app) == []
    assert is_hit(app, pages["post"])


def test_the_hold_stays_while_any_purge_is_owed(
    app: App, site: SmallSite, pages: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = app.cache.engine
    site_purge_fails = {"yes": True}
    purge_site = engine.purge_site

    def failing_site_purge(**kwargs: Any) -> Any:
        if site_purge_fails["yes"]:
            raise StorageError("disk full")
        return purge_site(**kwargs)

    monkeypatch.setattr(engine, "purge_site", failing_site_purge)
    app.content.update_option("title", "A new name")  # owes a whole-site purge: fails
    app.content.update_post(site.post.id, title="First")  # owes a tag purge: would work
    assert len(owed(app)) == 2
    assert engine.hold.active()
    assert app.invalidation.drain() is False  # oldest first: the site purge still fails
    assert len(owed(app)) == 2
    assert engine.hold.active()
    site_purge_fails["yes"] = False
    assert app.invalidation.drain() is True
    assert owed(app) == []
    assert not engine.hold.active()
    assert b"A new name" in body(app, pages["unrelated"])


def test_an_outbox_read_failure_neither_raises_nor_releases(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    app.cache.engine.hold.engage("earlier failure")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("database is locked")

    monkeypatch.setattr(app.invalidation.outbox, "pending", broken)
    assert app.invalidation.drain() is False
    assert app.cache.engine.hold.active()


def test_a_raising_save_post_action_still_lets_the_purge_be_applied(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    # A plugin's save_post action fails after the edit committed: the edit stays saved, so its
    # purge must be applied (or held) before the error reaches the client, never left to a tick.
    def broken_plugin(*args: Any) -> None:
        raise RuntimeError("a plugin's bug")

    app.hooks.add_action("save_post", broken_plugin)
    with pytest.raises(RuntimeError, match="a plugin's bug"):
        app.content.update_post(site.post.id, title="Saved despite the plugin")
    assert app.content.get_post(site.post.id).title == "Saved despite the plugin"  # type: ignore[union-attr]
    assert owed(app) == []
    assert not is_hit(app, pages["post"])
    assert b"Saved despite the plugin" in body(app, pages["post"])


def test_a_raising_action_with_a_failing_purge_engages_the_hold(
    app: App, site: SmallSite, pages: dict[str, str], outage: Outage
) -> None:
    app.hooks.add_action("save_post", lambda *args: 1 / 0)
    outage.down = True
    with pytest.raises(ZeroDivisionError):
        app.content.update_post(site.post.id, title="Edited while both fail")
    assert len(owed(app)) == 1
    assert app.cache.engine.hold.active()  # fail closed: every page bypasses
    assert status(app, pages["post"]) == "sitecache; fwd=bypass; detail=purge_pending"
