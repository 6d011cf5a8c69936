"""Comment flood control, as WordPress's ``wp_check_comment_flood``: one commenter may not post
a second comment within `DEFAULT_FLOOD_INTERVAL` seconds (the ``comment_flood_interval``
setting; 0 turns it off).

The commenter is the client address or the e-mail address of an anonymous comment (the comment
form), the user or the e-mail address of a logged-in one (REST). The check runs in the new
comment's own write transaction, so concurrent posts cannot all pass it before one is stored:
SQLite's write lock serializes them, and on PostgreSQL an advisory transaction lock does. A
flood is refused with `TooManyRequestsError` (``comment_flood``, 429, ``Retry-After``):
nothing is stored, no hook fires, nothing is purged. Who may moderate comments or manage the
site is never throttled (the caller decides: `sitecache.site.comment_store.CommentStore
.add_comment`'s ``check_flood``).

Hooks, as WordPress's: the filter ``comment_flood_filter(is_flood, time_last, time_new)``
decides (the interval rule's verdict is its first value), and the action
``comment_flood_trigger(time_last, time_new)`` fires on a flood.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from sitecache.auth.db import DbConnection
from sitecache.domain_errors import TooManyRequestsError
from sitecache.hooks import Hooks
from sitecache.site.models import COMMENT_STATUSES
from sitecache.site.queries import placeholders

__all__ = ["DEFAULT_FLOOD_INTERVAL", "check_comment_flood"]

#: WordPress's interval (``wp_throttle_comment_flood``), in seconds.
DEFAULT_FLOOD_INTERVAL: Final = 15
#: How far back the commenter's last comment is looked for (WordPress's hour).
_LOOK_BACK: Final = 3600
#: The advisory lock serializing comment inserts on PostgreSQL while the check runs.
_FLOOD_LOCK: Final = 0x5C_C0FF


def check_comment_flood(
    db: DbConnection,
    *,
    postgres: bool,
    hooks: Hooks,
    values: Mapping[str, Any],
    interval: int,
    now: int,
) -> None:
    """Refuse a new comment (its columns ``values``) posted within ``interval`` seconds of the
    same commenter's last one. Called inside the comment's write transaction (``db``).

    Raises:
        TooManyRequestsError: ``comment_flood``, with the seconds left to wait.
    """
    if interval <= 0 and not hooks.has_filter("comment_flood_filter"):
        return
    who, args = _commenter(values)
    if not who:
        return
    if postgres:
        db.execute("SELECT pg_advisory_xact_lock(?)", (_FLOOD_LOCK,))
    # Through the (status, date_gmt) index: every status, the last hour only.
    statuses = placeholders(COMMENT_STATUSES)
    sql = f"SELECT MAX(date_gmt) FROM comments WHERE status IN ({statuses}) AND date_gmt >= ?"  # noqa: S608
    sql += f" AND ({' OR '.join(who)})"  # fixed fragments; every value is bound
    row = db.execute(sql, [*COMMENT_STATUSES, now - _LOOK_BACK, *args]).fetchone()
    if row is None or row[0] is None:
        return
    last = int(row[0])
    flood = hooks.apply_filters("comment_flood_filter", now - last < interval, last, now)
    if flood:
        hooks.do_action("comment_flood_trigger", last, now)
        raise TooManyRequestsError(
            "comment_flood",
            "You are posting comments too quickly. Slow down.",  # WordPress's words
            retry_after=last + interval - now,
        )


def _commenter(values: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    """The conditions naming the commenter's comments: the user (logged in) or the address
    (anonymous), or the e-mail address; empty values name no one."""
    who: list[str] = []
    args: list[Any] = []
    user_id = int(values.get("user_id") or 0)
    address = str(values.get("author_ip") or "")
    email = str(values.get("author_email") or "")
    if user_id:
        who.append("user_id = ?")
        args.append(user_id)
    elif address:
        who.append("author_ip = ?")
        args.append(address)
    if email:
        who.append("lower(author_email) = lower(?)")
        args.append(email)
    return who, args
