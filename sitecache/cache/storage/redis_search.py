"""``GET /cache?search=...`` on Redis through a sorted set of URL suffixes.

A ``search`` is a URL substring in any case (`sitecache.cache.storage.base.matches_filter`:
``search.lower() in url.lower()``), so a URL holds the term exactly when one of the suffixes
of its lowered URL starts with the lowered term (over the UTF-8 bytes: a substring of the text
is a substring of its bytes starting at a character's first byte). Each indexed entry adds to
the sorted set ``sx`` (every score 0, so members sort by their bytes) one member per suffix
starting at a character: the suffix's first `SUFFIX` bytes, a NUL, then the entry's key. The
members starting with a term are one ``ZRANGEBYLEX`` range, found in O(log n) whatever the
store holds, so a search costs what its matches cost, not what the store holds (the trigram
sets this replaces grew with the store: the rarest trigram of ``post-123/`` is held by 0.3% of
such URLs, and ``SINTER`` walked them all). A term longer than `SUFFIX` bytes is looked up by
its window of `SUFFIX` bytes that the fewest members start with (``ZLEXCOUNT``, O(log n)
each): every URL holding the term holds each window. Each candidate's row is then checked
with the same `matches_filter` as before, so the answer is exactly the scan's. Terms of fewer
than `MIN_TERM` bytes keep the scan (their ranges hold a large part of the set).

The memory it costs: one member per character of each URL, ~135 bytes each (measured at
100k entries of 33-byte URLs: ``sx`` 4.4 KB an entry and ``su`` 0.13 KB, against 2.7 KB for
the trigram sets); `SUFFIX` bounds a member, so the cost grows with a URL's length, not its
square. Indexing costs more too: a ``ZADD`` into a set of millions is ~2 µs a member, a
``SADD`` ~0.3 µs (GC's housekeeping, not the store).

What a store adds is one ``SADD`` to the queue ``sq`` (in the put script, atomically with the
index row; a re-store of the same URL adds nothing). `catch_up` indexes the queued entries in
batches (`INDEX`, a script that checks each row is still the one read), from GC's
housekeeping and before a search when many wait; a search (`SEARCH`, one read-only script:
the range, the queue and the candidates' rows) reads both the set and the queue (few), so it
is exact whether or not a catch-up ran. The hash ``su`` keeps the lowered URL each entry was
indexed under; the delete scripts (`FORGET`) move it to ``sd``, and `sweep` (GC's
housekeeping) or the entry's next indexing takes its members out: until then a search may meet
them, and the candidate's row (gone, or of another URL) is checked as any other.

The layout before (one set per trigram, ``g:<3 bytes>``, and their hash ``sg``) is moved to
this one by `migrate` (`MIGRATE`, from GC's housekeeping, a batch a call); until an epoch's
``sg`` is empty a search also intersects its trigram sets, and a delete also takes an entry
out of them, so a store indexed before the upgrade answers exactly all along.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Final

from sitecache.cache.entry import EntryInfo

__all__ = [
    "FORGET",
    "INDEX",
    "MIGRATE",
    "MIN_TERM",
    "SEARCH",
    "SEARCH_CATCH_UP",
    "SEARCH_KEYS",
    "SUFFIX",
    "SWEEP",
    "catch_up",
    "lowered",
    "migrate",
    "search_arguments",
    "search_candidates",
    "sweep",
    "trigram_sets",
]

#: Bytes a lowered term needs for the index (shorter ones are a scan).
MIN_TERM: Final = 3
#: Bytes of a suffix a member keeps: a term up to this long is found by its own range. 11
#: bytes, a NUL and a 32-character key fill Redis's 48-byte allocation exactly (memory, below).
SUFFIX: Final = 11
#: Windows of a long term whose ranges are counted at most (any of them finds a superset).
MAX_WINDOWS: Final = 32
#: Queued entries past which a search catches up first (fewer are read as they are).
SEARCH_CATCH_UP: Final = 1000
#: Candidates whose rows the search script answers itself (more: their keys, read by batches,
#: so that no script holds Redis for long).
INLINE_ROWS: Final = 1000
#: Members one ``ZRANGEBYLEX`` reads of a range too long for the search script.
RANGE_SLICE: Final = 5000
#: Queued entries one `INDEX` call indexes: a script holds Redis for its whole run (a member
#: per byte of the URL, ~2 µs each into a set of millions: ~3 ms a batch of 33-byte URLs).
CATCH_UP_BATCH: Final = 25
#: Entries of the trigram layout one `MIGRATE` call moves (as long as a catch-up batch).
MIGRATE_BATCH: Final = 25
#: The one-of-a-kind keys of the index in an epoch (beside the old layout's ``g:`` sets).
SEARCH_KEYS: Final = ("sq", "su", "sd", "sx", "sg")

#: Lua: the members of an entry's suffixes (``suffix_members``); ``ZADD``/``ZREM`` of many
#: members in slices (Lua's ``unpack`` takes a few thousand values); ``sweep``: take out the
#: members a deleted entry left (``sd``).
_MEMBERS: Final = """
local function suffix_members(lowered, key, into)
    for j = 1, #lowered do
        local byte = string.byte(lowered, j)
        if byte < 128 or byte >= 192 then
            into[#into + 1] = string.sub(lowered, j, j + {suffix} - 1) .. '\\0' .. key
        end
    end
end
local function zadd_all(name, members)
    local args = {}
    for i = 1, #members do
        args[#args + 1] = '0'
        args[#args + 1] = members[i]
        if #args >= 4000 then
            redis.call('ZADD', name, unpack(args))
            args = {}
        end
    end
    if #args > 0 then redis.call('ZADD', name, unpack(args)) end
end
local function zrem_all(name, members)
    for i = 1, #members, 4000 do
        redis.call('ZREM', name, unpack(members, i, math.min(i + 3999, #members)))
    end
end
local function sweep(p, key)
    local lowered = redis.call('HGET', p .. 'sd', key)
    if lowered then
        local members = {}
        suffix_members(lowered, key, members)
        zrem_all(p .. 'sx', members)
        redis.call('HDEL', p .. 'sd', key)
    end
end
""".replace("{suffix}", str(SUFFIX))

_DATA_PREFIX: Final = """
local function data_prefix(shared)
    local epoch = redis.call('GET', shared .. 'ep')
    if epoch and epoch ~= '0' then return shared .. epoch .. ':' end
    return shared
end
"""

#: Lua: take an entry out of the search index (``su``: its members move to ``sd``, taken out
#: later by `sweep`, since ~35 ``ZREM`` in a set of millions cost a delete ~70 µs; the trigram
#: sets and ``sg`` of the layout before; the queue), and ``search_put``: queue a stored entry
#: unless its row was already there with the same URL.
FORGET: Final = """
local function search_forget(p, key)
    local lowered = redis.call('HGET', p .. 'su', key)
    if lowered then
        redis.call('HDEL', p .. 'su', key)
        redis.call('HSET', p .. 'sd', key, lowered)
    end
    lowered = redis.call('HGET', p .. 'sg', key)
    if lowered then
        for i = 1, #lowered - 2 do
            redis.call('SREM', p .. 'g:' .. string.sub(lowered, i, i + 2), key)
        end
        redis.call('HDEL', p .. 'sg', key)
    end
    redis.call('SREM', p .. 'sq', key)
end
local function search_put(p, key, old, url)
    if old and cjson.decode(old)['url'] == url then return end
    search_forget(p, key)
    redis.call('SADD', p .. 'sq', key)
end
"""

#: Index queued entries: ARGV[1] the namespace prefix, then (key, index row, lowered URL)
#: triples. An entry is indexed only while it is queued and its index row is still the one
#: read; one gone leaves the queue. Answers how many left the queue.
INDEX: Final = (
    _DATA_PREFIX
    + _MEMBERS
    + """
local p = data_prefix(ARGV[1])
local members, indexed, gone = {}, {}, {}
for i = 2, #ARGV, 3 do
    local key, raw, lowered = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    if redis.call('SISMEMBER', p .. 'sq', key) == 1 then
        local now = redis.call('HGET', p .. 'i', key)
        if not now then
            gone[#gone + 1] = key
        elseif now == raw then
            sweep(p, key)  -- what it left when deleted before, which may be these members
            suffix_members(lowered, key, members)
            indexed[#indexed + 1] = key
            indexed[#indexed + 1] = lowered
            gone[#gone + 1] = key
        end
    end
end
zadd_all(p .. 'sx', members)
if #indexed > 0 then redis.call('HSET', p .. 'su', unpack(indexed)) end
if #gone > 0 then redis.call('SREM', p .. 'sq', unpack(gone)) end
return #gone
"""
)

#: Move entries of the trigram layout to the suffixes: ARGV[1] the namespace prefix, then
#: keys. Each one still in ``sg`` leaves its trigram sets and joins ``sx`` under the same
#: lowered URL (``sg`` kept it in step with the row). Answers how many moved.
MIGRATE: Final = (
    _DATA_PREFIX
    + _MEMBERS
    + """
local p = data_prefix(ARGV[1])
local members, moved = {}, {}
for i = 2, #ARGV do
    local key = ARGV[i]
    local lowered = redis.call('HGET', p .. 'sg', key)
    if lowered then
        for j = 1, #lowered - 2 do
            redis.call('SREM', p .. 'g:' .. string.sub(lowered, j, j + 2), key)
        end
        redis.call('HDEL', p .. 'sg', key)
        sweep(p, key)
        suffix_members(lowered, key, members)
        moved[#moved + 1] = key
        moved[#moved + 1] = lowered
    end
end
zadd_all(p .. 'sx', members)
if #moved > 0 then redis.call('HSET', p .. 'su', unpack(moved)) end
return #moved / 2
"""
)

#: Take out the members deleted entries left: ARGV[1] the namespace prefix, then keys.
SWEEP: Final = (
    _DATA_PREFIX
    + _MEMBERS
    + """
local p = data_prefix(ARGV[1])
for i = 2, #ARGV do sweep(p, ARGV[i]) end
return 0
"""
)

#: A search, read-only: ARGV[1] the namespace prefix, ARGV[2] how many windows follow, the
#: windows (bytes of the lowered term), then some of the term's trigrams (for entries still in
#: the trigram layout). Answers the expiry cut, the queue's size, the epoch's prefix, then
#: ``'r'`` and the candidates' rows, or ``'k'`` and their keys when more than `INLINE_ROWS`,
#: or, when the range holds more than `INLINE_ROWS` members, ``'w'``, the window and the other
#: candidates' keys (the caller reads the range by slices: no script holds Redis for long).
SEARCH: Final = (
    _DATA_PREFIX
    + """
local shared = ARGV[1]
local p = data_prefix(shared)
local cut = redis.call('GET', shared .. 'xb') or '0'
local windows = tonumber(ARGV[2])
local best, fewest = nil, nil
for i = 3, 2 + windows do
    local count = redis.call('ZLEXCOUNT', p .. 'sx', '[' .. ARGV[i], '[' .. ARGV[i] .. '\\255')
    if not fewest or count < fewest then best, fewest = ARGV[i], count end
    if count == 0 then break end
end
local keys, seen = {}, {}
local function add(key)
    if not seen[key] then
        seen[key] = true
        keys[#keys + 1] = key
    end
end
local ranged = fewest > 0 and fewest <= {inline}
if ranged then
    local members = redis.call('ZRANGEBYLEX', p .. 'sx', '[' .. best, '[' .. best .. '\\255')
    for _, member in ipairs(members) do add(string.match(member, '^.*%z(.*)$')) end
end
local queued = redis.call('SMEMBERS', p .. 'sq')
for _, key in ipairs(queued) do add(key) end
if #ARGV > 2 + windows and redis.call('EXISTS', p .. 'sg') == 1 then
    local names = {}
    for i = 3 + windows, #ARGV do names[#names + 1] = p .. 'g:' .. ARGV[i] end
    for _, key in ipairs(redis.call('SINTER', unpack(names))) do add(key) end
end
local reply = {cut, #queued, p}
if fewest > 0 and not ranged then
    reply[4] = 'w'
    reply[5] = best
    for _, key in ipairs(keys) do reply[#reply + 1] = key end
    return reply
end
if #keys > {inline} then
    reply[4] = 'k'
    for _, key in ipairs(keys) do reply[#reply + 1] = key end
    return reply
end
reply[4] = 'r'
for _, row in ipairs(#keys > 0 and redis.call('HMGET', p .. 'i', unpack(keys)) or {}) do
    if row then reply[#reply + 1] = row end
end
return reply
""".replace("{inline}", str(INLINE_ROWS))
)


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def lowered(text: str) -> bytes:
    """The bytes the index compares: ``text`` lowered, in UTF-8 (a lone surrogate, which a
    URL may carry, kept as its three bytes, as the cache's keys do)."""
    return text.lower().encode("utf-8", "surrogatepass")


def trigram_sets(data: str, url: str) -> set[bytes]:
    """The names of the trigram sets (the layout before the suffixes) under ``data`` that held
    an entry of ``url``."""
    text = lowered(url)
    prefix = f"{data}g:".encode()
    return {prefix + text[i : i + 3] for i in range(len(text) - 2)}


def search_arguments(search: str) -> list[bytes]:
    """The `SEARCH` arguments after the prefix for ``search`` (of at least `MIN_TERM` bytes
    lowered): how many windows, the windows, some trigrams (any of a term's trigrams find a
    superset of what all of them find; at most `MAX_WINDOWS`). A term up to `SUFFIX` bytes is its
    own window; a longer one has its windows of `SUFFIX` bytes starting at a character (the
    index holds suffixes starting at one), at most `MAX_WINDOWS` spread over the term."""
    term = lowered(search)
    if len(term) <= SUFFIX:
        windows = [term]
    else:
        starts = [i for i in range(len(term) - SUFFIX + 1) if not 0x80 <= term[i] < 0xC0] or [
            0
        ]  # a term of few, long characters: its first bytes
        step = max(1, -(-len(starts) // MAX_WINDOWS))
        windows = list(dict.fromkeys(term[i : i + SUFFIX] for i in starts[::step]))
    trigrams = sorted({term[i : i + 3] for i in range(len(term) - 2)})[:MAX_WINDOWS]
    return [str(len(windows)).encode(), *windows, *trigrams]


def search_candidates(
    client: Any, run: Callable[[list[Any]], Any], prefix: str, search: str
) -> tuple[float, int, str, Iterator[EntryInfo]]:
    """Through `SEARCH` (``run`` runs it with its arguments; ``prefix`` the namespace's): the
    expiry cut, how many entries wait in the queue, the current epoch's prefix, and the rows
    under it that may hold ``search`` in their URL (a superset: the caller filters them; many
    are read after the script, a batch at a time)."""
    cut, queued, data, kind, *found = run([prefix, *search_arguments(search)])
    data = _text(data)
    if _text(kind) == "r":
        rows: Iterator[EntryInfo] = (EntryInfo.from_json(json.loads(row)) for row in found)
    elif _text(kind) == "k":
        rows = _rows_of(client, data, [_text(key) for key in found])
    else:
        window, *others = found
        keys = dict.fromkeys(_text(key) for key in others)
        keys.update(dict.fromkeys(_range_keys(client, data + "sx", window)))
        rows = _rows_of(client, data, list(keys))
    return float(cut), int(queued), data, rows


def _range_keys(client: Any, name: str, window: bytes) -> Iterator[str]:
    """The keys of the members of the sorted set ``name`` starting with ``window``, read a
    slice of `RANGE_SLICE` at a time, each slice from past the last member read."""
    start, stop = b"[" + window, b"[" + window + b"\xff"
    while True:
        members = client.zrangebylex(name, start, stop, start=0, num=RANGE_SLICE)
        for member in members:
            yield _text(member.rpartition(b"\0")[2])
        if len(members) < RANGE_SLICE:
            return
        start = b"(" + members[-1]


def _rows_of(client: Any, data: str, keys: list[str]) -> Iterator[EntryInfo]:
    """The index rows of ``keys`` under ``data`` (those still there), a batch at a time."""
    for start in range(0, len(keys), INLINE_ROWS):
        for raw in client.hmget(data + "i", keys[start : start + INLINE_ROWS]):
            if raw:
                yield EntryInfo.from_json(json.loads(raw))


def catch_up(client: Any, script: Any, prefix: str, data: str, limit: int) -> int:
    """Index up to ``limit`` queued entries of the epoch under ``data`` (a batch of
    `CATCH_UP_BATCH` per `INDEX` call); how many left the queue."""
    done = 0
    while done < limit:
        keys = [_text(key) for key in client.srandmember(data + "sq", CATCH_UP_BATCH)]
        if not keys:
            break
        arguments: list[str | bytes] = [prefix]
        for key, raw in zip(keys, client.hmget(data + "i", keys), strict=True):
            url = json.loads(raw)["url"] if raw else ""
            arguments += [key, raw or b"", lowered(url)]
        moved = int(script(args=arguments))
        done += moved
        if moved == 0:  # every one picked changed under us: the next call sees them again
            break
    return done


def sweep(client: Any, script: Any, prefix: str, data: str, limit: int) -> int:
    """Take out of the suffixes of the epoch under ``data`` the members of up to ``limit``
    deleted entries (``sd``; a batch of `MIGRATE_BATCH` per `SWEEP` call); how many."""
    done = 0
    while done < limit:
        keys = client.hrandfield(data + "sd", MIGRATE_BATCH)
        if not keys:
            break
        script(args=[prefix, *keys])
        done += len(keys)
    return done


def migrate(client: Any, script: Any, prefix: str, data: str, limit: int) -> int:
    """Move up to ``limit`` entries of the epoch under ``data`` from the trigram layout to the
    suffixes (a batch of `MIGRATE_BATCH` per `MIGRATE` call); how many moved."""
    done = 0
    while done < limit:
        keys = client.hrandfield(data + "sg", MIGRATE_BATCH)
        if not keys:
            break
        moved = int(script(args=[prefix, *keys]))
        done += moved
        if moved == 0:
            break
    return done
