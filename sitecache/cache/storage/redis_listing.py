"""``GET /cache?status=...`` on Redis: the expired pages through the expiry set, the fresh ones
by rank.

The listing order is the sorted set ``byc`` (pages by creation time) read from the top with
``ZREVRANGE``, O(log n + page) on any page. The pages expired at ``now`` are the members of
``bye`` (every entry by expiry) scored up to ``now`` that are not Vary pointers (``bxp``): few,
since GC removes them. ``status=expired`` lists just those; ``status=fresh`` finds where its page
starts in ``byc`` from the ranks of the expired pages (one ``ZREVRANK`` each), then reads the
page skipping them: O(expired · log n + page), not O(n).

A ``search`` (a URL substring) of three bytes or more goes through the sorted set of URL
suffixes (`sitecache.cache.storage.redis_search`); a shorter one has no index to use:
`search_rows` walks the index hash with ``HSCAN`` and decodes only the rows whose JSON holds
the text. That walk grows with the number of entries (measured in ``bench/purge_bench.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from sitecache.cache.entry import EntryInfo

__all__ = ["expired_pages", "fresh_page_keys", "hidden_totals", "search_rows", "visible_span"]


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def expired_pages(client: Any, data: str, now: float, after: float = 0.0) -> list[str]:
    """Keys of the pages (not Vary pointers) under ``data`` expired at ``now`` (and not at
    ``after``)."""
    pipe = client.pipeline(transaction=False)
    pipe.zrangebyscore(data + "bye", f"({after!r}", now)
    pipe.zrangebyscore(data + "bxp", f"({after!r}", now)
    expiring, pointers = pipe.execute()
    skipped = {_text(key) for key in pointers}
    return [key for key in map(_text, expiring) if key not in skipped]


def visible_span(hidden: list[int], offset: int, limit: int) -> tuple[int, int]:
    """``(start, stop)`` ranks holding the ``limit`` visible rows from the ``offset``-th on,
    when the rows at the sorted ranks ``hidden`` are not shown (``stop`` excluded)."""
    before = 0
    while before < len(hidden) and hidden[before] <= offset + before:
        before += 1
    start = stop = offset + before
    shown = 0
    index = before
    while shown < limit:
        if index < len(hidden) and hidden[index] == stop:
            index += 1
        else:
            shown += 1
        stop += 1
    return start, stop


def fresh_page_keys(
    client: Any, data: str, expired: list[str], offset: int, limit: int
) -> tuple[list[str], int]:
    """Keys of a page of the fresh pages under ``data`` (``expired``: the pages not shown),
    newest first, and the count of fresh pages."""
    pipe = client.pipeline(transaction=False)
    pipe.zcard(data + "byc")
    for key in expired:
        pipe.zrevrank(data + "byc", key)
    count, *ranks = pipe.execute()
    hidden = sorted(int(rank) for rank in ranks if rank is not None)
    total = int(count) - len(hidden)
    if offset >= total:
        return [], total
    start, stop = visible_span(hidden, offset, limit)
    skipped = set(expired)
    keys = [_text(key) for key in client.zrevrange(data + "byc", start, stop - 1)]
    return [key for key in keys if key not in skipped][:limit], total


def search_rows(client: Any, index: str, search: str) -> Iterator[EntryInfo]:
    """The rows of the index hash ``index`` that may hold ``search`` in their URL (a superset:
    the caller filters them). A row whose JSON text does not hold the text in any case is not
    decoded (only for texts JSON writes as they are: printable ASCII without quotes and
    backslashes)."""
    needle = search.lower().encode("ascii") if _written_as_is(search) else None
    for _, value in client.hscan_iter(index, count=1000):
        if needle is not None and needle not in value.lower():
            continue
        yield EntryInfo.from_json(json.loads(value))


def _written_as_is(text: str) -> bool:
    """Whether JSON (``ensure_ascii``) writes ``text`` unchanged."""
    return all(" " <= char <= "~" and char not in '"\\' for char in text)


def hidden_totals(client: Any, data: str, cut: float) -> tuple[int, int, int]:
    """Pages, bytes and compressed bytes under ``data`` that expired at or before ``cut``
    (what an expired purge hid until GC deletes it): their rows are read."""
    if cut <= 0:
        return 0, 0, 0
    keys = client.zrangebyscore(data + "bye", "(0", cut)
    rows = [json.loads(row) for row in client.hmget(data + "i", keys) if row] if keys else []
    return (
        sum(1 for row in rows if row["status"] > 0),
        sum(int(row["size"]) for row in rows),
        sum(int(row["compressed_size"]) for row in rows),
    )
