"""``sitecache migrate``: bring the site database's schema (auth and content tables) up to
this release; a shared PostgreSQL is migrated only by this command or ``init``."""

from __future__ import annotations

import argparse

from sitecache.cli.configuration import configure
from sitecache.cli.users import open_auth
from sitecache.config import check_writable_data_dir
from sitecache.site.migrations import migrate_content

__all__ = ["command_migrate"]


def command_migrate(args: argparse.Namespace) -> int:
    """Apply every pending migration (auth and content tables); print the versions."""
    config = configure(args)
    check_writable_data_dir(config)  # one line naming the directory and the user
    auth = open_auth(config, migrate=True)
    try:
        migrate_content(auth.store, apply=True)
        for component in ("auth", "site"):
            print(f"{component}: schema version {auth.store.version(component)}")
        print(f"The database {auth.store.describe()} is up to date.")
    finally:
        auth.store.close()
    return 0
