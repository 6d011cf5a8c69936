"""The Redis backend's request path: one connection per thread, each command sent in one piece.

Every request reads the purge generation, and a hit reads one entry, a miss writes one and takes
a lock (`sitecache.cache.storage.redis.RedisStorage`). Through `redis.Redis.execute_command`
each would spend as much Python time again on the pool checkout, the retry wrapper and the
instrumentation, and a large value would leave in three writes. `ThreadCommands` keeps a
connection of each thread's own (a new one after a fork) and sends each command as one write.

A connection that went stale while idle (Redis restarted, an idle timeout) is retried once on
a fresh one, so every command sent here may run twice: a read, a put (the same entry) or a
lock of the same owner gives the same result. A timeout is not retried: a hung Redis costs
one timeout, then the circuit breaker (`sitecache.cache.storage.breaker`) opens.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import redis

__all__ = ["ThreadCommands"]


class ThreadCommands:
    """Commands and registered Lua scripts on this thread's own connection of ``client``'s
    pool settings (see the module docstring)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._local = threading.local()

    def connection(self) -> Any:
        """This thread's own connection (a new one after a fork)."""
        local = self._local
        pid = os.getpid()
        connection = getattr(local, "connection", None)
        if connection is None or local.pid != pid:
            pool = self.client.connection_pool
            connection = pool.connection_class(**pool.connection_kwargs)
            local.connection = connection
            local.pid = pid
        return connection

    def command(self, *args: str | bytes | int) -> Any:
        """Redis's reply to one command, retried once on a fresh connection when the
        connection was stale.

        Raises:
            redis.RedisError: Redis failed or refused the command, or timed out.
        """
        connection = self.connection()
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

    def script(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """Run a registered Lua script by its digest (`command`); loaded first when Redis
        does not know it (a restart, ``SCRIPT FLUSH``).

        Raises:
            redis.RedisError: Redis failed or refused the script.
        """
        try:
            return self.command("EVALSHA", script.sha, len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:
            return script(keys=keys, args=args)

    def close(self) -> None:
        """Disconnect this thread's connection (one made before a fork belongs to the
        parent, and is left to it)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid == os.getpid():
            connection.disconnect()
        self._local.connection = None
