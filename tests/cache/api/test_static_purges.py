"""Static copies obey purges (#29): a purge landing between the conditional store and the copy,
pages already cached when the mode is turned on, and copies of a store that started again."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from sitecache.cache import DiskStorage
from sitecache.cache.api.static import StaticFiles
from tests.cache.api.conftest import Api, add_page

URL = "http://example.org/post/"


def copy_of(api: Api, path: str) -> Path:
    static = api.site.app.cache_api.static
    assert static is not None
    directory = static.directory(f"http://example.org{path}")
    assert directory is not None
    return directory / "index.html"


def test_a_purge_landing_between_the_store_and_the_copy_leaves_no_copy(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.json("POST", "/settings", {"static_files": True})
    add_page(api.site, "/post/")
    writing, purged = threading.Event(), threading.Event()
    make_directories = StaticFiles._make_directories

    def paused(static: StaticFiles, directory: Path) -> None:
        # The window widened: the page is stored, its copy not written yet.
        if not writing.is_set():
            writing.set()
            assert purged.wait(10)
        make_directories(static, directory)

    monkeypatch.setattr(StaticFiles, "_make_directories", paused)
    answers: list[Any] = []
    reader = threading.Thread(target=lambda: answers.append(api.page("/post/")))
    reader.start()
    assert writing.wait(10)
    result = api.site.app.cache.engine.purge_urls([URL])  # an edit's purge, meanwhile
    assert result.deleted == 1  # the page was stored before the purge looked
    purged.set()
    reader.join(10)
    assert "stored" in answers[0].headers["Cache-Status"]
    # The purge's listener looked before the files existed; the copy was removed after.
    assert not copy_of(api, "/post/").exists()
    # The next request renders the page again and writes its copy.
    assert api.page("/post/").get_data() == copy_of(api, "/post/").read_bytes()


def test_a_copy_survives_when_no_purge_came_while_it_was_written(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True})
    add_page(api.site, "/post/")
    body = api.page("/post/").get_data()
    assert copy_of(api, "/post/").read_bytes() == body


def test_turning_the_mode_on_gives_pages_already_cached_their_copy_on_their_next_request(
    api: Api,
) -> None:
    add_page(api.site, "/post/")
    body = api.page("/post/").get_data()
    assert "hit" in api.page("/post/").headers["Cache-Status"]  # in the memory tier now
    api.json("POST", "/settings", {"static_files": True})
    assert not copy_of(api, "/post/").exists()
    again = api.page("/post/")
    assert again.headers["Cache-Status"].startswith("sitecache; hit")  # still a hit
    assert copy_of(api, "/post/").read_bytes() == body
    # A hit that has its copy rewrites nothing.
    stamp = copy_of(api, "/post/").stat().st_mtime_ns
    api.site.app.cache.tier.clear()
    api.page("/post/")
    assert copy_of(api, "/post/").stat().st_mtime_ns == stamp


def test_copies_of_a_store_that_started_again_go_before_the_next_purge(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True})
    for path in ("/a/", "/b/"):
        add_page(api.site, path)
        api.page(path)
    assert copy_of(api, "/a/").exists()
    directory = Path(api.site.app.cache.engine.location)
    # Another process finds the index damaged and moves it aside: the cache starts empty,
    # and no purge of the new store would find the copies of /a/ and /b/.
    with sqlite3.connect(directory / "index.sqlite3") as settle:
        settle.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the file itself
    with (directory / "index.sqlite3").open("r+b") as index:
        index.write(os.urandom(100))
    DiskStorage(directory).close()
    assert api.site.app.cache.engine.purge_urls(["http://example.org/b/"]).deleted == 0
    assert not copy_of(api, "/a/").exists()
    assert not copy_of(api, "/b/").exists()
    # The new store's pages get their copies again.
    assert api.page("/a/").get_data() == copy_of(api, "/a/").read_bytes()
