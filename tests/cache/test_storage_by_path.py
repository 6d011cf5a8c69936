"""``cache_backend = "package.module:factory"``: a third-party storage chosen by its dotted path,
checked when the configuration is read and when the factory's storage comes back."""

from __future__ import annotations

from pathlib import Path

import pytest
from werkzeug.test import Client

from sitecache.cache import MemoryStorage, Storage, StorageError, StorageOptions, open_storage
from sitecache.cache.storage.opening import missing_members
from sitecache.config import ConfigError, load_config
from tests.conftest import AppFactory

HERE = "tests.cache.test_storage_by_path"


class WrappedMemory(MemoryStorage):
    """A third-party backend as a stranger would write one: the memory storage under its own
    name, keeping what it was opened with."""

    backend = "wrapped-memory"

    def __init__(self, options: StorageOptions) -> None:
        super().__init__()
        self.options = options


def wrapped_memory(options: StorageOptions) -> Storage:
    """The factory ``cache_backend`` names."""
    return WrappedMemory(options)


def not_a_storage(options: StorageOptions) -> object:
    """A factory that returns something else than a storage."""
    return {"get": None}


def broken_factory(options: StorageOptions) -> Storage:
    """A factory whose store cannot be reached."""
    raise ConnectionRefusedError(111, "Connection refused")


NOT_CALLABLE = 42


def test_the_site_caches_its_pages_in_the_storage_the_factory_returns(
    app_factory: AppFactory, tmp_path: Path
) -> None:
    app = app_factory(cache_backend=f"{HERE}:wrapped_memory", cache_namespace="blog")
    client = Client(app, use_cookies=False)
    assert client.get("/", base_url="http://example.org").headers["Cache-Status"].endswith("stored")
    hit = client.get("/", base_url="http://example.org")
    assert hit.headers["Cache-Status"].startswith("sitecache; hit")
    storage = app.cache.engine.storage
    assert isinstance(storage, WrappedMemory)
    assert storage.summary(0).total == 1
    # What the built-in backends get: the disk cache's directory, the Redis URL, the namespace.
    assert storage.options == StorageOptions(
        path=tmp_path / "var" / "cache", redis_url="redis://127.0.0.1:6379/0", namespace="blog"
    )
    assert app.cache.engine.backend == "wrapped-memory"


def test_the_built_in_backends_and_a_dotted_path_are_accepted() -> None:
    for backend in ("disk", "memory", "redis", f"{HERE}:wrapped_memory"):
        assert load_config({"cache_backend": backend}).cache_backend == backend


@pytest.mark.parametrize(
    ("backend", "problem"),
    [
        (
            "tests.no_such_module:factory",
            "cache_backend 'tests.no_such_module:factory' cannot be used: there is no module "
            "'tests.no_such_module'",
        ),
        (
            f"{HERE}:no_such_factory",
            f"cache_backend '{HERE}:no_such_factory' cannot be used: the module '{HERE}' has no "
            "attribute 'no_such_factory'",
        ),
        (
            f"{HERE}:NOT_CALLABLE",
            f"cache_backend '{HERE}:NOT_CALLABLE' cannot be used: {HERE}:NOT_CALLABLE is not "
            "callable (its type is int)",
        ),
        (
            "Redis",
            "cache_backend must be one of disk, memory or redis, or package.module:factory "
            "(a third-party storage) (got 'Redis')",
        ),
        (
            "my backend:factory",
            "cache_backend must be one of disk, memory or redis, or package.module:factory "
            "(a third-party storage) (got 'my backend:factory')",
        ),
    ],
)
def test_a_backend_that_cannot_be_used_is_a_configuration_error_in_words(
    backend: str, problem: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config({"site_ulr": "https://example.org", "cache_backend": backend})
    # Listed with the configuration's other problems, in the order of the keys.
    assert str(refused.value) == (
        f"invalid configuration: site_ulr is not a setting: did you mean `site_url`?; {problem}"
    )


def test_a_factory_that_returns_no_storage_names_what_it_lacks() -> None:
    with pytest.raises(StorageError) as refused:
        open_storage(f"{HERE}:not_a_storage")
    message = str(refused.value)
    assert message.startswith(f"cache backend '{HERE}:not_a_storage' returned a dict, not a")
    assert "it lacks " in message
    for member in ("announce", "backend", "generation", "get", "location", "put"):
        assert member in message


def test_a_factory_that_fails_is_a_storage_error_and_the_site_does_not_start(
    app_factory: AppFactory,
) -> None:
    with pytest.raises(StorageError) as failed:
        open_storage(f"{HERE}:broken_factory")
    assert str(failed.value) == (
        f"cache backend '{HERE}:broken_factory' failed to open: ConnectionRefusedError: "
        "[Errno 111] Connection refused"
    )
    with pytest.raises(ConfigError) as refused:
        app_factory(cache_backend=f"{HERE}:broken_factory")
    assert "the page cache cannot start: cache backend" in str(refused.value)


def test_every_built_in_backend_has_every_member_of_the_protocol(tmp_path: Path) -> None:
    memory = MemoryStorage()
    disk = open_storage("disk", path=tmp_path / "cache")
    try:
        assert missing_members(memory) == []
        assert missing_members(disk) == []
        assert "get" in missing_members(object())
    finally:
        memory.close()
        disk.close()


def test_an_unknown_word_is_refused_by_open_storage() -> None:
    with pytest.raises(StorageError, match=r"memory, disk, redis or package.module:factory"):
        open_storage("memcached")
