"""A Redis key of the wrong type in the cache's namespace: dropped, and the cache starts empty.

Another program (or an operator's ``redis-cli``) may write a key of the namespace with another
type than the backend's: Redis then answers ``WRONGTYPE`` to every command and script that
touches it, for as long as it is there. The cache is disposable: `repair` unlinks every key of
the namespace and of the current epoch whose type is not the backend's (`NAMESPACE_TYPES`,
`EPOCH_TYPES`), then, when the culprit may be one of the entries or their index (an ``e:``,
``t:``, ``u:``, ``p:`` or ``h:`` key, which are too many to check), moves to a new epoch
between two generation bumps, as a purge of everything does: every entry is a miss at once,
memory tiers forget, renders begun before are refused, and GC unlinks the old epoch's keys
(whatever their type) in slices. A named value or a lock of the wrong type is dropped where it
is read (`is_wrong_type`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import redis

__all__ = [
    "EPOCH_TYPES",
    "NAMESPACE_TYPES",
    "dropping_foreign",
    "is_wrong_type",
    "repair",
    "unlink_namespace",
]

#: The type of each key of the namespace the backend keeps (named values ``v:`` and locks
#: ``l:`` are strings, dropped where they are read).
NAMESPACE_TYPES: Final[dict[str, str]] = {
    "gen": "string",
    "ep": "string",
    "xb": "string",
    "dead": "hash",
    "c": "hash",
    "an": "stream",
    "ann": "string",
}
#: The type of each one-of-a-kind key of an epoch (entries ``e:`` are strings; ``t:``, ``u:``,
#: ``p:``, ``h:`` sets).
EPOCH_TYPES: Final[dict[str, str]] = {
    "i": "hash",
    "tot": "hash",
    "byc": "zset",
    "bye": "zset",
    "bxp": "zset",
    "sq": "set",
    "su": "hash",
    "sd": "hash",
    "sx": "zset",
    "sg": "hash",
}
#: The namespace keys whose loss leaves the entries as they are (counters, announcements).
_APART_FROM_ENTRIES: Final = frozenset({"c", "an", "ann"})


def is_wrong_type(error: BaseException) -> bool:
    """Whether ``error`` is Redis refusing a command on a key of another type."""
    return isinstance(error, redis.ResponseError) and "WRONGTYPE" in str(error)


def _wrong(client: Any, prefix: str, types: dict[str, str]) -> list[str]:
    """The names of ``types`` whose key under ``prefix`` exists with another type."""
    pipe = client.pipeline(transaction=False)
    for name in types:
        pipe.type(prefix + name)
    found = pipe.execute()
    return [
        name
        for name, kind in zip(types, found, strict=True)
        if (kind.decode() if isinstance(kind, bytes) else str(kind)) not in ("none", types[name])
    ]


def repair(
    client: Any, prefix: str, epoch_prefix: Callable[[], str], invalidate: Callable[[], object]
) -> tuple[list[str], bool]:
    """Unlink the keys of the wrong type in the namespace ``prefix`` and in its current epoch
    (``epoch_prefix()`` names it, read once the namespace's own keys are sound), then, unless
    only counters or announcements were wrong, ``invalidate()`` between two bumps of the
    generation (the cache starts empty): the names of the keys dropped, and whether the cache
    was emptied.

    Raises:
        redis.RedisError: Redis failed meanwhile.
    """
    dropped = [prefix + name for name in _wrong(client, prefix, NAMESPACE_TYPES)]
    if dropped:
        client.unlink(*dropped)
    data = epoch_prefix()
    in_epoch = [data + name for name in _wrong(client, data, EPOCH_TYPES)]
    if in_epoch:
        client.unlink(*in_epoch)
    dropped += in_epoch
    names = {name.removeprefix(prefix) for name in dropped}
    emptied = not dropped or not names <= _APART_FROM_ENTRIES
    if emptied:
        client.incr(prefix + "gen")
        invalidate()
        client.incr(prefix + "gen")
    return dropped, emptied


def dropping_foreign(client: Any, key: str, command: Callable[[], Any]) -> Any:
    """``command()``, run again once after unlinking ``key`` when it held another type (a
    named value or a lock another program wrote: dropped).

    Raises:
        redis.RedisError: Redis failed otherwise.
    """
    try:
        return command()
    except redis.ResponseError as exc:
        if not is_wrong_type(exc):
            raise
    client.unlink(key)
    return command()


def unlink_namespace(client: Any, prefix: str) -> int:
    """Delete every key under ``prefix`` (`RedisStorage.clear_namespace`), 500 at a time;
    how many went. ``UNLINK``: Redis frees a large value in the background."""
    removed = 0
    batch: list[bytes] = []
    for key in client.scan_iter(match=f"{prefix}*", count=1000):
        batch.append(key)
        if len(batch) >= 500:
            removed += int(client.unlink(*batch))
            batch = []
    if batch:
        removed += int(client.unlink(*batch))
    return removed
