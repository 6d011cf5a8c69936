"""``search`` through Redis's sorted set of URL suffixes (#18 point 2): exact on tricky terms
(repeated trigrams, longer than a member's `SUFFIX` bytes or than any URL, non-ASCII,
percent-encoded), for entries indexed, queued, deleted, re-stored or purged; a long term read
by its rarest window; and a store indexed by the trigram layout before answers exactly while
and after it moves to the suffixes, and its old epochs leave no set behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitecache.cache import Storage
from sitecache.cache.entry import EntryInfo
from sitecache.cache.storage.records import EntryStatus
from sitecache.cache.storage.redis_search import (
    SUFFIX,
    catch_up,
    lowered,
    migrate,
    search_candidates,
)
from tests.cache.conftest import make_storage
from tests.cache.test_search_index import NOW, entry, put, scan

STATUSES: tuple[EntryStatus | None, ...] = (None, "fresh", "expired")

#: Paths whose URLs trip a byte-wise index: runs of one letter, multi-byte letters (and one
#: whose lower case is longer), percent-encoding, long words.
PATHS = (
    "aaaaaa/",
    "été/Straße/",
    "İstanbul/",
    "caf%C3%A9/",
    "a/very-long-path-with-words/and-more-words/",
    "x/",
    "日本語/ページ/",
    "AAAA-aaaa/",
)
TERMS = (
    "aaa",
    "aaaa",
    "aaaaaaa",
    "ÉTÉ",
    "straße",
    "STRASSE",
    "İst",
    "i̇st",
    "istanbul",
    "%c3%a9",
    "%C3%A9/",
    "CAF%",
    "very-long-path-with-words/and",
    "path-with-words/and-more-words/x",
    "-words/and-more-words/",
    "http://example.org/a/very-long",
    "example.org/x/",
    "日本語/ペ",
    "本語/ページ/",
    "\udcff-byte",  # a lone surrogate (no URL holds one: an entry cannot be encoded)
    "/" * 3,
    "http://example.org/" + "z" * 80,
)


def check(storage: Storage, rows: dict[str, EntryInfo], terms: tuple[str, ...]) -> None:
    """Every term's listing is the scan's: the same rows and total, newest first, then by URL
    (rows alike in both come in any order)."""
    for term in terms:
        for status in STATUSES:
            found, total = storage.list_entries(0, 10**6, now=NOW, search=term, status=status)
            order = [(-info.created, info.url) for info in found]
            assert order == sorted(order), term
            by_key = sorted(found, key=lambda info: (-info.created, info.url, info.key))
            assert ([info.key for info in by_key], total) == scan(rows, term, status), term


@pytest.mark.parametrize("backend", ["memory", "redis"])
def test_tricky_terms_answer_what_a_scan_answers(backend: str, tmp_path: Path) -> None:
    storage = make_storage(backend, tmp_path)
    rows: dict[str, EntryInfo] = {}
    try:
        for number, path in enumerate(PATHS):  # indexed
            key = f"{number:032d}"
            rows[key] = put(storage, key, entry(f"http://example.org/{path}", number))
        storage.housekeeping(1.0)
        for number, path in enumerate(PATHS[:4]):  # the same URLs again, queued
            key = f"{100 + number:032d}"
            rows[key] = put(storage, key, entry(f"http://example.org/{path}", number))
        check(storage, rows, TERMS)
        # Deleted, re-stored under another URL (queued again), then indexed.
        storage.delete([f"{0:032d}", f"{101:032d}"])
        del rows[f"{0:032d}"], rows[f"{101:032d}"]
        key = f"{6:032d}"
        rows[key] = put(storage, key, entry("http://example.org/aaaa-xaaa/", 6))
        check(storage, rows, TERMS)
        storage.housekeeping(1.0)
        check(storage, rows, TERMS)
        # A purge of everything: the old entries are gone at once, new ones found.
        storage.invalidate_all()
        rows = {}
        key = f"{200:032d}"
        rows[key] = put(storage, key, entry("http://example.org/été/aaaaa/", 2))
        check(storage, rows, TERMS)
        storage.remove_invalidated(10.0)
        storage.housekeeping(1.0)
        check(storage, rows, TERMS)
    finally:
        if backend == "redis":
            storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


#: URLs and terms over letters of one, two and three UTF-8 bytes (one whose lower case is two
#: characters), so that windows of `SUFFIX` bytes start and end inside characters.
LETTERS = "aAé/İß%-日"
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(0, 5), st.text(LETTERS, max_size=24)),
        st.tuples(st.just("delete"), st.integers(0, 5), st.just("")),
        st.tuples(st.just("index"), st.just(0), st.just("")),
    ),
    max_size=20,
)


@pytest.mark.parametrize("backend", ["memory", "redis"])
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS, terms=st.lists(st.text(LETTERS, min_size=1, max_size=16), max_size=4))
def test_long_and_non_ascii_terms_answer_what_a_scan_answers(
    backend: str,
    tmp_path_factory: pytest.TempPathFactory,
    steps: list[tuple[str, int, str]],
    terms: list[str],
) -> None:
    storage = make_storage(backend, tmp_path_factory.mktemp("cache"))
    rows: dict[str, EntryInfo] = {}
    try:
        for number, (action, slot, path) in enumerate(steps):
            key = f"{slot:032d}"
            if action == "put":
                rows[key] = put(storage, key, entry(f"http://example.org/{path}", number))
            elif action == "delete":
                storage.delete([key])
                rows.pop(key, None)
            else:
                storage.housekeeping(1.0)
        # Terms cut from the stored URLs too: most random ones match nothing.
        cut = [info.url[start : start + 14] for info in rows.values() for start in (12, 19)]
        check(storage, rows, (*terms, *(term for term in cut if term)))
    finally:
        if backend == "redis":
            storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


def test_a_long_term_is_read_by_its_rarest_window(tmp_path: Path) -> None:
    storage = make_storage("redis", tmp_path)
    try:
        rows = {}
        for number in range(300):
            key = f"{number:032d}"
            url = f"http://example.org/common-segment/post-{number}/"
            rows[key] = put(storage, key, entry(url, number))
        storage.housekeeping(1.0)
        term = "/Common-Segment/post-123/"
        assert len(lowered(term)) > SUFFIX
        _, queued, _, candidates = search_candidates(
            storage.client,  # type: ignore[attr-defined]
            storage._run_search,  # type: ignore[attr-defined]
            storage.prefix,  # type: ignore[attr-defined]
            term,
        )
        assert queued == 0
        assert [info.url for info in candidates] == ["http://example.org/common-segment/post-123/"]
        check(storage, rows, (term, "/common-segment/", "segment/post-12"))
    finally:
        storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


# ---------------------------------------------------------------------- the layout before
def index_as_trigrams(storage: Storage) -> None:
    """What the trigram layout's catch-up did to every queued entry of the current epoch: a
    set ``g:<3 bytes>`` per trigram of its lowered URL, ``sg`` key -> lowered URL."""
    client, data = storage.client, storage._data()  # type: ignore[attr-defined]
    for key in client.smembers(data + "sq"):
        url = json.loads(client.hget(data + "i", key))["url"]
        text = lowered(url)
        for start in range(len(text) - 2):
            client.sadd(data.encode() + b"g:" + text[start : start + 3], key)
        client.hset(data + "sg", key, text)
        client.srem(data + "sq", key)


def test_a_store_of_the_trigram_layout_answers_exactly_while_it_moves(tmp_path: Path) -> None:
    storage = make_storage("redis", tmp_path)
    client, prefix = storage.client, storage.prefix  # type: ignore[attr-defined]
    rows: dict[str, EntryInfo] = {}
    terms = ("post-1", "post-12/", "été/post", "ÉTÉ/POST-3", "/post-", "nothing")
    try:
        for number in range(60):
            key = f"{number:032d}"
            path = f"été/post-{number}/" if number % 2 else f"post-{number}/"
            rows[key] = put(storage, key, entry(f"http://example.org/{path}", number))
        index_as_trigrams(storage)
        assert client.scard(prefix + "sq") == 0
        assert client.exists(prefix + "sx") == 0
        check(storage, rows, terms)  # through the trigram sets alone
        # A delete and a re-store of entries of the old layout take them out of its sets.
        gone, moved = f"{12:032d}", f"{13:032d}"
        storage.delete([gone])
        del rows[gone]
        rows[moved] = put(storage, moved, entry("http://example.org/post-1x/", 13))
        assert not client.hexists(prefix + "sg", gone)
        assert not client.hexists(prefix + "sg", moved)
        assert not any(client.sismember(name, moved) for name in client.keys(prefix + "g:*"))
        check(storage, rows, terms)
        # Moved a batch at a time: both layouts answer together.
        script = storage._migrate_search  # type: ignore[attr-defined]
        assert migrate(client, script, prefix, prefix, 20) >= 20
        assert client.hlen(prefix + "sg") > 0
        assert client.zcard(prefix + "sx") > 0
        check(storage, rows, terms)
        while storage.housekeeping(1.0):
            pass
        assert client.exists(prefix + "sg") == 0
        assert client.keys(prefix + "g:*") == []
        assert client.scard(prefix + "sq") == 0
        check(storage, rows, terms)
        storage.delete(list(rows))
        storage.housekeeping(1.0)
        assert client.zcard(prefix + "sx") == 0
        assert client.hlen(prefix + "su") == 0
    finally:
        storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


def test_an_old_epoch_of_the_trigram_layout_leaves_no_set(tmp_path: Path) -> None:
    storage = make_storage("redis", tmp_path)
    client, prefix = storage.client, storage.prefix  # type: ignore[attr-defined]
    try:
        for number in range(30):
            put(storage, f"{number:032d}", entry(f"http://example.org/post-{number}/", number))
        index_as_trigrams(storage)
        assert client.keys(prefix + "g:*")
        storage.invalidate_all()
        while storage.remove_invalidated(10.0):
            pass
        assert client.keys(prefix + "g:*") == []
        assert client.keys(prefix + "s[gqux]") == []
    finally:
        storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


def test_long_ranges_and_many_candidates_are_read_by_slices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `INLINE_ROWS` candidates the script answers keys, and past `INLINE_ROWS` members
    of the range the window alone (read here by slices): the answers stay the scan's."""
    from sitecache.cache.storage import redis_search

    monkeypatch.setattr(redis_search, "RANGE_SLICE", 64)
    storage = make_storage("redis", tmp_path)
    client, prefix = storage.client, storage.prefix  # type: ignore[attr-defined]
    rows: dict[str, EntryInfo] = {}
    try:
        for number in range(1100):
            key = f"{number:032d}"
            rows[key] = put(storage, key, entry(f"http://example.org/post-{number}/", number))
        storage.housekeeping(1.0)
        storage.delete([f"{5:032d}"])
        del rows[f"{5:032d}"]
        for number in range(900):  # queued (fewer than a search catches up first)
            key = f"{5000 + number:032d}"
            rows[key] = put(storage, key, entry(f"http://example.org/page-{number}/", number))
        assert client.scard(prefix + "sq") == 900
        arguments = [prefix.encode(), *redis_search.search_arguments("ORG/P")]
        assert storage._run_search(arguments)[3] == b"w"  # type: ignore[attr-defined]
        arguments = [prefix.encode(), *redis_search.search_arguments("org/post-1")]
        assert storage._run_search(arguments)[3] == b"k"  # type: ignore[attr-defined]
        check(storage, rows, ("ORG/P", "org/post-1", "/post-10", "page-1", "e-89"))
        assert client.scard(prefix + "sq") == 900  # read as they were
    finally:
        storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()


