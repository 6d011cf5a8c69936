"""The migrated data directory the tests' applications start on (`tests.data_dirs`) is what a
site's first start makes, and each copy is a site of its own."""

from __future__ import annotations

import sqlite3
import stat
from contextlib import closing
from pathlib import Path
from typing import Any

from sitecache.app import App, create_app
from sitecache.cache.storage import STORE_IDENTITY
from tests.conftest import AppFactory
from tests.data_dirs import CACHE_DIRECTORY, CACHE_INDEX, SITE_DATABASE, DataDirTemplate


def _layout(database: Path) -> dict[str, Any]:
    """The schema of an SQLite file, its version pragma and its schema versions (if any)."""
    with closing(sqlite3.connect(database)) as connection:
        tables = sorted(connection.execute("SELECT type, name, sql FROM sqlite_master"))
        versions = (
            sorted(connection.execute("SELECT component, version FROM schema_versions"))
            if any(name == "schema_versions" for _, name, _ in tables)
            else []
        )
        return {
            "tables": tables,
            "user_version": connection.execute("PRAGMA user_version").fetchone()[0],
            "versions": versions,
        }


def _files(data_dir: Path) -> dict[str, int]:
    """Every file and directory under ``data_dir`` with its permission bits."""
    return {
        str(path.relative_to(data_dir)): stat.S_IMODE(path.stat().st_mode)
        for path in sorted(data_dir.rglob("*"))
    }


def _store_identity(data_dir: Path) -> bytes:
    with closing(sqlite3.connect(data_dir / CACHE_DIRECTORY / CACHE_INDEX)) as connection:
        row = connection.execute(
            "SELECT value FROM named_values WHERE name = ?", (STORE_IDENTITY,)
        ).fetchone()
    return bytes(row[0])


def _config(data_dir: Path) -> dict[str, Any]:
    return {
        "data_dir": str(data_dir),
        "site_url": "http://example.org",
        "password_hash_cost": 1024,
        "cache_timers": False,
    }


def test_a_copied_data_directory_is_what_a_first_start_makes(
    app_factory: AppFactory, tmp_path: Path
) -> None:
    copied = app_factory()
    fresh = create_app(_config(tmp_path / "fresh"))
    apps: list[App] = [copied, fresh]
    try:
        for app in apps:
            # Each is a new site: no users yet.
            assert app.auth.users.count() == 0
    finally:
        for app in apps:
            app.close()
    copied_dir, fresh_dir = tmp_path / "var", tmp_path / "fresh"
    assert _files(copied_dir) == _files(fresh_dir)
    for database in (SITE_DATABASE, f"{CACHE_DIRECTORY}/{CACHE_INDEX}"):
        assert _layout(copied_dir / database) == _layout(fresh_dir / database), database


def test_each_copy_is_a_site_of_its_own(tmp_path: Path) -> None:
    template = DataDirTemplate(tmp_path / "template")
    sites = [tmp_path / "one", tmp_path / "two"]
    for data_dir in sites:
        template.copy_to(data_dir)
        create_app(_config(data_dir)).close()
    one, two = sites
    # Its own disk-cache store (static copies are checked against it) and its own secret key.
    assert _store_identity(one) != _store_identity(two)
    assert (one / "secret.key").read_bytes() != (two / "secret.key").read_bytes()
    # Nothing of a site ever reaches the template.
    assert not (tmp_path / "template" / "secret.key").exists()
