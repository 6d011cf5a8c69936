"""The encoded body of the API index, kept while nothing that shapes it changes.

The index (``GET /``) is about 48 KB of JSON describing every route; building and encoding it
costs far more than the rest of a request. Its body depends on the server's settings, the host
and scheme of the request (its URLs), the routes, the ``context`` asked for, the
``authentication`` entry (which `rest_authentication_index` computes per request: whether
application passwords are available to this client) and ``_pretty``, never on the caller
otherwise; the headers (``Allow``, CORS, ``Vary``, no-cache for logged-in callers) are still
built per request. A kept body is used only while every filter that could change the body
between the index handler and the encoder runs nothing but the server's own callbacks, and
only for the very data the index handler built (`remember`), so ``_fields``, ``_embed``,
``_envelope`` and any plugin's filter see the usual work done.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from sitecache.bounded_memo import BoundedMemo
from sitecache.hooks import Hooks
from sitecache.rest.json_encoding import encode_json
from sitecache.rest.request import RestRequest
from sitecache.rest.response import RestResponse

__all__ = ["BODY_FILTERS", "IndexBodies"]

BODY_FILTERS: Final = (
    "rest_pre_dispatch",
    "rest_request_before_callbacks",
    "rest_dispatch_request",
    "rest_request_after_callbacks",
    "rest_route_data",
    "rest_url",
    "rest_index",
    "rest_post_dispatch",
    "rest_pre_serve_request",
    "rest_response_link_curies",
    "rest_pre_echo_response",
)
"""The filters run between dispatching ``GET /`` and encoding its body; while any of them runs
a callback other than the server's own, the body is built anew for every request."""

_LIMIT: Final = 32
"""Most bodies kept per server (hosts, schemes, contexts); the oldest go all at once beyond."""
_MEMO: Final = "index_body"


class IndexBodies:
    """Encoded API-index bodies of one server.

    Args:
        hooks: the server's hooks.
        own_callbacks: filter name → the server's own callbacks of it, for the filters of
            `BODY_FILTERS` it registers itself.
    """

    def __init__(self, hooks: Hooks, own_callbacks: Mapping[str, tuple[Callable[..., Any], ...]]):
        self._hooks = hooks
        self._own = {name: tuple(own_callbacks.get(name, ())) for name in BODY_FILTERS}
        self._bodies: BoundedMemo[tuple[Any, ...], str] = BoundedMemo(_LIMIT)
        self._verdict: tuple[int, bool] = (-1, False)
        """(hooks version, whether the body filters ran only the server's callbacks then)."""

    def _untouched(self, version: int) -> bool:
        """Whether the body filters run only the server's own callbacks (worked out once per
        change to the hooks)."""
        checked, untouched = self._verdict
        if checked != version:
            untouched = all(self._hooks.callbacks(name) == own for name, own in self._own.items())
            self._verdict = (version, untouched)
        return untouched

    def remember(self, request: RestRequest, data: dict[str, Any], shape: tuple[Any, ...]) -> None:
        """Note that ``data`` is the index ``request`` is answered with, shaped by ``shape``
        (everything that decides its body besides the hooks: settings, host context, routes
        version, context); its ``authentication`` entry is part of the key as JSON."""
        version = self._hooks.version
        if not self._untouched(version):
            return
        try:
            authentication = encode_json(data.get("authentication"))
        except ValueError:
            return
        request.memo[_MEMO] = (data, (version, *shape, authentication))

    def key_for(self, request: RestRequest, response: RestResponse) -> tuple[Any, ...] | None:
        """The key of ``response``'s body when it is the index `remember` noted, unchanged
        since (its own data, no filter added), else ``None``. ``_pretty`` is part of it."""
        noted = request.memo.get(_MEMO)
        if noted is None or noted[0] is not response.get_data() or response.get_status() != 200:
            return None
        key: tuple[Any, ...] = noted[1]
        if key[0] != self._hooks.version:
            return None
        return (*key, request.get_param("_pretty") is not None)

    def get(self, key: tuple[Any, ...]) -> str | None:
        """The body kept under ``key``, if any."""
        return self._bodies.get(key)

    def put(self, key: tuple[Any, ...], body: str) -> None:
        """Keep ``body`` under ``key`` (all bodies are dropped when `_LIMIT` is reached)."""
        self._bodies.keep(key, body)
