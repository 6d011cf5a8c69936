"""What one HTTP request and the internal requests made for it share.

Permission verdicts are kept per request object (`check_permission`); the memo of the outermost
request (`shared_memo`) holds what it and its internal requests (embedding, target hints,
batch; `inherit_caller`) may share, such as users read from the database.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from sitecache.errors import RestError
from sitecache.rest.request import RestRequest

__all__ = ["PERMISSIONS", "check_permission", "inherit_caller", "shared_memo"]

PERMISSIONS: Final = "permissions"


def check_permission(callback: Callable[[RestRequest], Any], request: RestRequest) -> Any:
    """What ``callback(request)`` answers, computed once per (callback, request).

    Dispatch, the ``Allow`` header and target hints all ask the same callbacks about the same
    request; the first answer is kept in ``request.memo`` and reused. A `RestError` the
    callback raises is its answer, as if returned (callbacks raise their refusals); any other
    exception is not kept: the next caller sees it again. Matching the request anew forgets
    the answers.
    """
    verdicts: dict[int, tuple[Any, Any]] = request.memo.setdefault(PERMISSIONS, {})
    known = verdicts.get(id(callback))
    if known is not None and known[0] is callback:
        return known[1]
    try:
        verdict = callback(request)
    except RestError as refused:
        verdict = refused
    verdicts[id(callback)] = (callback, verdict)
    return verdict


def inherit_caller(request: RestRequest, caller: RestRequest) -> None:
    """Internal requests (embedding, batch, target hints) run as the outer request's user."""
    request.user = caller.user
    request.app_password = caller.app_password
    request.authentication_method = caller.authentication_method
    request.environ = caller.environ
    request.memo[_SHARED] = shared_memo(caller)


_SHARED: Final = "shared"


def shared_memo(request: RestRequest) -> dict[str, Any]:
    """The memo of the outermost request: results (such as users read from the database) that
    it and the internal requests made for it (`inherit_caller`) share."""
    shared: dict[str, Any] | None = request.memo.get(_SHARED)
    if shared is None:
        shared = request.memo[_SHARED] = {}
    return shared
