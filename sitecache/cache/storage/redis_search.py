"""``GET /cache?search=...`` on Redis through a trigram index (#18 point 2).

A ``search`` is a URL substring in any case (`sitecache.cache.storage.base.matches_filter`:
``search.lower() in url.lower()``). Each indexed entry is a member of one set per trigram of
its lowered URL (``g:<three bytes>``, over the URL's UTF-8 bytes: a substring of the text is a
substring of its bytes, so every trigram of a term is one of each URL holding it); a term of
three bytes or more finds its candidates with one ``SINTER`` of its trigrams' sets, run by
Redis from the smallest set, and each candidate's row is then checked with the same
`matches_filter` as before, so the answer is exactly the scan's. Shorter terms keep the scan.

What a store adds is one ``SADD`` to the queue ``sq`` (in the put script, atomically with the
index row; a re-store of the same URL adds nothing): indexing ~40 trigrams in every store's
own script would cost each stored page far more. `catch_up` indexes the queued entries in
batches (`INDEX`, a script that checks each row is still the one read), from GC's
housekeeping and before a search when many wait; a search reads both the sets and the queue
(few), so it is exact whether or not a catch-up ran. The hash ``sg`` keeps the lowered URL each
entry was indexed under, so the delete scripts (`FORGET`) take it out of its sets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from sitecache.cache.entry import EntryInfo

__all__ = [
    "FORGET",
    "INDEX",
    "MIN_TERM",
    "SEARCH_CATCH_UP",
    "SEARCH_KEYS",
    "candidate_keys",
    "candidate_rows",
    "catch_up",
    "trigram_sets",
]

#: Bytes a lowered term needs for the trigram index (shorter ones are a scan).
MIN_TERM: Final = 3
#: Queued entries past which a search catches up first (fewer are read as they are).
SEARCH_CATCH_UP: Final = 1000
#: Queued entries one `INDEX` call indexes: a script holds Redis for its whole run (about
#: 40 set members an entry, a few ms a batch), and Lua's ``unpack`` takes a few thousand values.
CATCH_UP_BATCH: Final = 50
#: The one-of-a-kind keys of the index in an epoch (beside the ``g:`` sets).
SEARCH_KEYS: Final = ("sq", "sg")

#: Lua: take an entry out of the search index (its trigram sets, ``sg``, the queue), and
#: ``search_put``: queue a stored entry unless its row was already there with the same URL.
FORGET: Final = """
local function search_forget(p, key)
    local lowered = redis.call('HGET', p .. 'sg', key)
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
#: read; one gone leaves the queue. The keys are grouped by trigram, so each set gets one
#: ``SADD`` per batch, not one per entry. Answers how many left the queue.
INDEX: Final = """
local function data_prefix(shared)
    local epoch = redis.call('GET', shared .. 'ep')
    if epoch and epoch ~= '0' then return shared .. epoch .. ':' end
    return shared
end
local p = data_prefix(ARGV[1])
local groups, indexed, gone = {}, {}, {}
for i = 2, #ARGV, 3 do
    local key, raw, lowered = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    if redis.call('SISMEMBER', p .. 'sq', key) == 1 then
        local now = redis.call('HGET', p .. 'i', key)
        if not now then
            gone[#gone + 1] = key
        elseif now == raw then
            for j = 1, #lowered - 2 do
                local gram = string.sub(lowered, j, j + 2)
                local members = groups[gram]
                if not members then
                    members = {}
                    groups[gram] = members
                end
                members[#members + 1] = key
            end
            indexed[#indexed + 1] = key
            indexed[#indexed + 1] = lowered
            gone[#gone + 1] = key
        end
    end
end
for gram, members in pairs(groups) do
    redis.call('SADD', p .. 'g:' .. gram, unpack(members))
end
if #indexed > 0 then redis.call('HSET', p .. 'sg', unpack(indexed)) end
if #gone > 0 then redis.call('SREM', p .. 'sq', unpack(gone)) end
return #gone
"""


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def trigram_sets(data: str, url: str) -> set[bytes]:
    """The names of the trigram sets under ``data`` holding an entry of ``url``."""
    lowered = url.lower().encode()
    prefix = f"{data}g:".encode()
    return {prefix + lowered[i : i + 3] for i in range(len(lowered) - 2)}


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
            arguments += [key, raw or b"", url.lower().encode()]
        moved = int(script(args=arguments))
        done += moved
        if moved == 0:  # every one picked changed under us: the next call sees them again
            break
    return done


def candidate_keys(client: Any, data: str, search: str) -> tuple[list[str], int]:
    """The keys under ``data`` that may hold ``search`` in their URL (a superset: the caller
    filters their rows): the members of every trigram set of the lowered term, and the queue;
    with how many are queued (one round trip)."""
    lowered = search.lower().encode()
    names = sorted({f"{data}g:".encode() + lowered[i : i + 3] for i in range(len(lowered) - 2)})
    pipe = client.pipeline(transaction=True)  # a catch-up moves keys between the two
    pipe.sinter(names)
    pipe.smembers(data + "sq")
    found, queued = pipe.execute()
    return sorted({_text(key) for key in found} | {_text(key) for key in queued}), len(queued)


def candidate_rows(client: Any, data: str, keys: list[str]) -> Iterator[EntryInfo]:
    """The index rows of ``keys`` under ``data`` (those still there)."""
    for start in range(0, len(keys), 1000):
        for raw in client.hmget(data + "i", keys[start : start + 1000]):
            if raw:
                yield EntryInfo.from_json(json.loads(raw))
