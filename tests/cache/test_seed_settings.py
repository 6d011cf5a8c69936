"""``PageCache(settings=...)``: a deployment's first settings are written once, through the
engine (`CacheEngine.seed_settings`), never over settings already stored."""

from __future__ import annotations

from typing import Any

import pytest

from sitecache.cache import CacheEngine, MemoryStorage, PageCache
from sitecache.cache.storage import StorageError


def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


def test_settings_are_written_when_the_storage_has_none() -> None:
    cache = PageCache(app, MemoryStorage(), settings={"max_age": 60, "mobile": True})
    settings = cache.engine.settings()
    assert (settings.max_age, settings.mobile) == (60, True)


def test_settings_already_stored_are_kept() -> None:
    storage = MemoryStorage()
    first = PageCache(app, storage, settings={"max_age": 60})
    assert first.engine.settings().max_age == 60
    second = PageCache(app, storage, settings={"max_age": 120, "mobile": True})
    assert second.engine.settings().max_age == 60
    assert second.engine.settings().mobile is False


def test_invalid_settings_raise_value_error_and_write_nothing() -> None:
    storage = MemoryStorage()
    with pytest.raises(ValueError, match="invalid cache settings"):
        PageCache(app, storage, settings={"max_age": -1})
    assert storage.get_value("settings") is None


class SettingsUnreadable(MemoryStorage):
    def get_value(self, name: str) -> bytes | None:
        raise StorageError("connection refused")


def test_a_storage_failure_is_logged_and_the_cache_still_starts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = CacheEngine(SettingsUnreadable())
    engine.seed_settings({"max_age": 60})
    assert "cache settings not written" in caplog.text
    PageCache(app, engine=engine, settings={"max_age": 60})  # does not raise
