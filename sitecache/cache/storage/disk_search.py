"""``GET /cache?search=...`` on the disk backend through a trigram index.

A ``search`` is a URL substring (ASCII letters in any case, ``%`` and ``_`` literal: the
``LIKE`` of `sitecache.cache.storage.disk_listing`). An index cannot answer it in one B-tree
step, so the URLs are indexed by their trigrams in an FTS5 table (``entries_search``, the
``trigram`` tokenizer, contentless: it stores no URL): a term of three characters or more is
found as the rows holding its trigrams, and each candidate is then checked with the same
``LIKE`` as before (the trigram tokenizer folds case beyond ASCII: its rows are a superset of
``LIKE``'s), so the answer is exactly the scan's. Shorter terms keep the scan.

Not every trigram of a term is asked for (`match_query`): a trigram most URLs hold (``pos`` of
``post-123/``) filters almost nothing, yet the FTS ``AND`` seeks through its whole doclist, a
cost that grows with the store. ``search_grams`` counts, per trigram, the rows indexed holding
it: `gram_counts` of each batch `catch_up` moved, added right after it in a transaction of its
own, so the counting holds no write lock. Deletes leave the counts as they are, and a batch
whose counts were lost (a crash between the two transactions) only makes its trigrams look
rarer: a count orders the trigrams, it never decides a match. A search asks for its rarest
trigram and those at most `GRAM_SPREAD` times as common; any subset of a term's trigrams finds
a superset of what all of them find, so the ``LIKE`` check keeps the answer exact whatever the
counts say. A trigram no indexed row has held counts 0: the rarest, it finds no FTS row, and
only the pending rows are read.

The index is kept in step by triggers, in the transaction that writes the index row, at the
cost of one small row: a new (or re-addressed) entry row only joins ``search_pending`` by its
rowid. Writing FTS5 in every store's own transaction would flush a new FTS segment per stored
page (about 70-90 µs each, measured); `catch_up` instead moves the pending rows into the FTS
table in batches (one flush per batch), from GC's housekeeping and before a search when many
wait. A search reads both: the FTS candidates and the pending rows (few), so it is always
exact, whether or not a catch-up ran. A deleted entry row leaves the FTS table (or the pending
one) in the delete's own transaction, through the trigger.

The same queue holds back the tag rows of a new entry row (``entry_tags``, layout 5,
`sitecache.cache.storage.disk_schema`): the catch-up writes them with the FTS rows, and a tag
lookup reads the queued rows' own tags beside the tag rows (`PENDING_TAGGED`). It holds back
its rows of every secondary index and its share of the totals as well (layout 7: partial
indexes of the rows whose ``indexed`` is set): the catch-up sets it, and a lookup by URL, path
or host reads the queued rows beside those indexes (`PENDING_ROWS`).

Every statement here runs on a connection the caller holds in a transaction; the page
query is `sitecache.cache.storage.disk_listing.search_page`'s.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Final

__all__ = [
    "CATCH_UP_BATCH",
    "GRAM_SPREAD",
    "MIN_TERM",
    "PENDING_ROWS",
    "PENDING_TAGGED",
    "SEARCH_CATCH_UP",
    "SEARCH_OBJECTS",
    "SEARCH_SCHEMA",
    "add_gram_counts",
    "catch_up",
    "gram_counts",
    "match_query",
    "pending_count",
]

#: Characters a term needs for the trigram index (shorter ones are a scan).
MIN_TERM: Final = 3
#: Pending rows a catch-up moves per transaction (one FTS segment each; ~7 µs a row, so the
#: write lock, which stores wait for, is held ~10 ms).
CATCH_UP_BATCH: Final = 1000
#: Pending rows past which a search catches up first (fewer are read as they are).
SEARCH_CATCH_UP: Final = 1000
#: A search asks for the trigrams of its term counted at most this many times as often as its
#: rarest one (`match_query`): rarer ones cut the candidates, commoner ones cost more seeks in
#: the FTS doclists than they save in candidate rows.
GRAM_SPREAD: Final = 8

#: A row not pending (``{row}``: ``OLD`` or ``NEW``). The FTS delete runs only for such a row
#: (a contentless FTS table must be told the exact indexed text, and only of rows it holds);
#: the pending insert is conditional rather than ``OR IGNORE``, which the UPSERT's own conflict
#: clause would override inside the trigger.
_NOT_PENDING: Final = "NOT EXISTS (SELECT 1 FROM search_pending WHERE id = {row}.rowid)"

#: The trigram index, its pending rows and the triggers keeping them (``CREATE ... IF NOT
#: EXISTS``: run on a new database and by the migration of an existing one).
SEARCH_SCHEMA: Final = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS entries_search USING fts5(
    url, tokenize='trigram', content='', detail='none', columnsize=0
);
CREATE TABLE IF NOT EXISTS search_pending (id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS search_grams (
    gram TEXT PRIMARY KEY, rows INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS entries_search_insert AFTER INSERT ON entries BEGIN
    INSERT INTO search_pending (id) SELECT NEW.rowid WHERE {_NOT_PENDING.format(row="NEW")};
END;
CREATE TRIGGER IF NOT EXISTS entries_search_delete AFTER DELETE ON entries BEGIN
    INSERT INTO entries_search (entries_search, rowid, url)
        SELECT 'delete', OLD.rowid, OLD.url WHERE {_NOT_PENDING.format(row="OLD")};
    DELETE FROM search_pending WHERE id = OLD.rowid;
END;
CREATE TRIGGER IF NOT EXISTS entries_search_update AFTER UPDATE OF url ON entries
WHEN OLD.url IS NOT NEW.url BEGIN
    INSERT INTO entries_search (entries_search, rowid, url)
        SELECT 'delete', OLD.rowid, OLD.url WHERE {_NOT_PENDING.format(row="OLD")};
    INSERT INTO search_pending (id) SELECT NEW.rowid WHERE {_NOT_PENDING.format(row="NEW")};
END;
"""  # noqa: S608 (constants only)

