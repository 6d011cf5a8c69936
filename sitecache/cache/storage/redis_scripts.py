"""The Lua scripts of the Redis backend (`sitecache.cache.storage.redis`).

Each takes the namespace's prefix as ``ARGV[1]`` and builds every key name from it, so a write
and its index changes happen in one atomic step. The entry scripts read the current epoch
themselves (`DATA_PREFIX`), atomically with what they write.
"""

from __future__ import annotations

from typing import Final

from sitecache.cache.entry import EXPIRES_OFFSET, TIMES_OFFSET
from sitecache.cache.storage.redis_search import FORGET

__all__ = [
    "ACQUIRE",
    "ANNOUNCE",
    "DELETE",
    "GET",
    "INVALIDATE",
    "INVALIDATE_EXPIRED",
    "MARK_STALE",
    "ONLY_HOSTS",
    "PUT",
    "READ_AHEAD",
    "RELEASE",
]

#: The prefix of the current epoch's keys, from the namespace's prefix (read in each script).
DATA_PREFIX: Final = """
local function data_prefix(shared)
    local epoch = redis.call('GET', shared .. 'ep')
    if epoch and epoch ~= '0' then return shared .. epoch .. ':' end
    return shared
end
"""

UNINDEX: Final = """
local function unindex(p, key)
    local old = redis.call('HGET', p .. 'i', key)
    if not old then return nil end
    local row = cjson.decode(old)
    for _, tag in ipairs(row['tags']) do redis.call('SREM', p .. 't:' .. tag, key) end
    redis.call('SREM', p .. 'u:' .. row['url'], key)
    redis.call('SREM', p .. 'h:' .. row['host'], key)
    redis.call('SREM', p .. 'p:' .. row['path'], key)
    redis.call('HDEL', p .. 'i', key)
    redis.call('ZREM', p .. 'byc', key)
    redis.call('ZREM', p .. 'bye', key)
    redis.call('ZREM', p .. 'bxp', key)
    if row['status'] > 0 then
        redis.call('HINCRBY', p .. 'tot', 'entries', -1)
    end
    -- 0 - n, not -n: Lua writes -0 as "-0", which HINCRBY refuses as "not an integer"
    -- (an entry with no gzip copy, or a Vary pointer with no body, could never be deleted).
    redis.call('HINCRBY', p .. 'tot', 'bytes', 0 - row['size'])
    redis.call('HINCRBY', p .. 'tot', 'compressed_bytes', 0 - row['compressed_size'])
    return old
end
"""

PUT: Final = (
    DATA_PREFIX
    + UNINDEX
    + FORGET
    + """
local shared, key, data, ttl, info = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
-- The fill lock of this render (ARGV[10], owned by ARGV[11]; "" for none) is freed whatever
-- happens to the write, in the same round trip. A key of another type is left alone.
if ARGV[10] ~= '' then
    local held = redis.pcall('GET', ARGV[10])
    if held == ARGV[11] then redis.call('DEL', ARGV[10]) end
end
-- A conditional put (ARGV[6] = "1") is refused once the purge generation moved: a page
-- rendered before a purge began must not outlive it. ARGV[7] is the generation the renderer
-- saw ("" when there was none yet).
if ARGV[6] == '1' then
    local generation = redis.call('GET', shared .. 'gen')
    if (generation or '') ~= ARGV[7] then return 0 end
end
-- Epochs: the entry is written under the current epoch's prefix.
local p = data_prefix(shared)
-- A store-back (ARGV[8] = "1") replaces only the entry it read: the one whose creation and
-- expiry times are ARGV[9] (never a purged one, one made stale since, or a newer render).
if ARGV[8] == '1' then
    local times = redis.call('GETRANGE', p .. 'e:' .. key, {offset}, {last})
    if times ~= ARGV[9] then return 0 end
end
local old = unindex(p, key)
local row = cjson.decode(info)
search_put(p, key, old, row['url'])
if ttl > 0 then
    redis.call('SET', p .. 'e:' .. key, data, 'PX', ttl)
else
    redis.call('SET', p .. 'e:' .. key, data)
end
redis.call('HSET', p .. 'i', key, info)
if row['status'] > 0 then
    redis.call('ZADD', p .. 'byc', row['created'], key)
    redis.call('HINCRBY', p .. 'tot', 'entries', 1)
end
if row['expires'] > 0 then
    redis.call('ZADD', p .. 'bye', row['expires'], key)
    if row['status'] == 0 then redis.call('ZADD', p .. 'bxp', row['expires'], key) end
end
for _, tag in ipairs(row['tags']) do redis.call('SADD', p .. 't:' .. tag, key) end
redis.call('SADD', p .. 'u:' .. row['url'], key)
redis.call('SADD', p .. 'h:' .. row['host'], key)
redis.call('SADD', p .. 'p:' .. row['path'], key)
redis.call('HINCRBY', p .. 'tot', 'bytes', row['size'])
redis.call('HINCRBY', p .. 'tot', 'compressed_bytes', row['compressed_size'])
return 1
""".replace("{offset}", str(TIMES_OFFSET)).replace("{last}", str(TIMES_OFFSET + 15))
)

