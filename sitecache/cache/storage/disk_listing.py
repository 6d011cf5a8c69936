"""``GET /cache`` on the disk backend: pages of the listing order found through its chunks.

The listing order is newest first, then by URL, then by key: the index ``entries_order`` on
``(epoch, neg_created, url, key)`` (`sitecache.cache.storage.disk_schema`; stored descending,
so these queries read it backwards: their plans still walk it, with no sort). The table
``chunks`` cuts it into runs whose exact row counts the triggers keep, so page N starts by
summing the counts from the nearer end to find the run holding its first row (one or two for
the first and the last pages, a few hundred at most), then steps at most `CHUNK_MAX` rows
inside it: the last page costs what the first does.

Filters use the same runs where they can:

- ``status=fresh``: the expired rows (few: GC removes them) are read through the expiry
  index and subtracted from each run's count; the page query skips them. Rows hidden by an
  expired purge's cut (until GC has deleted them) are left out of every listing the same way;
- ``status=expired``: only the expired rows, read through the expiry index, sorted;
- ``search``: a URL substring of three characters or more is found through the trigram index
  (`sitecache.cache.storage.disk_search`): only its candidates are read and checked with the
  same ``LIKE``, so it costs what the matches cost, not what the table holds. A shorter term
  is counted and paged by one scan of the listing index (the URLs are in it: no table row is
  read for a row that does not match); it grows with the number of entries.

Every function runs inside one read transaction, so the counts and the rows agree.
"""

from __future__ import annotations

import bisect
import sqlite3
from typing import Any, Final

from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage.disk_schema import COLUMNS, INDEXED, LIVE, row_to_info
from sitecache.cache.storage.disk_search import match_query

__all__ = ["expired_page", "search_page", "visible_page"]

#: A position in the listing order: ``(-created, url, key)``.
Boundary = tuple[float, str, str]

#: The runs of the current epoch, in the listing order (``{order}``: ASC or DESC).
_RUNS: Final = (
    f"SELECT t, url, key, count FROM chunks WHERE {LIVE} "  # noqa: S608
    "ORDER BY t {order}, url {order}, key {order}"
)

#: The listing positions of the rows expired at or before a time.
_HIDDEN_KEYS: Final = (
    f"SELECT neg_created, url, key FROM entries WHERE {LIVE} AND {INDEXED} "  # noqa: S608
    "AND expires > 0 AND expires <= ? AND status > 0"
)
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
        f"WHERE {LIVE} AND status > 0 AND {INDEXED} "
        f"AND (neg_created, url, key) >= (?, ?, ?) {extra} "
        "ORDER BY neg_created, url, key LIMIT ? OFFSET ?"
    )
    rows = connection.execute(sql, (*start, *parameters, limit, skip)).fetchall()
    return [row_to_info(row) for row in rows]


def _total(connection: sqlite3.Connection) -> int:
    row = connection.execute(f"SELECT entries FROM totals WHERE {LIVE}").fetchone()  # noqa: S608
    return int(row[0]) if row is not None else 0


def _run_of(connection: sqlite3.Connection, offset: int, total: int) -> tuple[Boundary, int]:
    """Where row ``offset`` of ``total`` is: the start of its run and how many rows of the
    run precede it. The runs are read from the nearer end and only until it is found: the
    first and the last pages read one or two."""
    if offset < total - offset:
        seen = 0
        for t, url, key, count in connection.execute(_RUNS.format(order="ASC")):
            if seen + count > offset:
                return (t, url, key), offset - seen
            seen += count
    else:
        before = total
        for t, url, key, count in connection.execute(_RUNS.format(order="DESC")):
            before -= count  # the rows ahead of this run
            if before <= offset:
                return (t, url, key), offset - before
    return _START, offset  # the counts disagree with the rows (never expected): from the top


