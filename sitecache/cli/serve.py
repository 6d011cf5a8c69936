"""``sitecache serve``: run the site under gunicorn, initializing it on first start.

Every expected failure (a bad or busy address, an unwritable data directory, a plugin that
cannot be loaded or activated) is one line here, before gunicorn replaces this process.
"""

from __future__ import annotations

import argparse
import os
import sys

from sitecache.app import App
from sitecache.auth.db import StoreUnavailable
from sitecache.auth.keys import SHARED_KEY_COPY
from sitecache.auth.store import make_private_directory
from sitecache.cli.configuration import checked, environment_of
from sitecache.cli.identity import persist_identity
from sitecache.cli.initialize import fill_demo_content
from sitecache.cli.output import say, terminal_text
from sitecache.cli.users import create_administrator, open_auth
from sitecache.config import check_writable_data_dir, load_config
from sitecache.serving import check_bind, check_plugin, gunicorn_argv, site_url_for

__all__ = ["command_serve"]


def command_serve(args: argparse.Namespace) -> int:
    """Run gunicorn serving ``sitecache.app:create_app()`` (replaces this process)."""
    environment = environment_of(args)
    config = checked(load_config(environ=environment))
    # A bad or busy address is reported before anything is created (and checked again by
    # gunicorn, which binds it).
    check_bind(args.bind)
    check_writable_data_dir(config)  # one line naming the directory and the user
    make_private_directory(config.data_dir)
    # The identity comes from the configuration, before a site_url is derived from --bind:
    # the command line (which knows no bind address) must find the same cache.
    persist_identity(config)
    if config.site_url is None:
        site_url = site_url_for(args.bind)
        if site_url is None:
            print(
                "sitecache: site_url is not set; links will follow each request's Host header. "
                "Set site_url (SITECACHE_SITE_URL) for a public site.",
                file=sys.stderr,
            )
        else:
            # SECURITY: links never follow a client's Host header unless asked to.
            environment["SITECACHE_SITE_URL"] = site_url
    try:
        auth = open_auth(config)
        if auth.users.count() == 0:
            say(f"First start: initializing {config.data_dir.resolve()}.")
            create_administrator(auth, "admin", None, output_is_log=True)
            if args.demo:
                fill_demo_content(auth)
        auth.store.close()
    except StoreUnavailable as exc:
        # A site this node served before starts anyway (its workers read the node's copies
        # of the shared key and namespace): cached pages are served, the rest answers 503.
        if not (config.data_dir / SHARED_KEY_COPY).is_file():
            raise
        print(f"sitecache: {terminal_text(exc)}; serving anyway (503 until it answers)",
              file=sys.stderr)  # fmt: skip
    # gunicorn's workers read the environment: hand them the options and the resolved data
    # directory (this process is replaced by gunicorn right after).
    environment["SITECACHE_DATA_DIR"] = str(config.data_dir.resolve())
    # Expected failures are reported here, on one line, before gunicorn starts: a plugin that
    # cannot be loaded (and, above, an address that cannot be listened on).
    for spec in config.plugins:
        check_plugin(spec)
    _check_plugins_activate(environment)
    argv = [sys.executable, "-m", "gunicorn"]
    if args.reload:
        argv.append("--reload")
    argv += gunicorn_argv(args.bind, args.workers, threads=args.threads, timeout=args.timeout)
    print(f"sitecache: serving {config.data_dir.resolve()} on http://{args.bind}/", flush=True)
    os.execve(sys.executable, argv, environment)  # noqa: S606 - our interpreter, fixed arguments


def _check_plugins_activate(environment: dict[str, str]) -> None:
    """Build the application once, as each gunicorn worker will, when the configuration
    names plugins, and close it: a plugin whose ``activate(app)`` raises (or a target that
    is callable but no plugin, ``json:dumps``) is then one `ConfigError` line here rather
    than a traceback from every worker that fails to boot.

    Raises:
        ConfigError: a plugin cannot be loaded or failed to activate.
    """
    config = load_config(environ=environment)
    if not config.plugins:
        return
    App(config).close()
