"""The Redis backend: several machines sharing one cache (redis-py).

Every key starts with a per-site prefix (``sitecache:<namespace>:``). Entries are the encoded
bytes of `sitecache.cache.entry` (no pickle), with a Redis expiry; the index is a hash of JSON
rows plus sorted sets by creation (pages) and expiry time (pages and Vary pointers, the
pointers' also apart), one set per tag, URL, path and host, and a totals hash. Writes and
deletes run as Lua scripts, so the index never disagrees with the entries it describes. A lookup
is one ``SUNION``. Locks are taken and released by Lua scripts (atomic compare-and-set and
compare-and-delete); the purge generation is an ``INCR`` counter.

Every call runs inside `StorageBase.translate_errors`, which translates Redis's errors into
`StorageError` (`StorageUnavailable` when Redis does not answer) and runs the circuit breaker
(`sitecache.cache.storage.breaker`): after Redis failed to answer, calls fail at once for a
short, growing interval instead of each waiting out a socket timeout.

The scripts build key names from the prefix, so this backend targets a single Redis server (or
a primary with replicas), not Redis Cluster.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit, urlunsplit

import redis

from sitecache.cache.entry import EXPIRES_OFFSET, EntryInfo, encode_expires
from sitecache.cache.storage.base import ANY_GENERATION, Dimension, StorageBase, StorageError
from sitecache.cache.storage.breaker import CircuitBreaker

__all__ = ["RedisStorage"]

_UNINDEX: Final = """
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

_PUT: Final = (
    _UNINDEX
    + """
local p, key, data, ttl, info = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
-- A conditional put (ARGV[6] = "1") is refused once the purge generation moved: a page
-- rendered before a purge began must not outlive it. ARGV[7] is the generation the renderer
-- saw ("" when there was none yet).
if ARGV[6] == '1' then
    local generation = redis.call('GET', p .. 'gen')
    if (generation or '') ~= ARGV[7] then return 0 end
end
unindex(p, key)
local row = cjson.decode(info)
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
"""
)

_DELETE: Final = (
    _UNINDEX
    + """
local p = ARGV[1]
local removed = {}
for i = 2, #ARGV do
    local old = unindex(p, ARGV[i])
    redis.call('DEL', p .. 'e:' .. ARGV[i])
    if old then table.insert(removed, old) end
end
return removed
"""
)

_MARK_STALE: Final = """
local p, now, stamp = ARGV[1], tonumber(ARGV[2]), ARGV[3]
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

_ACQUIRE: Final = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
end
if held then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


#: The prefix of the set of keys of each lookup dimension (tags, URLs, paths, hosts).
_SETS: Final[dict[str, str]] = {"tag": "t:", "url": "u:", "path": "p:", "host": "h:"}


def _text(value: object) -> str:
    """A Redis reply item as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _infos(rows: list[bytes | None] | None) -> list[EntryInfo]:
    """Index rows (JSON) as returned by a script or ``HMGET``, missing ones skipped."""
    return [EntryInfo.from_json(json.loads(row)) for row in rows or () if row]