def test_a_deleted_entry_stored_again_before_the_sweep_is_indexed_once(tmp_path: Path) -> None:
    storage = make_storage("redis", tmp_path)
    client, prefix = storage.client, storage.prefix  # type: ignore[attr-defined]
    url = "http://example.org/post-1/"
    try:
        key = f"{1:032d}"
        rows = {key: put(storage, key, entry(url, 1))}
        storage.housekeeping(1.0)
        storage.delete([key])  # its members stay until swept
        rows[key] = put(storage, key, entry(url, 1))  # queued: found by both, listed once
        check(storage, rows, ("post-1/", "example"))
        # Indexed before any sweep: its old members go first, then the same ones come back.
        catch_up(client, storage._index_search, prefix, prefix, 10)  # type: ignore[attr-defined]
        assert client.zcard(prefix + "sx") == len(url)
        assert client.hlen(prefix + "sd") == 0
        storage.housekeeping(1.0)  # a sweep now must not take the new members out
        check(storage, rows, ("post-1/", "example"))
        storage.delete([key])
        other = f"{2:032d}"
        rows = {other: put(storage, other, entry("http://example.org/other/", 2))}
        rows[key] = put(storage, key, entry("http://example.org/moved/", 3))
        check(storage, rows, ("post-1/", "moved", "example"))  # stale members: rows checked
        storage.housekeeping(1.0)
        assert client.zcard(prefix + "sx") == len("http://example.org/other/") * 2
        check(storage, rows, ("post-1/", "moved", "example"))
    finally:
        storage.clear_namespace()  # type: ignore[attr-defined]
        storage.close()