#: The tables of the search index (dropped with an older layout's).
SEARCH_OBJECTS: Final = ("entries_search", "search_pending", "search_grams")

#: The queued entry rows (``e``) listing one of the tags ``{marks}`` (``?NNN`` parameters):
#: their tag rows may not be written yet.
PENDING_TAGGED: Final = (
    "SELECT e.key FROM search_pending p CROSS JOIN entries e ON e.rowid = p.id "
    "WHERE EXISTS (SELECT 1 FROM json_each(e.tags) WHERE value IN ({marks}))"
)


#: The queued entry rows (``e``) whose column ``{column}`` (``url``, ``path``, ``host``) is one
#: of ``{marks}`` (``?NNN`` parameters): they are not in that column's index yet.
PENDING_ROWS: Final = (
    "SELECT e.key FROM search_pending p CROSS JOIN entries e ON e.rowid = p.id "
    "WHERE e.{column} IN ({marks})"
)


def pending_count(connection: sqlite3.Connection) -> int:
    """How many entry rows wait for the FTS table."""
    return int(connection.execute("SELECT COUNT(*) FROM search_pending").fetchone()[0])


def catch_up(connection: sqlite3.Connection, limit: int = CATCH_UP_BATCH) -> tuple[int, list[str]]:
    """Move up to ``limit`` pending rows (the oldest) into the FTS table, write their tag rows
    and put them in the secondary indexes and totals, inside the caller's write transaction; how
    many left the pending table, and the URLs indexed (for `gram_counts`, outside the write
    lock)."""
    last = connection.execute(
        "SELECT id FROM search_pending ORDER BY id LIMIT 1 OFFSET ?", (limit - 1,)
    ).fetchone()
    bound = int(last[0]) if last is not None else None
    if bound is None:
        found = connection.execute("SELECT MAX(id) FROM search_pending").fetchone()
        if found is None or found[0] is None:
            return 0, []
        bound = int(found[0])
    # CROSS JOIN: the queue drives the join (the planner would otherwise walk every entry
    # row below the bound and look each up in the queue).
    moving = "FROM search_pending p CROSS JOIN entries e ON e.rowid = p.id WHERE p.id <= ?"
    urls = [str(row[0]) for row in connection.execute(f"SELECT e.url {moving}", (bound,))]
    connection.execute(
        f"INSERT INTO entries_search (rowid, url) SELECT p.id, e.url {moving}", (bound,)
    )
    # Batched: a tag's new rows (the highest ids) go to the end of its run, a few pages each.
    connection.execute(
        "INSERT OR IGNORE INTO entry_tags (tag, id) SELECT t.value, p.id FROM search_pending p "
        "CROSS JOIN entries e ON e.rowid = p.id, json_each(e.tags) t WHERE p.id <= ?",
        (bound,),
    )
    # Into the secondary indexes (partial: a row enters them when this is set), the totals
    # and the chunks of the listing order (their triggers).
    connection.execute(
        "UPDATE entries SET indexed = 1 "
        "WHERE rowid IN (SELECT id FROM search_pending WHERE id <= ?) AND indexed = 0",
        (bound,),
    )
    moved = connection.execute("DELETE FROM search_pending WHERE id <= ?", (bound,)).rowcount
    return int(moved), urls


