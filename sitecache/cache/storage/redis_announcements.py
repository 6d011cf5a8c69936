"""The Redis backend's purge announcements (`Storage.announcements`): a stream of records under
consecutive numbers, read from a cursor; a reader learns when records it did not read were
trimmed, or when the namespace was emptied and the numbers started again."""

from __future__ import annotations

from typing import Any, Final

from sitecache.cache.storage.records import Announcements

__all__ = ["ANNOUNCEMENTS_KEPT", "ANNOUNCEMENTS_READ", "read_announcements"]

#: Announcements (`announce`) kept for the machines that follow them: one that falls further
#: behind learns that it missed some (`Announcements.complete`).
ANNOUNCEMENTS_KEPT: Final = 10_000
#: Announcements one `announcements` call returns at most.
ANNOUNCEMENTS_READ: Final = 1_000


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def read_announcements(client: Any, stream: str, counter: str, cursor: str | None) -> Announcements:
    """The records of the stream ``stream`` numbered after ``cursor`` (the count of records
    announced so far is ``counter``); ``None``: none, with the cursor of now.

    Raises:
        redis.RedisError: Redis failed.
    """
    if cursor is None:
        return Announcements(str(int(client.get(counter) or 0)))
    after = int(cursor) if cursor.isdigit() else 0
    pipe = client.pipeline(transaction=False)
    pipe.get(counter)
    pipe.xrange(stream, min=f"({after}-1", count=ANNOUNCEMENTS_READ)
    count, entries = pipe.execute()
    count = int(count or 0)
    if count < after:  # the namespace was cleared: its numbers started again
        return Announcements(str(count), [], complete=False)
    if not entries:
        return Announcements(str(count), [], complete=count == after)
    numbers = [int(_text(entry_id).split("-", 1)[0]) for entry_id, _ in entries]
    records = [fields.get(b"r", b"") for _, fields in entries]
    return Announcements(str(numbers[-1]), records, complete=numbers[0] == after + 1)
