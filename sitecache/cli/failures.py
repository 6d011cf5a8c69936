"""The expected failures of a ``sitecache`` command, each reported on one line of standard
error with its exit status; anything else is a bug, shown with its traceback.

`sitecache.cli.main` imports this module once a command failed: an exception of a module no
command loaded cannot have been raised, and ``--help`` loads none of these.
"""

from __future__ import annotations

import sqlite3
import sys

from sitecache.auth.db import DatabaseError
from sitecache.config import ConfigError
from sitecache.domain_errors import DomainError, OutageError
from sitecache.terminal import terminal_text

__all__ = ["expected_failure"]


def expected_failure(exc: Exception) -> int | None:
    """Report an expected failure on one line of standard error; its exit status (``None``:
    not one, a bug to show with its traceback)."""
    if isinstance(exc, ConfigError):
        print(f"sitecache: {terminal_text(exc)}", file=sys.stderr)
        return 2
    if isinstance(exc, OutageError):
        # The site's database down, locked or full: what failed, where (no password).
        print(f"sitecache: {terminal_text(exc)}", file=sys.stderr)
        return 1
    if isinstance(exc, DomainError):
        # A refusal of the domain (users, passwords, cache options and URLs), in its words.
        print(f"sitecache: {terminal_text(exc.message)}", file=sys.stderr)
        return 1
    if isinstance(exc, UnicodeError):
        # Command-line text that is not UTF-8 arrives with lone surrogates.
        print("sitecache: the arguments must be valid UTF-8 text", file=sys.stderr)
        return 2
    if isinstance(exc, sqlite3.Error | DatabaseError):
        # A full disk, a read-only or corrupt database, a schema of another release: the
        # reason, without a traceback.
        print(f"sitecache: the site database cannot be used: {terminal_text(exc)}", file=sys.stderr)
        return 1
    if isinstance(exc, OSError):
        # A read-only or missing directory, a permission problem.
        where = f": {exc.filename}" if exc.filename else ""
        print(f"sitecache: {terminal_text(f'{exc.strerror or exc}{where}')}", file=sys.stderr)
        return 1
    return None
