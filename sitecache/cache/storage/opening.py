"""Opening the storage a configuration names: a built-in backend (``memory``, ``disk``,
``redis``) or a third-party one named by its dotted path, ``package.module:factory``, as
Django picks a cache backend.

A factory is called with the `StorageOptions` the built-in backends are opened with (the disk
cache's directory, the Redis URL, the site's namespace) and returns a `Storage`: a subclass of
`StorageBase` (which builds the composite operations on a few primitives) or any object with
every member of the protocol. What it returns is checked here, so a factory that returns
something else is one line naming what is missing, not a failure of the first request.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from sitecache.cache.storage.base import Storage, StorageError
from sitecache.cache.storage.disk import DiskStorage
from sitecache.cache.storage.memory import MemoryStorage
from sitecache.dotted_paths import import_dotted, is_dotted_path

__all__ = [
    "BUILT_IN_BACKENDS",
    "StorageFactory",
    "StorageOptions",
    "missing_members",
    "open_storage",
]

#: The backends named by a word; any other ``cache_backend`` is a dotted path.
BUILT_IN_BACKENDS: Final = ("memory", "disk", "redis")
#: Where a Redis backend connects when no URL is given.
DEFAULT_REDIS_URL: Final = "redis://127.0.0.1:6379/0"


@dataclass(frozen=True, slots=True)
class StorageOptions:
    """What a storage is opened with: the built-in backends and a third-party factory get the
    same values."""

    #: the directory of a store kept in files (``<data_dir>/cache`` for a site); ``None`` when
    #: the caller named none
    path: Path | None = None
    #: the configured ``redis_url`` (a third-party store may ignore it, or read its own
    #: settings from it)
    redis_url: str = DEFAULT_REDIS_URL
    #: the site's cache namespace: a store several sites share keeps their entries apart by it
    namespace: str = "default"


class StorageFactory(Protocol):
    """A third-party backend's factory, named by ``cache_backend = "package.module:factory"``."""

    def __call__(self, options: StorageOptions, /) -> Storage:
        """A new, open storage for ``options``.

        Raises:
            StorageError: it cannot be opened (any other exception is reported as one).
        """


def missing_members(storage: object) -> list[str]:
    """The members of the `Storage` protocol ``storage`` lacks, in alphabetical order."""
    names: set[str] = set()
    for klass in Storage.__mro__:
        if klass is object or klass is Protocol or klass.__module__ == "typing":
            continue
        names.update(name for name in vars(klass) if not name.startswith("_"))
        names.update(getattr(klass, "__annotations__", {}))
    return sorted(name for name in names if not hasattr(storage, name))


def open_storage(
    backend: str,
    *,
    path: str | Path | None = None,
    redis_url: str | None = None,
    namespace: str = "default",
) -> Storage:
    """The backend named ``backend``: ``memory``, ``disk`` (needs ``path``), ``redis`` (at
    ``redis_url``, in ``namespace``), or ``package.module:factory``, called with these values
    as `StorageOptions`.

    Raises:
        StorageError: the backend is unknown, its factory cannot be found, fails or returns no
            storage, or the storage cannot be opened.
    """
    if backend == "memory":
        return MemoryStorage()
    if backend == "disk":
        if path is None:
            raise StorageError("the disk cache needs a directory")
        return DiskStorage(path)
    if backend == "redis":
        from sitecache.cache.storage.redis import RedisStorage  # redis-py only when used

        return RedisStorage(redis_url or DEFAULT_REDIS_URL, namespace)
    if is_dotted_path(backend):
        options = StorageOptions(
            path=Path(path) if path is not None else None,
            redis_url=redis_url or DEFAULT_REDIS_URL,
            namespace=namespace,
        )
        return _third_party(backend, options)
    raise StorageError(
        f"unknown cache backend {backend!r} (memory, disk, redis or package.module:factory)"
    )


def _third_party(backend: str, options: StorageOptions) -> Storage:
    """The storage the factory ``backend`` names makes for ``options``, checked.

    Raises:
        StorageError: see `open_storage`.
    """
    try:
        factory: Any = import_dotted(backend)
    except LookupError as exc:
        raise StorageError(f"cache backend {backend!r} cannot be used: {exc}") from exc
    if not callable(factory):
        raise StorageError(f"cache backend {backend!r} is not callable")
    try:
        storage = factory(options)
    except StorageError:
        raise
    except Exception as exc:  # a stranger's code: whatever it raised, said on one line
        raise StorageError(
            f"cache backend {backend!r} failed to open: {type(exc).__name__}: {exc}"
        ) from exc
    missing = missing_members(storage)
    if missing:
        close = getattr(storage, "close", None)
        if callable(close):
            close()
        raise StorageError(
            f"cache backend {backend!r} returned a {type(storage).__name__}, not a storage: "
            f"it lacks {', '.join(missing)}"
        )
    return storage  # type: ignore[no-any-return]
