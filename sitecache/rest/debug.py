"""Misuse and deprecation notices, and the debug headers that carry them.

``doing_it_wrong``, ``deprecated_function`` and ``deprecated_argument`` fire the actions
``doing_it_wrong_run``, ``deprecated_function_run`` and ``deprecated_argument_run``, are logged,
and, in debug mode while a REST request is being served, become the response headers
``X-Site-DoingItWrong``, ``X-Site-DeprecatedFunction`` and ``X-Site-DeprecatedParam`` (a later
notice of the same kind replaces an earlier one). The schema engine's notices are routed here
for the duration of each REST request.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Final

from sitecache.hooks import Hooks
from sitecache.schema.notices import report_misuse_to

__all__ = ["DebugNotices"]

logger = logging.getLogger("sitecache.rest")

DOING_IT_WRONG_HEADER: Final = "X-Site-DoingItWrong"
DEPRECATED_FUNCTION_HEADER: Final = "X-Site-DeprecatedFunction"
DEPRECATED_PARAM_HEADER: Final = "X-Site-DeprecatedParam"

_WHITESPACE = re.compile(r"\s+")
_collected: ContextVar[dict[str, str] | None] = ContextVar("sitecache_debug_headers", default=None)


def _describe(function: str, details: list[str]) -> str:
    text = f"{function} ({'; '.join(details)})" if details else function
    return _WHITESPACE.sub(" ", text).strip()


class DebugNotices:
    """The notices of one application.

    Args:
        hooks: the application's hooks (the ``*_run`` actions fire on them).
        debug: whether debug headers are sent.
    """

    def __init__(self, hooks: Hooks, debug: bool = False) -> None:
        self.hooks = hooks
        self.debug = debug
        self._report = self.doing_it_wrong  # the schema engine's reporter, bound once

    def doing_it_wrong(self, function: str, message: str, version: str | None = None) -> None:
        """Record that ``function`` was used wrongly (``_doing_it_wrong``)."""
        self.hooks.do_action("doing_it_wrong_run", function, message, version)
        details = ([f"since {version}"] if version else []) + [message]
        self._record(DOING_IT_WRONG_HEADER, _describe(function, details))

    def deprecated_function(
        self, function: str, replacement: str | None = None, version: str | None = None
    ) -> None:
        """Record a call to a deprecated function (``_deprecated_function``)."""
        self.hooks.do_action("deprecated_function_run", function, replacement, version)
        advice = f"use {replacement} instead" if replacement else "no alternative available"
        details = ([f"since {version}"] if version else []) + [advice]
        self._record(DEPRECATED_FUNCTION_HEADER, _describe(function, details))

    def deprecated_argument(
        self, function: str, message: str | None = None, version: str | None = None
    ) -> None:
        """Record use of a deprecated argument or parameter (``_deprecated_argument``)."""
        self.hooks.do_action("deprecated_argument_run", function, message, version)
        details = ([f"since {version}"] if version else []) + [
            message or "no alternative available"
        ]
        self._record(DEPRECATED_PARAM_HEADER, _describe(function, details))

    def repeat_registration_notice(self, function: str, message: str) -> None:
        """Put a notice given when a route registered into this response's debug header.

        WordPress registers every route on every request, so a registration notice reaches the
        header of each response; here routes register once, so the notice is repeated (without
        firing the action or logging again). A notice raised while serving wins, as it comes
        later in WordPress.
        """
        collected = _collected.get()
        if self.debug and collected is not None:
            collected.setdefault(DOING_IT_WRONG_HEADER, _describe(function, [message]))

    def _record(self, header: str, text: str) -> None:
        logger.warning("%s: %s", header, text)
        if not self.debug:
            return
        collected = _collected.get()
        if collected is not None:
            collected[header] = text

    def collecting(self) -> _Collecting:
        """Collect debug headers for one REST request (also the schema engine's notices):
        ``with notices.collecting() as headers:``."""
        return _Collecting(self._report, self.debug)


class _Collecting:
    """The ``with`` block of `DebugNotices.collecting` (a class: every REST request enters one)."""

    __slots__ = ("_debug", "_misuse", "_token")

    def __init__(self, doing_it_wrong: Callable[[str, str], None], debug: bool) -> None:
        self._misuse = report_misuse_to(doing_it_wrong)
        self._debug = debug
        self._token: Token[dict[str, str] | None] | None = None

    def __enter__(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        # Headers are collected in debug mode only (nothing reads them otherwise).
        if self._debug:
            self._token = _collected.set(headers)
        self._misuse.__enter__()
        return headers

    def __exit__(self, *exc_info: object) -> None:
        self._misuse.__exit__()
        if self._token is not None:
            _collected.reset(self._token)
            self._token = None