def gram_counts(urls: list[str]) -> list[tuple[str, int]]:
    """How many of ``urls`` hold each trigram (`_gram_key`: a URL holding a trigram in two
    cases counts twice), for `add_gram_counts`."""
    written: Counter[str] = Counter()
    for url in urls:
        written.update(_trigrams(url))
    counts: Counter[str] = Counter()
    for gram, rows in written.items():
        counts[_gram_key(gram)] += rows
    return sorted(counts.items())


def add_gram_counts(connection: sqlite3.Connection, counts: list[tuple[str, int]]) -> None:
    """Add `gram_counts` to ``search_grams``, inside the caller's write transaction."""
    connection.executemany(
        "INSERT INTO search_grams (gram, rows) VALUES (?, ?) "
        "ON CONFLICT (gram) DO UPDATE SET rows = rows + excluded.rows",
        counts,
    )


def _trigrams(text: str) -> set[str]:
    """The trigrams of ``text`` as written (the FTS table folds their case itself)."""
    return {text[i : i + MIN_TERM] for i in range(len(text) - MIN_TERM + 1)}


def _gram_key(gram: str) -> str:
    """The row of ``search_grams`` counting ``gram`` (one row for every case of it)."""
    return gram.lower()


def match_query(connection: sqlite3.Connection, search: str) -> str | None:
    """The FTS5 query of the rows holding the telling trigrams of ``search`` (its rarest by
    ``search_grams`` and those at most `GRAM_SPREAD` times as common; each quoted, so no
    character is an operator), or ``None`` for a term too short for the index. The rows it
    finds hold at least every row whose URL holds ``search``."""
    if len(search) < MIN_TERM:
        return None
    trigrams = sorted(_trigrams(search))
    keys = sorted({_gram_key(trigram) for trigram in trigrams})
    marks = ", ".join("?" * len(keys))
    counts = dict(
        connection.execute(
            f"SELECT gram, rows FROM search_grams WHERE gram IN ({marks})",  # noqa: S608
            keys,
        ).fetchall()
    )
    rarest = min(int(counts.get(key, 0)) for key in keys)
    telling = [
        trigram
        for trigram in trigrams
        if int(counts.get(_gram_key(trigram), 0)) <= GRAM_SPREAD * rarest
    ]
    return " AND ".join('"' + trigram.replace('"', '""') + '"' for trigram in telling)
