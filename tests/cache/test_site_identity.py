"""One site identity (#16): the Redis namespace the server, its workers and the command line
share, persisted in the data directory, never derived from a bind address."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from sitecache import cli
from sitecache.cache.deployment import IDENTITY_FILE, cache_namespace, site_identity
from sitecache.cache.storage import StorageError


def test_the_identity_is_created_once_and_read_back(tmp_path: Path) -> None:
    first = site_identity(tmp_path)
    assert first.startswith("site-")
    assert (tmp_path / IDENTITY_FILE).read_text(encoding="ascii").strip() == first
    assert site_identity(tmp_path) == first
    # A site_url configured later does not change the identity.
    assert site_identity(tmp_path, "https://example.org") == first


def test_a_configured_site_url_names_a_new_identity(tmp_path: Path) -> None:
    assert site_identity(tmp_path, "https://www.example.org:8443") == "www.example.org_8443"


def test_a_configured_namespace_wins(tmp_path: Path) -> None:
    assert cache_namespace(tmp_path, None, "shop") == "shop"
    assert not (tmp_path / IDENTITY_FILE).exists()
    assert cache_namespace(tmp_path, None) == site_identity(tmp_path)


def test_processes_starting_together_agree_on_one_identity(tmp_path: Path) -> None:
    found: list[str] = []
    barrier = threading.Barrier(8)

    def start() -> None:
        barrier.wait()
        found.append(site_identity(tmp_path))

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(found)) == 1
    assert [p.name for p in tmp_path.iterdir()] == [IDENTITY_FILE]  # no temporary file left


def test_no_identity_without_a_data_directory(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="run `sitecache init` first"):
        site_identity(tmp_path / "missing")


def test_a_broken_identity_file_is_an_error_not_a_new_cache(tmp_path: Path) -> None:
    (tmp_path / IDENTITY_FILE).write_text("not a valid name!\n", encoding="ascii")
    with pytest.raises(StorageError, match="not a valid name"):
        site_identity(tmp_path)


def test_serve_persists_the_identity_before_deriving_site_url_from_bind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before #16: serve keyed Redis under 127.0.0.1_8000, the command line under "default".
    from tests.e2e.server import free_port

    for name in ("SITECACHE_CONFIG", "SITECACHE_DATA_DIR", "SITECACHE_SITE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "sitecache.toml"
    config.write_text('password_hash_cost = 1024\ncache_backend = "redis"\n', encoding="utf-8")
    environments: list[dict[str, str]] = []
    monkeypatch.setattr(
        "sitecache.cli.serve.os.execve", lambda path, argv, env: environments.append(env)
    )
    data_dir = tmp_path / "var"
    port = free_port()
    options = ["--config", str(config), "--data-dir", str(data_dir)]
    assert cli.main([*options, "serve", "--bind", f"127.0.0.1:{port}"]) is None
    assert environments[0]["SITECACHE_SITE_URL"] == f"http://127.0.0.1:{port}"
    identity = (data_dir / IDENTITY_FILE).read_text(encoding="ascii").strip()
    assert identity.startswith("site-")
    # What the workers and the command line compute: the same name.
    assert cache_namespace(data_dir, environments[0]["SITECACHE_SITE_URL"]) == identity
    assert cache_namespace(data_dir, None) == identity


def test_init_persists_the_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SITECACHE_CONFIG", "SITECACHE_DATA_DIR", "SITECACHE_SITE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "sitecache.toml"
    config.write_text(
        'password_hash_cost = 1024\nsite_url = "https://example.org"\n', encoding="utf-8"
    )
    assert cli.main(["--config", str(config), "--data-dir", str(tmp_path / "var"), "init"]) == 0
    assert (tmp_path / "var" / IDENTITY_FILE).read_text(encoding="ascii") == "example.org\n"
