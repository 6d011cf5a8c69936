"""New data directories for the tests' applications, migrated once per test process.

A site's first start migrates its SQLite database (``site.db``: the auth and content tables)
and creates the disk cache's index (``cache/``): about half of what building a test
application costs, and almost every test builds one. `DataDirTemplate` does that work once
per test process (pytest-xdist worker), in a directory of its own, with nothing but the
stores' own code (no hooks, no plugins: whatever a test has patched or installed cannot
reach it), and copies the result into each new data directory an application is built on.
What the application then finds is what a first start leaves behind, so it starts as a
restarted site does: its migrations find nothing to do.

Each copy is a store of its own: the disk cache gets a new store identity (`STORE_IDENTITY`,
what static copies are checked against), and the secret key is not part of the template
(each site creates its own on first start). `tests.postgres.WorkerSchema` is the same idea
for PostgreSQL.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from sitecache.auth.store import SiteStore, make_private_directory
from sitecache.cache import DiskStorage
from sitecache.cache.storage import STORE_IDENTITY
from sitecache.site.migrations import migrate_content

#: Where the site store and the disk cache live in a data directory (`sitecache.app`).
SITE_DATABASE = "site.db"
CACHE_DIRECTORY = "cache"
CACHE_INDEX = "index.sqlite3"


class DataDirTemplate:
    """A data directory as the migrations leave it, made on first use under ``directory``
    and copied into new data directories (`copy_to`)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._made = False

    def _make(self) -> None:
        make_private_directory(self.directory)
        store = SiteStore(self.directory / SITE_DATABASE)
        try:
            store.migrate()
            migrate_content(store, apply=True)
        finally:
            store.close()
        DiskStorage(self.directory / CACHE_DIRECTORY).close()
        self._made = True

    def copy_to(self, data_dir: Path) -> None:
        """Create ``data_dir`` (which must not exist) as a migrated data directory whose disk
        cache is a store of its own."""
        if not self._made:
            self._make()
        # Modes are copied (0700 directories, 0600 databases, as the stores make them);
        # times are not: the purge generation is the generation file's inode and times.
        shutil.copytree(self.directory, data_dir, copy_function=shutil.copy)
        index = data_dir / CACHE_DIRECTORY / CACHE_INDEX
        with closing(sqlite3.connect(index)) as connection, connection:
            # What a new index gets (`sitecache.cache.storage.disk_schema.create_schema`).
            renamed = connection.execute(
                "UPDATE named_values SET value = CAST(lower(hex(randomblob(16))) AS BLOB)"
                " WHERE name = ?",
                (STORE_IDENTITY,),
            ).rowcount
        assert renamed == 1, f"no store identity in {index}: the disk cache's layout changed"
