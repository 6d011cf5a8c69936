"""What serving a REST request works out from its host alone, kept per host.

The host context of a request (`RequestContext`: scheme, host, port, admin area) and the
headers every answer starts with (Content-Type, X-Robots-Tag, the API-root ``Link``,
X-Content-Type-Options) depend on the host, the settings and the filters, not on the rest of
the request. They are worked out once per host (at most `_LIMIT` hosts, then all are forgotten
at once) and kept while the settings object and the hooks stay the same; the caller builds the
headers per request as before while a ``rest_url`` filter (which could make the API root depend
on the request) has a callback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from sitecache.bounded_memo import BoundedMemo
from sitecache.rest.urls import RequestContext

__all__ = ["ADMIN_PREFIX", "Host", "HostDefaults"]

ADMIN_PREFIX: Final = "/site-admin"
_LIMIT: Final = 64


_Stamp = tuple[int, object]
"""The hooks version and the settings object that kept values were worked out under."""


class Host:
    """One host's context and, under one stamp, its default headers (JSONP or not)."""

    __slots__ = ("context", "kept")

    def __init__(self, context: RequestContext) -> None:
        self.context = context
        self.kept: tuple[_Stamp, dict[bool, dict[str, str]]] = ((-1, None), {})

    def headers(
        self,
        stamp: _Stamp,
        jsonp: bool,
        build: Callable[..., dict[str, str]],
        *arguments: Any,
    ) -> dict[str, str]:
        """A copy of ``build(*arguments)``'s headers for this host, kept per ``stamp`` (the
        hooks version and the settings object) and ``jsonp``."""
        kept_stamp, kept = self.kept
        if kept_stamp[0] != stamp[0] or kept_stamp[1] is not stamp[1]:  # not _same
            kept = {}
            self.kept = (stamp, kept)
        found = kept.get(jsonp)
        if found is None:
            found = kept[jsonp] = build(*arguments)
        return dict(found)


class HostDefaults:
    """The per-host memo of one REST server."""

    def __init__(self) -> None:
        self._hosts: BoundedMemo[tuple[Any, ...], Host] = BoundedMemo(_LIMIT)

    def lookup(self, environ: Mapping[str, Any]) -> Host:
        """The host of ``environ``: its `RequestContext` (as ``RequestContext.from_environ``
        makes it), one object per host."""
        path = str(environ.get("PATH_INFO") or "")
        key = (
            environ.get("wsgi.url_scheme"),
            environ.get("HTTP_HOST"),
            environ.get("SERVER_NAME"),
            environ.get("SERVER_PORT"),
            environ.get("SCRIPT_NAME"),
            path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/"),
        )
        host = self._hosts.get(key)
        if host is None:
            host = self._hosts.keep(key, Host(RequestContext.from_environ(environ, ADMIN_PREFIX)))
        return host
