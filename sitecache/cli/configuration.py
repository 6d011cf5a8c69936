"""The configuration a ``sitecache`` command runs on: the environment (``SITECACHE_CONFIG``,
``SITECACHE_DATA_DIR``, ...) as for ``create_app()``, with ``--config`` and ``--data-dir``
applied, and the site it names (its data directory and database)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Final

from sitecache.auth.store import SiteStore, is_postgres_url, make_private_directory
from sitecache.config import Config, ConfigError, load_config

__all__ = ["checked", "configure", "environment_of", "missing_site"]

#: What ``--config`` and ``--data-dir`` name (their refusal when given empty).
_OPTION_NAMES: Final = {"config": "TOML configuration file", "data_dir": "data directory"}


def environment_of(args: argparse.Namespace) -> dict[str, str]:
    """The process environment with ``--config`` and ``--data-dir`` applied.

    Raises:
        ConfigError: an option given empty (``--data-dir ''`` would otherwise mean ``./var``
            without a word).
    """
    environment = dict(os.environ)
    for option, variable in (("config", "SITECACHE_CONFIG"), ("data_dir", "SITECACHE_DATA_DIR")):
        value = getattr(args, option, None)
        if value is None:
            continue
        if not value.strip():
            flag = "--" + option.replace("_", "-")
            raise ConfigError(f"{flag} is empty: name a {_OPTION_NAMES[option]}")
        environment[variable] = str(Path(value).resolve())
    return environment


def configure(args: argparse.Namespace, *, site: bool = True) -> Config:
    """The configuration, read from the environment with the command-line options applied.

    ``site``: the command reads or changes an existing site (every command but those that
    create one, ``init``, ``serve`` and ``user create --role administrator``, and
    ``nginx-config``, which reads the configuration only).

    Raises:
        ConfigError: ``site`` and the data directory holds no site (`missing_site`): nothing
            is created.
    """
    config = checked(load_config(environ=environment_of(args)))
    if site:
        missing = missing_site(config)
        if missing:
            raise ConfigError(missing)
    return config


def missing_site(config: Config) -> str:
    """Why ``config`` names no existing site ("" when it names one): its data directory does
    not exist or holds no site database (SQLite); the message names the directory and the
    command that creates a site.

    A site in PostgreSQL lives in its database (whose schema each command checks when it
    opens it); a node's own data directory (disk cache, logs) is then created when missing,
    0700, like ``sitecache serve`` creates it.
    """
    data_dir = config.data_dir.resolve()
    if is_postgres_url(config.database_url):
        make_private_directory(config.data_dir)
        return ""
    # Only the file's path is read: a SiteStore opens nothing until it is used.
    database = SiteStore(config.data_dir / "site.db", url=config.database_url or None).path
    if not data_dir.is_dir():
        problem = "the directory does not exist"
    elif not database.is_file():
        problem = f"no site database {database.resolve()}"
    else:
        return ""
    return (
        f"no site in the data directory {data_dir} ({problem}): create one with "
        "`sitecache init`, or name the site's data directory with --data-dir DIR or "
        "SITECACHE_DATA_DIR"
    )


def checked(config: Config) -> Config:
    """``config`` once its data directory is known to be usable as one.

    Raises:
        ConfigError: the data directory exists and is not a directory.
    """
    data_dir = config.data_dir
    if data_dir.exists() and not data_dir.is_dir():
        raise ConfigError(f"the data directory {data_dir} exists and is not a directory")
    return config