def visible_page(
    connection: sqlite3.Connection, offset: int, limit: int, hide_before: float
) -> tuple[list[EntryInfo], int]:
    """Rows ``offset`` to ``offset + limit`` of the listing order, less the rows that expired
    at or before ``hide_before`` (the expiry cut, or now for ``status=fresh``), and the count
    of all shown."""
    hidden: list[Boundary] = []
    if hide_before > 0:
        hidden = sorted(connection.execute(_HIDDEN_KEYS, (hide_before,)).fetchall())
    total = _total(connection) - len(hidden)
    if offset >= total:
        return [], total
    if not hidden:
        start, skip = _run_of(connection, offset, total)
        return _page_from(connection, start, skip, limit), total
    start, skip = _START, offset
    runs = connection.execute(_RUNS.format(order="ASC")).fetchall()
    seen = 0
    for index, (t, url, key, count) in enumerate(runs):
        boundary: Boundary = (t, url, key)
        following = runs[index + 1][:3] if index + 1 < len(runs) else None
        first = bisect.bisect_left(hidden, boundary)
        last = len(hidden) if following is None else bisect.bisect_left(hidden, tuple(following))
        shown = int(count) - (last - first)
        if seen + shown > offset:
            start, skip = boundary, offset - seen
            break
        seen += shown
    not_hidden = "AND NOT (expires > 0 AND expires <= ?)"
    return _page_from(connection, start, skip, limit, not_hidden, (hide_before,)), total


def expired_page(
    connection: sqlite3.Connection, offset: int, limit: int, now: float, cut: float
) -> tuple[list[EntryInfo], int]:
    """A page of the rows expired at ``now`` but not before the cut (through the expiry
    index), and their count."""
    condition = f"{LIVE} AND {INDEXED} AND expires > ? AND expires <= ? AND status > 0"
    total = connection.execute(
        f"SELECT COUNT(*) FROM entries WHERE {condition}",  # noqa: S608
        (cut, now),
    ).fetchone()[0]
    sql = (
        f"SELECT {COLUMNS} FROM entries WHERE {condition} "  # noqa: S608
        "ORDER BY neg_created, url, key LIMIT ? OFFSET ?"
    )
    rows = connection.execute(sql, (cut, now, limit, offset)).fetchall()
    return [row_to_info(row) for row in rows], int(total)


def search_page(
    connection: sqlite3.Connection,
    offset: int,
    limit: int,
    now: float,
    search: str,
    status: str | None,
    cut: float,
) -> tuple[list[EntryInfo], int]:
    """A page of the rows whose URL holds ``search`` (ASCII letters in any case, ``%`` and
    ``_`` literal), fresh or expired at ``now`` when ``status`` says, less those the expiry
    ``cut`` hides, and their count: through the trigram index, or one scan of the listing
    index for a term shorter than `MIN_TERM` characters. A term holding a NUL matches nothing
    (no stored URL holds one; SQLite's ``LIKE`` and ``MATCH`` would stop at it)."""
    if "\x00" in search:
        return [], 0
    escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    condition = "AND url LIKE ? ESCAPE '\\' AND NOT (expires > 0 AND expires <= ?)"
    parameters: tuple[Any, ...] = (f"%{escaped}%", cut)
    if status == "fresh":
        condition += " AND (expires = 0 OR expires > ?)"
        parameters += (now,)
    elif status == "expired":
        condition += " AND (expires > 0 AND expires <= ?)"
        parameters += (now,)
    query = match_query(connection, search)
    if query is not None:
        return _indexed_page(connection, query, offset, limit, condition, parameters)
    count = connection.execute(
        f"SELECT COUNT(*) FROM entries INDEXED BY entries_order "  # noqa: S608
        f"WHERE {LIVE} AND status > 0 AND {INDEXED} {condition}",
        parameters,
    ).fetchone()[0]
    rows = _page_from(connection, _START, offset, limit, condition, parameters)
    return rows, int(count)


#: The candidates of a search: the FTS rows holding its trigrams, and every pending row.
_CANDIDATES: Final = (
    "rowid IN (SELECT rowid FROM entries_search WHERE entries_search MATCH ? "
    "UNION ALL SELECT id FROM search_pending)"
)
#: Conditions that only filter the candidates (``+``: no index walk over the epoch).
_LIVE_CANDIDATE: Final = "+epoch = (SELECT current FROM epoch) AND +status > 0"


def _indexed_page(
    connection: sqlite3.Connection,
    query: str,
    offset: int,
    limit: int,
    condition: str,
    parameters: tuple[Any, ...],
) -> tuple[list[EntryInfo], int]:
    """A page (listing order) of the live rows among the candidates of the FTS ``query``
    passing ``condition`` (``AND ...`` with its ``parameters``: the ``LIKE`` and the status
    filters), and their count: what the candidates cost, not what the table holds."""
    where = f"{_CANDIDATES} AND {_LIVE_CANDIDATE} {condition}"
    rows = connection.execute(
        f"SELECT {COLUMNS} FROM entries WHERE {where} "  # noqa: S608
        "ORDER BY neg_created, url, key",
        (query, *parameters),
    ).fetchall()
    return [row_to_info(row) for row in rows[offset : offset + limit]], len(rows)
