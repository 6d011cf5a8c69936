"""The ``sitecache`` command line: its entry point and the table of its commands.

``sitecache init`` creates the data directory, the database, the secret key and an
administrator; ``sitecache serve`` runs the site under gunicorn (initializing it on first
start); ``sitecache user create|list|delete|passwd`` and ``sitecache app-password
create|list|revoke`` manage users and application passwords; ``sitecache cache ...`` and
``nginx-config`` the page cache; ``openapi``, ``health`` and ``plugin`` read or change the
whole site. Configuration comes from the environment as for ``create_app()``
(``SITECACHE_CONFIG``, ``SITECACHE_DATA_DIR``, ...), or from ``--config`` and ``--data-dir``.

As Django finds its management commands by name, each command here is a function of one
module of this package (`COMMAND_MODULES`), imported when the command runs; the grammar is
`sitecache.cli.parser`. So ``--help``, ``--version`` and every command load only what they
use: the cache commands never load the site, its templates or its image library.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Final

from sitecache.cli import parser as grammar
from sitecache.cli.parser import Command

__all__ = ["COMMAND_MODULES", "build_parser", "load_command", "main"]

#: Each command of `sitecache.cli.parser.COMMANDS`: the module of this package and the function
#: of it that runs the command.
COMMAND_MODULES: Final[dict[str, tuple[str, str]]] = {
    "serve": ("serve", "command_serve"),
    "init": ("initialize", "command_init"),
    "migrate": ("migrate", "command_migrate"),
    "user create": ("users", "command_user_create"),
    "user list": ("users", "command_user_list"),
    "user delete": ("users", "command_user_delete"),
    "user passwd": ("users", "command_user_passwd"),
    "app-password create": ("app_passwords", "command_app_password_create"),
    "app-password list": ("app_passwords", "command_app_password_list"),
    "app-password revoke": ("app_passwords", "command_app_password_revoke"),
    "cache": ("cache", "command_cache"),
    "nginx-config": ("nginx", "command_nginx_config"),
    "openapi": ("inspection", "command_openapi"),
    "health": ("inspection", "command_health"),
    "plugin": ("plugins", "command_plugin"),
}


def load_command(name: str) -> Command:
    """The function that runs the command ``name`` (`COMMAND_MODULES`), its module imported now.

    Raises:
        KeyError: no such command.
    """
    module, function = COMMAND_MODULES[name]
    command: Command = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return command


def _deferred(name: str) -> Command:
    """The command ``name``, its module imported when it runs, not when the parser is built."""

    def run(args: argparse.Namespace) -> int:
        return load_command(name)(args)

    return run


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand (`sitecache.cli.parser`); building it imports
    no command."""
    return grammar.build_parser({name: _deferred(name) for name in COMMAND_MODULES})


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command = args.handler
    try:
        status = handler(args)
        # A reader that went away is found here, not in the interpreter's flush at exit.
        sys.stdout.flush()
    except BrokenPipeError:
        return _reader_gone()
    except Exception as exc:
        # Loaded once a command failed: --help and --version load none of its modules.
        from sitecache.cli.failures import expected_failure

        failure = expected_failure(exc)
        if failure is None:
            raise
        return failure
    return status


def _reader_gone() -> int:
    """The output's reader went away (``sitecache user list | head -1``): exit quietly with
    status 1, as the Python documentation's "Note on SIGPIPE" does.

    Standard output is pointed at ``os.devnull`` so that the interpreter's last flush of what
    is still buffered cannot fail (and print) again.
    """
    try:
        descriptor = sys.stdout.fileno()
    except (OSError, ValueError):
        return 1  # not a file descriptor (captured output): nothing will be flushed to it
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)
    return 1
