"""The Redis backend: several machines sharing one cache (redis-py).

Every key starts with a per-site prefix (``sitecache:<namespace>:``). Entries are the encoded
bytes of `sitecache.cache.entry` (no pickle), with a Redis expiry; the index is a hash of JSON
rows plus sorted sets by creation (pages) and expiry time (pages and Vary pointers, the
pointers' also apart), one set per tag, URL, path and host, a totals hash, and the sorted set
of URL suffixes of ``search`` (`sitecache.cache.storage.redis_search`). Writes and
deletes run as Lua scripts, so the index never disagrees with the entries it describes. A lookup
is one ``SUNION``. Locks are taken and released by Lua scripts (atomic compare-and-set and
compare-and-delete); the purge generation is an ``INCR`` counter.

A request's first read (`RedisStorage.generation_for`) is one script: the generation, the epoch
and the entry of its key, and, when nothing is stored there, the key's fill lock; the request's
`get` of that key and `acquire_lock` of that lock are answered from it (a miss: two round
trips, that read and the put's script, which frees the lock).

Epochs: the entries and their index live under the namespace's current epoch
(``<prefix><epoch>:``; epoch 0, the first, is the prefix itself, the layout before epochs), kept
in the key ``ep``. The scripts read it themselves, atomically with what they write; a request
reads it with the generation, in the same round trip (`RedisToken`), and reads its entries
under it. `invalidate_all` moves to the next epoch: the old keys are unreachable at once and
`remove_invalidated` unlinks them in slices, walking the old epoch's index hash with ``HSCAN``
(the hash ``dead`` keeps each old epoch's cursor and what it held).

Every call runs inside `StorageBase.translate_errors`, which translates Redis's errors into
`StorageError` (`StorageUnavailable` when Redis does not answer) and runs the circuit breaker
(`sitecache.cache.storage.breaker`): after Redis failed to answer, calls fail at once for a
short, growing interval instead of each waiting out a socket timeout.

A key of the namespace holding another type than this backend's (another program wrote it)
is dropped when a command meets it (`sitecache.cache.storage.redis_repair`): a named value or a
lock where it is read, any other with the whole cache, which starts empty.

The scripts build key names from the prefix, so this backend targets a single Redis server (or
a primary with replicas), not Redis Cluster.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit, urlunsplit

import redis

from sitecache.cache.entry import EntryInfo, encode_expires
from sitecache.cache.storage.base import (
    ANY_GENERATION,
    Announcements,
    Dimension,
    EntryStatus,
    StorageBase,
    StorageError,
    StorageUnusable,
    matches_filter,
)
from sitecache.cache.storage.breaker import CircuitBreaker
from sitecache.cache.storage.redis_announcements import (
    ANNOUNCEMENTS_KEPT,
    ANNOUNCEMENTS_READ,
    read_announcements,
)
from sitecache.cache.storage.redis_commands import ThreadCommands
from sitecache.cache.storage.redis_listing import (
    expired_pages,
    fresh_page_keys,
    hidden_totals,
    search_rows,
)
from sitecache.cache.storage.redis_repair import (
    dropping_foreign,
    is_wrong_type,
    repair,
    unlink_namespace,
)
from sitecache.cache.storage.redis_scripts import (
    ACQUIRE,
    ANNOUNCE,
    DELETE,
    GET,
    INVALIDATE,
    INVALIDATE_EXPIRED,
    MARK_STALE,
    ONLY_HOSTS,
    PUT,
    READ_AHEAD,
    RELEASE,
)
from sitecache.cache.storage.redis_search import (
    INDEX,
    MIGRATE,
    MIN_TERM,
    SEARCH,
    SEARCH_CATCH_UP,
    SEARCH_KEYS,
    SWEEP,
    catch_up,
    lowered,
    migrate,
    search_candidates,
    sweep,
    trigram_sets,
)

__all__ = ["ANNOUNCEMENTS_KEPT", "ANNOUNCEMENTS_READ", "RedisStorage", "RedisToken"]

#: The prefix of the set of keys of each lookup dimension (tags, URLs, paths, hosts).
_SETS: Final[dict[str, str]] = {"tag": "t:", "url": "u:", "path": "p:", "host": "h:"}
#: The one-of-a-kind keys of an epoch (beside ``e:``, ``t:``, ``u:``, ``h:`` and ``p:`` ones).
_EPOCH_KEYS: Final = ("i", "byc", "bye", "bxp", "tot", *SEARCH_KEYS)
#: Entries a housekeeping call indexes for search at most (`redis_search.catch_up`).
HOUSEKEEPING_BATCH: Final = 5000
#: Seconds after `RedisStorage.generation_for` took a lock that `acquire_lock` answers from it
#: (then it asks Redis again: the same owner takes it again).
LOCK_AHEAD_AGE: Final = 1.0
#: The sets an index row names (beside one per tag): (key prefix, row field).
_ROW_SETS: Final = (("u", "url"), ("h", "host"), ("p", "path"))


@dataclass(frozen=True, slots=True)
class RedisToken:
    """The generation a request read (`RedisStorage.generation`), with the epoch read in the
    same round trip: its lookups read that epoch's entries."""

    generation: bytes | None
    epoch: bytes | None


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
    frees_locks_in_put = True
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
        self._put = self.client.register_script(PUT)
        self._delete = self.client.register_script(DELETE)
        self._mark_stale = self.client.register_script(MARK_STALE)
        self._get = self.client.register_script(GET)
        self._invalidate_script = self.client.register_script(INVALIDATE)
        self._invalidate_expired_script = self.client.register_script(INVALIDATE_EXPIRED)
        self._only_hosts_script = self.client.register_script(ONLY_HOSTS)
        self._release = self.client.register_script(RELEASE)
        self._announce = self.client.register_script(ANNOUNCE)
        self._acquire = self.client.register_script(ACQUIRE)
        self._read_ahead = self.client.register_script(READ_AHEAD)
        self._index_search = self.client.register_script(INDEX)
        self._search = self.client.register_script(SEARCH)
        self._migrate_search = self.client.register_script(MIGRATE)
        self._sweep_search = self.client.register_script(SWEEP)
        self._generation_keys = (self._key("gen"), self._key("ep"))
        #: the request path's commands, on each thread's own connection
        self._commands = ThreadCommands(self.client)
        self._local = threading.local()

    def _key(self, *parts: str) -> str:
        return self.prefix + "".join(parts)

    def recover(self, error: BaseException, what: str) -> StorageUnusable | None:
        """A key of the wrong type (``WRONGTYPE``): the wrong keys are dropped and, unless
        only counters or announcements were, the cache starts empty (`redis_repair`)."""
        if not is_wrong_type(error) or getattr(self._local, "repairing", False):
            return None
        self._local.repairing = True  # a failure while repairing is an ordinary one
        try:
            dropped, emptied = repair(
                self.client,
                self.prefix,
                self._data,
                lambda: self._invalidate_script(args=[self.prefix]),
            )
        except redis.RedisError as exc:
            return StorageUnusable("damaged", f"Redis {what}: {error}; not repaired: {exc}")
        finally:
            self._local.repairing = False
        names = ", ".join(dropped) or "an entry or index key"
        if emptied:
            self._reset(f"a Redis key of the wrong type ({names}) was dropped")
        empty = "; the cache starts empty" if emptied else ""
        return StorageUnusable("damaged", f"Redis {what}: {error}: dropped {names}{empty}")

    def _epoch_prefix(self, epoch: bytes | str | None) -> str:
        """The prefix of an epoch's keys (epoch 0: the namespace's own prefix)."""
        text = _text(epoch) if epoch is not None else "0"
        return self.prefix if text == "0" else f"{self.prefix}{text}:"

    def _data(self) -> str:
        """The prefix of the current epoch's keys (one ``GET``)."""
        return self._epoch_prefix(self.client.get(self._key("ep")))

    def _state(self) -> tuple[str, float]:
        """The prefix of the current epoch's keys and the expiry cut (one ``MGET``)."""
        epoch, cut = self.client.mget(self._key("ep"), self._key("xb"))
        return self._epoch_prefix(epoch), float(cut or 0)

    def _hidden(self, data: str, cut: float) -> set[str]:
        """Keys the expiry cut hides (entries and Vary pointers)."""
        if cut <= 0:
            return set()
        return {_text(key) for key in self.client.zrangebyscore(data + "bye", "(0", cut)}

    def get(self, key: str, generation: object = None) -> bytes | None:
        ahead = getattr(self._local, "ahead", None)
        if ahead is not None and ahead[0] is generation and ahead[1] == key:
            # Read with this very token (`generation_for`), once: a later get reads again.
            self._local.ahead = None
            return ahead[2]  # type: ignore[no-any-return]
        with self.translate_errors("read"):
            if isinstance(generation, RedisToken):
                # The epoch the request read with its generation: one plain GET.
                value = self._commands.command(
                    "GET", f"{self._epoch_prefix(generation.epoch)}e:{key}"
                )
            else:
                value = self._commands.script(self._get, [], [self.prefix, key])
        return value if isinstance(value, bytes) else None

    def put(
        self,
        key: str,
        data: bytes,
        info: EntryInfo,
        ttl: float | None,
        *,
        generation: object = ANY_GENERATION,
        replaces: bytes | None = None,
        release: tuple[str, str] | None = None,
    ) -> bool:
        ttl_ms = 0 if ttl is None else max(1, int(ttl * 1000))
        lock, owner = (self._key("l:", release[0]), release[1]) if release else ("", "")
        check = "0" if replaces is None else "1"
        conditional = "0" if generation is ANY_GENERATION else "1"
        # Epochs: the token carries the generation beside the epoch; only the
        # generation is compared (every purge moves it).
        seen = generation.generation if isinstance(generation, RedisToken) else None
        seen = seen or (generation if isinstance(generation, bytes) else b"")
        row = json.dumps(info.as_json())
        head = [self.prefix, key, data, ttl_ms, row, conditional]
        with self.translate_errors("write"):
            stored = self._commands.script(
                self._put, [], [*head, seen, check, replaces or b"", lock, owner]
            )
        return bool(stored)

    def _delete_rows(self, keys: list[str]) -> list[EntryInfo]:
        return _infos(self._delete(args=[self.prefix, *keys]))

    def _stale_rows(self, keys: list[str], now: float) -> list[EntryInfo]:
        return _infos(self._mark_stale(args=[self.prefix, repr(now), encode_expires(now), *keys]))

    def _rows(self, keys: list[str], data: str | None = None) -> list[EntryInfo]:
        if not keys:
            return []
        return _infos(self.client.hmget((data or self._data()) + "i", keys))

    def _lookup(self, dimension: Dimension, values: list[str]) -> set[str]:
        (data, cut), letter = self._state(), _SETS[dimension]
        members = self.client.sunion([f"{data}{letter}{value}" for value in values])
        return {_text(member) for member in members} - self._hidden(data, cut)

    def _all_keys(self) -> set[str]:
        data, cut = self._state()
        return {_text(key) for key in self.client.hkeys(data + "i")} - self._hidden(data, cut)

    def _soonest_expiring(self, before: float, limit: int) -> list[str]:
        keys = self.client.zrangebyscore(self._data() + "bye", "(0", before, start=0, num=limit)
        return [_text(key) for key in keys]

    def _oldest_stored(self, limit: int) -> list[str]:
        # ``byc`` holds pages only: a Vary pointer goes when it expires or its page is purged.
        return [_text(key) for key in self.client.zrange(self._data() + "byc", 0, limit - 1)]

    def _newest(self, offset: int, limit: int) -> tuple[list[EntryInfo], int]:
        # ZREVRANGE by rank: O(log n + page) on any page.
        data, cut = self._state()
        hidden = expired_pages(self.client, data, cut) if cut > 0 else []
        if hidden:  # an expired purge's cut hides some until GC has deleted them
            keys, total = fresh_page_keys(self.client, data, hidden, offset, limit)
        else:
            pipe = self.client.pipeline(transaction=False)
            pipe.zcard(data + "byc")
            pipe.zrevrange(data + "byc", offset, offset + limit - 1)
            total, found = pipe.execute()
            keys = [_text(key) for key in found]
        # In the set's own order (created, then key, both descending): a sort of the page
        # by anything else would order equal times differently on either side of a page end.
        return self._rows(keys, data), int(total)

    def _matching(
        self, offset: int, limit: int, now: float, search: str, status: EntryStatus | None
    ) -> tuple[list[EntryInfo], int]:
        """``status`` alone through the expiry set (`redis_listing`); a ``search`` through the
        suffixes (`redis_search`), or, for a term under three bytes, a walk of every row
        (`search_rows` skips decoding most of them)."""
        if search:
            if len(lowered(search)) >= MIN_TERM:
                cut, found = self._search_candidates(search)
            else:
                data, cut = self._state()
                found = search_rows(self.client, data + "i", search)
            rows = [
                info
                for info in found
                if info.status
                and not 0 < info.expires <= cut
                and matches_filter(info, now, search, status)
            ]
            rows.sort(key=lambda info: (-info.created, info.url))
            return rows[offset : offset + limit], len(rows)
        data, cut = self._state()
        if status == "expired":
            expired = expired_pages(self.client, data, now, after=cut)
            rows = sorted(self._rows(expired, data), key=lambda info: (-info.created, info.url))
            return rows[offset : offset + limit], len(rows)
        hidden = expired_pages(self.client, data, max(now, cut))
        keys, total = fresh_page_keys(self.client, data, hidden, offset, limit)
        rows = self._rows(keys, data)
        return sorted(rows, key=lambda info: (-info.created, info.url)), total

    def _search_candidates(self, search: str) -> tuple[float, Iterator[EntryInfo]]:
        """The expiry cut and the rows the index and the queue name for ``search``
        (`redis_search.search_candidates`, one script); the queue is indexed first when many
        wait."""
        run = self._run_search
        cut, queued, data, rows = search_candidates(self.client, run, self.prefix, search)
        if queued > SEARCH_CATCH_UP:
            catch_up(self.client, self._index_search, self.prefix, data, 1 << 62)
            cut, _, _, rows = search_candidates(self.client, run, self.prefix, search)
        return cut, rows

    def _run_search(self, arguments: list[Any]) -> Any:
        return self._commands.script(self._search, [], arguments)

    def _every_row(self) -> Iterator[EntryInfo]:
        data, cut = self._state()
        for _, value in self.client.hscan_iter(data + "i", count=1000):
            info = EntryInfo.from_json(json.loads(value))
            if not 0 < info.expires <= cut:
                yield info

    def _counts(self, now: float) -> tuple[int, int, int, int]:
        data, cut = self._state()
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(data + "tot")
        pipe.zcount(data + "bye", f"({cut!r}", now)
        pipe.zcount(data + "bxp", f"({cut!r}", now)  # Vary pointers are not counted
        totals, expiring, pointers = pipe.execute()
        pages, size, compressed = hidden_totals(self.client, data, cut)
        return (
            int(totals.get(b"entries", 0)) - pages,
            int(expiring) - int(pointers),
            int(totals.get(b"bytes", 0)) - size,
            int(totals.get(b"compressed_bytes", 0)) - compressed,
        )

    # ------------------------------------------------------------------ epochs
    def _invalidate(self) -> tuple[int, int]:
        entries, size = self._invalidate_script(args=[self.prefix])
        return int(entries), int(size)

    def _invalidate_expired(self, before: float) -> tuple[int, int]:
        _, cut = self._state()
        script = self._invalidate_expired_script
        pages, size = script(args=[self.prefix, repr(before), repr(max(cut, 0.0))])
        return int(pages), int(size)

    def _only_hosts(self, hosts: list[str]) -> bool:
        return bool(self._only_hosts_script(args=[self.prefix, *hosts]))

    def _dead(self) -> dict[int, dict[str, Any]]:
        """The old epochs still to remove: epoch -> ``{cursor, entries, bytes}``."""
        found = self.client.hgetall(self._key("dead"))
        return {int(epoch): json.loads(record) for epoch, record in found.items()}

    def _pending(self) -> tuple[int, int]:
        dead = self._dead().values()
        pages, size, compressed = hidden_totals(self.client, *self._state())
        return (
            sum(int(r["entries"]) for r in dead) + pages,
            sum(int(r["bytes"]) for r in dead) + size + compressed,
        )

    def _remove_invalidated_batch(self) -> int:
        """One ``HSCAN`` step over the oldest dead epoch's index, unlinking the keys its rows
        name; then a batch of the entries the expiry cut hides."""
        dead = self._dead()
        if not dead:
            data, cut = self._state()
            if cut <= 0:
                return 0
            keys = self.client.zrangebyscore(data + "bye", "(0", cut, start=0, num=self.batch_size)
            if keys:
                self._delete(args=[self.prefix, *(_text(key) for key in keys)])
            return len(keys)
        epoch = min(dead)
        record = dead[epoch]
        data = self._epoch_prefix(str(epoch))
        # The old epoch's own index names every key it holds: walking it costs what the epoch
        # held, whatever else the Redis database holds (a SCAN would visit every key).
        cursor, rows = self.client.hscan(data + "i", int(record["cursor"]), count=self.batch_size)
        # Sets of the search layout before the suffixes: only while the epoch's ``sg`` holds
        # some (`redis_search.migrate`).
        old_layout = bool(self.client.exists(data + "sg"))
        names: set[str | bytes] = set()
        for key, raw in rows.items():
            row = json.loads(raw)
            names.add(f"{data}e:{_text(key)}")
            names.update(f"{data}t:{tag}" for tag in row["tags"])
            names.update(f"{data}{kind}:{row[field]}" for kind, field in _ROW_SETS)
            if old_layout:
                names.update(trigram_sets(data, row["url"]))
        if names:
            self.client.unlink(*names)
        if int(cursor) == 0:
            self.client.unlink(*(data + name for name in _EPOCH_KEYS))
            self.client.hdel(self._key("dead"), str(epoch))
        else:
            record["cursor"] = str(int(cursor))
            self.client.hset(self._key("dead"), str(epoch), json.dumps(record))
        return max(1, len(rows))

    def housekeeping(self, budget: float) -> int:
        """Move entries indexed by the search layout before to the suffixes
        (`redis_search.migrate`), take out the members deleted entries left
        (`redis_search.sweep`), then index the entries queued for the search index
        (`redis_search.catch_up`): up to `HOUSEKEEPING_BATCH` entries a call (``budget`` is not
        consulted: the batch is the bound; each script holds Redis a few ms); how many."""
        del budget
        with self.translate_errors("housekeeping"):
            data, client, prefix = self._data(), self.client, self.prefix
            done = migrate(client, self._migrate_search, prefix, data, HOUSEKEEPING_BATCH)
            done += sweep(client, self._sweep_search, prefix, data, HOUSEKEEPING_BATCH - done)
            left = HOUSEKEEPING_BATCH - done
            return done + catch_up(client, self._index_search, prefix, data, left)

    def announce(self, record: bytes) -> None:
        keys = [self._key("an"), self._key("ann")]
        with self.translate_errors("write"):
            self._announce(keys=keys, args=[record, ANNOUNCEMENTS_KEPT])

    def announcements(self, cursor: str | None) -> Announcements | None:
        with self.translate_errors("read"):
            return read_announcements(self.client, self._key("an"), self._key("ann"), cursor)

    def get_value(self, name: str) -> bytes | None:
        key = self._key("v:", name)
        with self.translate_errors("read"):
            value = dropping_foreign(self.client, key, lambda: self.client.get(key))
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
        ahead = getattr(self._local, "lock_ahead", None)
        if ahead is not None:
            self._local.lock_ahead = None
            if ahead[:2] == (name, owner) and time.monotonic() - ahead[3] < LOCK_AHEAD_AGE:
                return bool(ahead[2])  # just taken (or found held) by `generation_for`
        milliseconds = max(1, int(ttl * 1000))
        key = self._key("l:", name)
        with self.translate_errors("lock"):
            held = dropping_foreign(
                self.client,
                key,
                lambda: self._commands.script(self._acquire, [key], [owner, milliseconds]),
            )
        return bool(held)

    def lock_owner(self, name: str) -> str | None:
        key = self._key("l:", name)
        with self.translate_errors("lock"):
            owner = dropping_foreign(self.client, key, lambda: self.client.get(key))
        return _text(owner) if owner is not None else None

    def release_lock(self, name: str, owner: str) -> None:
        ahead = getattr(self._local, "lock_ahead", None)
        if ahead is not None and ahead[0] == name:
            self._local.lock_ahead = None
        key = self._key("l:", name)
        with self.translate_errors("lock"):
            dropping_foreign(
                self.client, key, lambda: self._commands.script(self._release, [key], [owner])
            )

    def generation(self) -> object:
        # Every request asks (a purge anywhere is seen on the very next request): one MGET on
        # this thread's own connection (`redis_commands`), the epoch in the same round trip
        # (`RedisToken`).
        self._local.lock_ahead = None  # a new request: no lock of an earlier one answers
        with self.translate_errors("generation"):
            return RedisToken(*self._commands.command("MGET", *self._generation_keys))

    def generation_for(self, key: str, lock: tuple[str, str, float] | None = None) -> object:
        """`generation` and the entry under ``key`` of the epoch read with it, in one script
        (`READ_AHEAD`), which takes ``lock`` too when there is none: this thread's first
        `get` of ``key`` with the token returned, and its next `acquire_lock` of ``lock``
        (within `LOCK_AHEAD_AGE`), are answered from it (a miss: two round trips fewer)."""
        name, owner, ttl = lock or ("", "", 0.0)
        milliseconds = max(1, int(ttl * 1000))
        arguments = [self.prefix, key, self._key("l:", name) if name else "", owner, milliseconds]
        with self.translate_errors("generation"):
            *found, taken = self._commands.script(self._read_ahead, [], arguments)
        generation, epoch, value = (item if isinstance(item, bytes) else None for item in found)
        token = RedisToken(generation, epoch)
        self._local.ahead = (token, key, value)
        known = name and int(taken) >= 0
        self._local.lock_ahead = (name, owner, taken == 1, time.monotonic()) if known else None
        return token

    def bump_generation(self) -> None:
        with self.translate_errors("generation"):
            self.client.incr(self._key("gen"))

    def clear_namespace(self) -> int:
        """Delete every key of this namespace (tests, `sitecache cache flush --all`), with
        ``UNLINK`` (`unlink_namespace`: a large value is freed without holding Redis)."""
        with self.translate_errors("clear"):
            return unlink_namespace(self.client, self.prefix)

    def close(self) -> None:
        self._commands.close()
        self.client.close()
