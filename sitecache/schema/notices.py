"""The seam through which the schema engine reports misuse (WordPress's ``_doing_it_wrong``).

The engine is pure, so it cannot log or set headers. It hands each notice to the reporter
installed for the current context (a `contextvars.ContextVar`, so concurrent requests on threads
or tasks never see each other's reporter). The REST layer installs one per request and turns the
notices into the ``X-Site-DoingItWrong`` debug header; without a reporter the notice becomes a
`SchemaMisuseWarning`, which test suites turn into errors and applications can filter.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextvars import ContextVar, Token

__all__ = ["MisuseReporter", "SchemaMisuseWarning", "doing_it_wrong", "report_misuse_to"]

MisuseReporter = Callable[[str, str], None]
"""Receives ``(function, message)`` for each misuse notice."""


class SchemaMisuseWarning(UserWarning):
    """A schema was used in a way the engine tolerates but a plugin author should fix."""


_reporter: ContextVar[MisuseReporter | None] = ContextVar("sitecache_schema_misuse", default=None)


def doing_it_wrong(function: str, message: str) -> None:
    """Report misuse of ``function`` to the current reporter, or as a `SchemaMisuseWarning`."""
    reporter = _reporter.get()
    if reporter is None:
        warnings.warn(f"{function}: {message}", SchemaMisuseWarning, stacklevel=3)
    else:
        reporter(function, message)


class report_misuse_to:  # lower case: used as a function, ``with report_misuse_to(...):``
    """Send every notice raised inside the ``with`` block to ``reporter``.

    ``None`` restores the default (a warning). Nesting is allowed; the previous reporter is
    restored on exit. (A class rather than a generator: every REST request enters one.)
    """

    __slots__ = ("_new", "_token")

    def __init__(self, reporter: MisuseReporter | None) -> None:
        self._new = reporter
        self._token: Token[MisuseReporter | None] | None = None

    def __enter__(self) -> None:
        self._token = _reporter.set(self._new)

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _reporter.reset(self._token)
            self._token = None