def _redact(url: str) -> str:
    """``url`` without its password (shown in status and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    netloc = f"{parts.username}:***@{netloc}" if parts.username else f"***@{netloc}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class RedisStorage(StorageBase):
    """The store in Redis under ``sitecache:<namespace>:`` (see the module docstring)."""

    backend = "redis"
    storage_errors: ClassVar[tuple[type[BaseException], ...]] = (redis.RedisError,)
    unavailable_errors: ClassVar[tuple[type[BaseException], ...]] = (
        redis.ConnectionError,
        redis.TimeoutError,
        OSError,
    )
    error_label: ClassVar[str] = "Redis"

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        namespace: str = "default",
        *,
        client: redis.Redis | None = None,
        timeout: float = 1.0,
    ) -> None:
        self.location = _redact(url)
        self.prefix = f"sitecache:{namespace}:"
        self.breaker = CircuitBreaker()
        # redis-py types its commands as "result or awaitable" (one class serves sync and
        # async); this client is synchronous, so its replies are used as plain values.
        try:
            self.client: Any = client or redis.Redis.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        except (ValueError, redis.RedisError) as exc:
            raise StorageError(f"invalid Redis URL {self.location}: {exc}") from exc
        self._put = self.client.register_script(_PUT)
        self._delete = self.client.register_script(_DELETE)
        self._mark_stale = self.client.register_script(_MARK_STALE)
        self._release = self.client.register_script(_RELEASE)
        self._acquire = self.client.register_script(_ACQUIRE)
        self._generation_key = self._key("gen")
        self._local = threading.local()

    def _key(self, *parts: str) -> str:
        return self.prefix + "".join(parts)

    def get(self, key: str) -> bytes | None:
        with self.translate_errors("read"):
            value = self._command("GET", self._key("e:", key))
        return value if isinstance(value, bytes) else None

    def put(
        self,
        key: str,
        data: bytes,
        info: EntryInfo,
        ttl: float | None,
        *,
        generation: object = ANY_GENERATION,
    ) -> bool:
        ttl_ms = 0 if ttl is None else max(1, int(ttl * 1000))
        conditional = "0" if generation is ANY_GENERATION else "1"
        seen = generation if isinstance(generation, bytes) else b""
        row = json.dumps(info.as_json())
        with self.translate_errors("write"):
            stored = self._script(
                self._put, [], [self.prefix, key, data, ttl_ms, row, conditional, seen]
            )
        return bool(stored)

    def _delete_rows(self, keys: list[str]) -> list[EntryInfo]:
        return _infos(self._delete(args=[self.prefix, *keys]))

    def _stale_rows(self, keys: list[str], now: float) -> list[EntryInfo]:
        return _infos(self._mark_stale(args=[self.prefix, repr(now), encode_expires(now), *keys]))

    def _rows(self, keys: list[str]) -> list[EntryInfo]:
        return _infos(self.client.hmget(self._key("i"), keys)) if keys else []

    def _lookup(self, dimension: Dimension, values: list[str]) -> set[str]:
        letter = _SETS[dimension]
        members = self.client.sunion([self._key(letter, value) for value in values])
        return {_text(member) for member in members}

    def _all_keys(self) -> set[str]:
        return {_text(key) for key in self.client.hkeys(self._key("i"))}

    def _soonest_expiring(self, before: float, limit: int) -> list[str]:
        keys = self.client.zrangebyscore(self._key("bye"), "(0", before, start=0, num=limit)
        return [_text(key) for key in keys]

    def _oldest_stored(self, limit: int) -> list[str]:
        # ``byc`` holds pages only: a Vary pointer goes when it expires or its page is purged.
        return [_text(key) for key in self.client.zrange(self._key("byc"), 0, limit - 1)]

    def _newest(self, offset: int, limit: int) -> tuple[list[EntryInfo], int]:
        total = int(self.client.zcard(self._key("byc")))
        keys = self.client.zrevrange(self._key("byc"), offset, offset + limit - 1)
        rows = self._rows([_text(key) for key in keys])
        return sorted(rows, key=lambda info: (-info.created, info.url)), total

    def _every_row(self) -> Iterator[EntryInfo]:
        for _, value in self.client.hscan_iter(self._key("i"), count=1000):
            yield EntryInfo.from_json(json.loads(value))

    def _counts(self, now: float) -> tuple[int, int, int, int]:
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(self._key("tot"))
        pipe.zcount(self._key("bye"), "(0", now)
        pipe.zcount(self._key("bxp"), "(0", now)  # Vary pointers are not counted
        totals, expiring, pointers = pipe.execute()
        return (
            int(totals.get(b"entries", 0)),
            int(expiring) - int(pointers),
            int(totals.get(b"bytes", 0)),
            int(totals.get(b"compressed_bytes", 0)),
        )

    def get_value(self, name: str) -> bytes | None:
        with self.translate_errors("read"):
            value = self.client.get(self._key("v:", name))
        return value if isinstance(value, bytes) else None

    def set_value(self, name: str, value: bytes) -> None:
        with self.translate_errors("write"):
            self.client.set(self._key("v:", name), value)

    def add_counters(self, deltas: Mapping[str, int]) -> None:
        if not deltas:
            return
        with self.translate_errors("counters"):
            pipe = self.client.pipeline(transaction=True)
            for name, delta in deltas.items():
                pipe.hincrby(self._key("c"), name, delta)
            pipe.execute()

    def counters(self) -> dict[str, int]:
        with self.translate_errors("counters"):
            values = self.client.hgetall(self._key("c"))
        return {_text(name): int(value) for name, value in values.items()}

    def reset_counters(self) -> None:
        with self.translate_errors("counters"):
            self.client.delete(self._key("c"))

    def acquire_lock(self, name: str, owner: str, ttl: float) -> bool:
        milliseconds = max(1, int(ttl * 1000))
        with self.translate_errors("lock"):
            held = self._script(self._acquire, [self._key("l:", name)], [owner, milliseconds])
        return bool(held)

    def lock_owner(self, name: str) -> str | None:
        with self.translate_errors("lock"):
            owner = self.client.get(self._key("l:", name))
        return _text(owner) if owner is not None else None

    def release_lock(self, name: str, owner: str) -> None:
        with self.translate_errors("lock"):
            self._script(self._release, [self._key("l:", name)], [owner])

    def _generation_connection(self) -> Any:
        """This thread's own connection for `generation` (a new one after a fork)."""
        local = self._local
        pid = os.getpid()
        connection = getattr(local, "connection", None)
        if connection is None or local.pid != pid:
            pool = self.client.connection_pool
            connection = pool.connection_class(**pool.connection_kwargs)
            local.connection = connection
            local.pid = pid
        return connection

    def _command(self, *args: str | bytes | int) -> Any:
        """One command of a request's path (a read, a write, a lock) on this thread's own
        connection, sent in one piece: `Redis.execute_command` spends as much Python time
        again on the pool, retries and instrumentation, and sends a large value in three
        writes. A connection that went stale while idle is retried once on a fresh one
        (every such command may run twice: a put or a lock of the same owner gives the same
        result); a timeout is not.

        Raises:
            redis.RedisError: Redis failed or refused the command.
        """
        connection = self._generation_connection()
        try:
            connection.send_packed_command([b"".join(connection.pack_command(*args))])
            return connection.read_response()
        except redis.TimeoutError:
            connection.disconnect()
            raise
        except redis.ConnectionError:
            connection.disconnect()
        connection.send_packed_command([b"".join(connection.pack_command(*args))])
        return connection.read_response()

    def _script(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """Run a registered Lua script by its digest (`_command`); loaded first when Redis
        does not know it (a restart, ``SCRIPT FLUSH``)."""
        try:
            return self._command("EVALSHA", script.sha, len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:
            return script(keys=keys, args=args)

    def generation(self) -> object:
        # Every request asks (a purge anywhere is seen on the very next request), so this GET
        # goes straight to a connection of this thread's own: `Redis.get` spends as much Python
        # time again on the pool checkout, retry wrapper and instrumentation. A connection that
        # went stale while idle (Redis restarted, idle timeout) is retried once on a fresh one;
        # a timeout is not (a hung Redis must cost one timeout, then the breaker opens).
        with self.translate_errors("generation"):
            connection = self._generation_connection()
            try:
                connection.send_command("GET", self._generation_key)
                return connection.read_response()
            except redis.TimeoutError:
                connection.disconnect()
                raise
            except redis.ConnectionError:
                connection.disconnect()
            connection.send_command("GET", self._generation_key)
            return connection.read_response()

    def bump_generation(self) -> None:
        with self.translate_errors("generation"):
            self.client.incr(self._key("gen"))

    def clear_namespace(self) -> int:
        """Delete every key of this namespace (tests and `sitecache cache flush --all`)."""
        removed = 0
        with self.translate_errors("clear"):
            batch: list[bytes] = []
            for key in self.client.scan_iter(match=f"{self.prefix}*", count=1000):
                batch.append(key)
                if len(batch) >= 500:
                    removed += int(self.client.delete(*batch))
                    batch = []
            if batch:
                removed += int(self.client.delete(*batch))
        return removed

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid == os.getpid():
            connection.disconnect()
        self._local.connection = None
        self.client.close()