DELETE: Final = (
    DATA_PREFIX
    + UNINDEX
    + FORGET
    + """
local p = data_prefix(ARGV[1])
local removed = {}
for i = 2, #ARGV do
    local old = unindex(p, ARGV[i])
    search_forget(p, ARGV[i])
    redis.call('DEL', p .. 'e:' .. ARGV[i])
    if old then table.insert(removed, old) end
end
return removed
"""
)

MARK_STALE: Final = (
    DATA_PREFIX
    + """
local p, now, stamp = data_prefix(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local touched = {}
for i = 4, #ARGV do
    local key = ARGV[i]
    local old = redis.call('HGET', p .. 'i', key)
    if old then
        local row = cjson.decode(old)
        table.insert(touched, old)
        if row['expires'] == 0 or row['expires'] > now then
            if redis.call('EXISTS', p .. 'e:' .. key) == 1 then
                redis.call('SETRANGE', p .. 'e:' .. key, {offset}, stamp)
            end
            row['expires'] = now
            redis.call('HSET', p .. 'i', key, cjson.encode(row))
            redis.call('ZADD', p .. 'bye', now, key)
            if row['status'] == 0 then redis.call('ZADD', p .. 'bxp', now, key) end
        end
    end
end
return touched
""".replace("{offset}", str(EXPIRES_OFFSET))
)

#: An entry of the current epoch (a read without the request's token).
GET: Final = (
    DATA_PREFIX
    + """
return redis.call('GET', data_prefix(ARGV[1]) .. 'e:' .. ARGV[2])
"""
)

#: The purge generation and the epoch (`RedisStorage.generation`) with the entry ARGV[2] of
#: that epoch, in one round trip (`RedisStorage.generation_for`). When there is none and
#: ARGV[3] names a lock, it is taken as `ACQUIRE` would for owner ARGV[4], for ARGV[5] ms:
#: the fourth item is 1 (taken), 0 (held by another) or -1 (not tried, or the key holds
#: another type: `RedisStorage.acquire_lock` asks again).
READ_AHEAD: Final = """
local shared = ARGV[1]
local found = redis.call('MGET', shared .. 'gen', shared .. 'ep')
local p = shared
if found[2] and found[2] ~= '0' then p = shared .. found[2] .. ':' end
local value = redis.call('GET', p .. 'e:' .. ARGV[2])
local taken = -1
if not value and ARGV[3] ~= '' then
    local held = redis.pcall('GET', ARGV[3])
    if type(held) == 'table' and held['err'] then
        taken = -1
    elseif held == ARGV[4] then
        redis.call('PEXPIRE', ARGV[3], ARGV[5])
        taken = 1
    elseif held then
        taken = 0
    else
        redis.call('SET', ARGV[3], ARGV[4], 'PX', ARGV[5])
        taken = 1
    end
end
return {found[1], found[2], value, taken}
"""

#: Move to the next epoch; record the old one (its totals, its scan cursor) for removal.
INVALIDATE: Final = (
    DATA_PREFIX
    + """
local shared = ARGV[1]
local p = data_prefix(shared)
local old = tonumber(redis.call('GET', shared .. 'ep') or '0')
local totals = redis.call('HMGET', p .. 'tot', 'entries', 'bytes', 'compressed_bytes')
local entries = tonumber(totals[1] or '0')
local size = tonumber(totals[2] or '0') + tonumber(totals[3] or '0')
redis.call('SET', shared .. 'ep', old + 1)
if redis.call('HLEN', p .. 'i') > 0 or redis.call('EXISTS', p .. 'tot') == 1 then
    local record = cjson.encode({cursor = '0', entries = entries, bytes = size})
    redis.call('HSET', shared .. 'dead', tostring(old), record)
end
return {entries, size}
"""
)

#: Whether every entry of the current epoch is of one of the hosts in ARGV[2..].
ONLY_HOSTS: Final = (
    DATA_PREFIX
    + """
local p = data_prefix(ARGV[1])
local held = 0
for i = 2, #ARGV do held = held + redis.call('SCARD', p .. 'h:' .. ARGV[i]) end
if held == redis.call('HLEN', p .. 'i') then return 1 end
return 0
"""
)

ACQUIRE: Final = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
end
if held then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

#: Append ARGV[1] to the announcement stream KEYS[1] under the next number of KEYS[2] (its
#: entry id ``<n>-1``, so a reader sees a gap when records it did not read were trimmed),
#: keeping about ARGV[2] records; the number.
ANNOUNCE: Final = """
local n = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], n .. '-1', 'r', ARGV[1])
return n
"""

RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

#: Move the expiry cut (``xb``) to ARGV[2] when later; the pages and bytes it newly hides.
INVALIDATE_EXPIRED: Final = (
    DATA_PREFIX
    + """
local shared, before = ARGV[1], tonumber(ARGV[2])
local p = data_prefix(shared)
local cut = tonumber(redis.call('GET', shared .. 'xb') or '0')
if before <= cut then return {0, 0} end
local pages, size = 0, 0
for _, key in ipairs(redis.call('ZRANGEBYSCORE', p .. 'bye', '(' .. ARGV[3], ARGV[2])) do
    local raw = redis.call('HGET', p .. 'i', key)
    if raw then
        local row = cjson.decode(raw)
        if row['status'] > 0 then pages = pages + 1 end
        size = size + row['size'] + row['compressed_size']
    end
end
redis.call('SET', shared .. 'xb', ARGV[2])
return {pages, size}
"""
)
