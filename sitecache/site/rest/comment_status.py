"""A comment's ``status`` over REST, as WordPress's comments controller spells it.

WordPress stores ``approve`` as ``1`` and answers it as ``approved``; the schema has no enum,
and a write accepts ``approved``, ``approve`` or ``1``, ``hold`` or ``0``, ``spam``, ``unspam``,
``trash`` and ``untrash`` (``handle_status_param``), after ``sanitize_key`` (lower case, only
``a-z``, ``0-9``, ``_`` and ``-`` kept). So what a GET answers can be sent back unchanged.

Two deliberate differences: asking for the status a comment already has succeeds (WordPress
answers 500 ``rest_comment_failed_edit``), and an unknown status is a 400 ``rest_invalid_param``
naming ``status`` (WordPress ignores it, or answers that 500 when it is the only change).
``unspam`` and ``untrash`` bring a spam or trashed comment back to ``hold``, as WordPress does
when it kept no earlier status; on a comment that is not spam (not trashed) they change nothing.
"""

from __future__ import annotations

import re
from typing import Final

from sitecache.domain_errors import InvalidFields

__all__ = ["STATUS_WORDS", "requested_status", "status_for_response"]

#: Every value a client may send as a comment's ``status``, in WordPress's order.
STATUS_WORDS: Final = (
    "approved",
    "approve",
    "1",
    "hold",
    "0",
    "spam",
    "unspam",
    "trash",
    "untrash",
)

#: The stored status each plain value sets.
_SETS: Final = {
    "approved": "approve",
    "approve": "approve",
    "1": "approve",
    "hold": "hold",
    "0": "hold",
    "spam": "spam",
    "trash": "trash",
}

#: ``unspam`` and ``untrash``: the stored status they leave, and the one they act on.
_RESTORES: Final = {"unspam": "spam", "untrash": "trash"}

_NOT_KEY: Final = re.compile(r"[^a-z0-9_\-]")


def status_for_response(stored: str) -> str:
    """What REST answers for a stored status: ``approved`` for ``approve``, others as stored
    (WordPress's ``prepare_status_response``)."""
    return "approved" if stored == "approve" else stored


def requested_status(value: str, current: str | None) -> str | None:
    """The stored status a client's ``status`` asks for, given the comment's ``current`` one
    (``None`` for a new comment); ``None`` when it changes nothing.

    Raises:
        InvalidFields: ``rest_invalid_param`` naming ``status`` for a value outside
            `STATUS_WORDS` (after ``sanitize_key``).
    """
    word = _NOT_KEY.sub("", value.lower())
    if word in _SETS:
        return _SETS[word]
    if word in _RESTORES:
        return "hold" if current == _RESTORES[word] else None
    words = ", ".join(STATUS_WORDS[:-1]) + f", and {STATUS_WORDS[-1]}"
    message = f"status is not one of {words}."
    raise InvalidFields.from_fields({"status": {"code": "rest_invalid_param", "message": message}})
