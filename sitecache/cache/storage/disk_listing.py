"""``GET /cache`` on the disk backend: pages of the listing order found through its chunks.

The listing order is newest first, then by URL, then by key: the index ``entries_order`` on
``(epoch, neg_created, url, key)`` (`sitecache.cache.storage.disk_schema`). The table
``chunks`` cuts it into runs whose exact row counts the triggers keep, so page N starts by
summing at most a few hundred counts to find the run holding its first row, then steps at most
`CHUNK_MAX` rows inside it: the last page costs what the first does.

Filters use the same runs where they can:

- ``status=fresh``: the expired rows (few: GC removes them) are read through the expiry
  index and subtracted from each run's count; the page query skips them;
- ``status=expired``: only the expired rows, read through the expiry index, sorted;
- ``search``: a URL substring cannot use an index (a trigram index would cost every stored
  page ~30 µs more), so the matching rows are counted and paged by one scan of the listing
  index (the URLs are in it: no table row is read for a row that does not match). It grows
  with the number of entries; every other listing does not.

Every function runs inside one read transaction, so the counts and the rows agree.
"""

from __future__ import annotations

import bisect
import sqlite3
from typing import Any, Final

from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage.disk_schema import COLUMNS, LIVE, row_to_info

__all__ = ["expired_page", "fresh_page", "newest_page", "search_page"]

#: A position in the listing order: ``(-created, url, key)``.
Boundary = tuple[float, str, str]

#: The run holding row ``offset`` (0-based) of the listing and how many rows precede it.
_RUN_OF: Final = f"""
SELECT t, url, key, running - count FROM (
    SELECT t, url, key, count, SUM(count) OVER (ORDER BY t, url, key) AS running
    FROM chunks WHERE {LIVE}
) WHERE running > ? LIMIT 1
"""  # noqa: S608

_EXPIRED: Final = f"{LIVE} AND expires > 0 AND expires <= ? AND status > 0"
_START: Final = (-float("inf"), "", "")


def _page_from(
    connection: sqlite3.Connection,
    start: Boundary,
    skip: int,
    limit: int,
    extra: str = "",
    parameters: tuple[Any, ...] = (),
) -> list[EntryInfo]:
    """``limit`` rows of the listing order from ``start`` on, after skipping ``skip`` of
    them; ``extra`` is one more condition (with its ``parameters``)."""
    sql = (
        f"SELECT {COLUMNS} FROM entries INDEXED BY entries_order "  # noqa: S608
        f"WHERE {LIVE} AND status > 0 AND (neg_created, url, key) >= (?, ?, ?) {extra} "
        "ORDER BY neg_created, url, key LIMIT ? OFFSET ?"
    )
    rows = connection.execute(sql, (*start, *parameters, limit, skip)).fetchall()
    return [row_to_info(row) for row in rows]


def _total(connection: sqlite3.Connection) -> int:
    row = connection.execute(f"SELECT entries FROM totals WHERE {LIVE}").fetchone()  # noqa: S608
    return int(row[0]) if row is not None else 0


def newest_page(
    connection: sqlite3.Connection, offset: int, limit: int
) -> tuple[list[EntryInfo], int]:
    """Rows ``offset`` to ``offset + limit`` of the listing order, and the count of all."""
    total = _total(connection)
    if offset >= total:
        return [], total
    run = connection.execute(_RUN_OF, (offset,)).fetchone()
    if run is None:  # the counts disagree with the rows (never expected): step from the top
        return _page_from(connection, _START, offset, limit), total
    t, url, key, before = run
    return _page_from(connection, (t, url, key), offset - int(before), limit), total


def expired_page(
    connection: sqlite3.Connection, offset: int, limit: int, now: float
) -> tuple[list[EntryInfo], int]:
    """A page of the rows expired at ``now`` (through the expiry index), and their count."""
    total = connection.execute(f"SELECT COUNT(*) FROM entries WHERE {_EXPIRED}", (now,))  # noqa: S608
    sql = (
        f"SELECT {COLUMNS} FROM entries WHERE {_EXPIRED} "  # noqa: S608
        "ORDER BY neg_created, url, key LIMIT ? OFFSET ?"
    )
    rows = connection.execute(sql, (now, limit, offset)).fetchall()
    return [row_to_info(row) for row in rows], int(total.fetchone()[0])


def fresh_page(
    connection: sqlite3.Connection, offset: int, limit: int, now: float
) -> tuple[list[EntryInfo], int]:
    """A page of the rows fresh at ``now`` and their count: the runs' counts less the
    expired rows in each (read through the expiry index)."""
    hidden: list[Boundary] = sorted(
        connection.execute(
            f"SELECT neg_created, url, key FROM entries WHERE {_EXPIRED}",  # noqa: S608
            (now,),
        ).fetchall()
    )
    total = _total(connection) - len(hidden)
    if offset >= total:
        return [], total
    runs = connection.execute(
        f"SELECT t, url, key, count FROM chunks WHERE {LIVE} ORDER BY t, url, key"  # noqa: S608
    ).fetchall()
    start, skip = _START, offset
    seen = 0
    for index, (t, url, key, count) in enumerate(runs):
        boundary: Boundary = (t, url, key)
        following = runs[index + 1][:3] if index + 1 < len(runs) else None
        first = bisect.bisect_left(hidden, boundary)
        last = len(hidden) if following is None else bisect.bisect_left(hidden, tuple(following))
        visible = int(count) - (last - first)
        if seen + visible > offset:
            start, skip = boundary, offset - seen
            break
        seen += visible
    rows = _page_from(
        connection, start, skip, limit, "AND NOT (expires > 0 AND expires <= ?)", (now,)
    )
    return rows, total


def search_page(
    connection: sqlite3.Connection,
    offset: int,
    limit: int,
    now: float,
    search: str,
    status: str | None,
) -> tuple[list[EntryInfo], int]:
    """A page of the rows whose URL holds ``search`` (ASCII letters in any case, ``%`` and
    ``_`` literal), fresh or expired at ``now`` when ``status`` says, and their count: one
    scan of the listing index."""
    escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    condition = "AND url LIKE ? ESCAPE '\\'"
    parameters: tuple[Any, ...] = (f"%{escaped}%",)
    if status == "fresh":
        condition += " AND (expires = 0 OR expires > ?)"
        parameters += (now,)
    elif status == "expired":
        condition += " AND (expires > 0 AND expires <= ?)"
        parameters += (now,)
    count = connection.execute(
        f"SELECT COUNT(*) FROM entries INDEXED BY entries_order "  # noqa: S608
        f"WHERE {LIVE} AND status > 0 {condition}",
        parameters,
    ).fetchone()[0]
    rows = _page_from(connection, _START, offset, limit, condition, parameters)
    return rows, int(count)
