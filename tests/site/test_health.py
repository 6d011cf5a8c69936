"""Site health: each test's verdicts, the routes' permissions and the directory sizes."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App, create_app
from sitecache.auth.app_passwords import ApplicationPasswordPolicy
from sitecache.auth.store import SiteStore
from sitecache.cache.health_probe import probe_storage
from sitecache.cache.storage import MemoryStorage
from sitecache.site.health import (
    HEALTH_TESTS,
    HealthInputs,
    directory_sizes,
    key_entropy_bits,
    run_health_test,
)


@pytest.fixture
def app(tmp_path: Path) -> App:
    return create_app(
        {
            "data_dir": str(tmp_path / "var"),
            "site_url": "https://example.org",
            "password_hash_cost": 1024,
            "cache_timers": False,
            "application_passwords": "on",
        }
    )


def _basic(app: App, role: str) -> dict[str, str]:
    user = app.auth.users.create(role, "password123", role)
    password, _ = app.auth.app_passwords.create(user, "tests", "")
    token = base64.b64encode(f"{role}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def _inputs(tmp_path: Path, **changes: Any) -> HealthInputs:
    store = SiteStore(tmp_path / "site.db")
    base = HealthInputs(
        data_dir=tmp_path,
        store=store,
        key=os.urandom(32),
        key_path=None,
        debug=False,
        app_passwords=ApplicationPasswordPolicy("auto"),
        home_url="https://example.org",
    )
    return dataclasses.replace(base, **changes)


def test_the_routes_are_for_administrators_only(app: App) -> None:
    client = Client(app)
    admin = _basic(app, "administrator")
    editor = _basic(app, "editor")
    listing = client.get("/site-json/site/v2/site-health/tests", headers=admin)
    assert listing.status_code == 200
    names = [item["test"] for item in json.loads(listing.get_data(as_text=True))]
    assert names == list(HEALTH_TESTS)
    for path in ("tests", "tests/database-integrity", "directory-sizes"):
        url = f"/site-json/site/v2/site-health/{path}"
        assert client.get(url).status_code == 401
        assert client.get(url, headers=editor).status_code == 403
    answer = json.loads(
        client.get("/site-json/site/v2/site-health/tests/cache-storage", headers=admin).get_data(
            as_text=True
        )
    )
    assert answer["test"] == "cache-storage"
    assert answer["status"] == "good"
    assert set(answer) >= {"label", "status", "badge", "description", "actions"}


def test_every_test_of_a_healthy_app_is_good_over_https(app: App) -> None:
    environ = {"wsgi.url_scheme": "https", "REMOTE_ADDR": "203.0.113.9"}
    inputs = app.health_inputs()
    for name in HEALTH_TESTS:
        assert run_health_test(name, inputs, environ)["status"] == "good", name


def test_plain_http_is_recommended_against(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    assert run_health_test("https-status", inputs, {"wsgi.url_scheme": "http"})["status"] == (
        "recommended"
    )
    http_home = _inputs(tmp_path, home_url="http://example.org")
    verdict = run_health_test("https-status", http_home, {"wsgi.url_scheme": "https"})
    assert verdict["status"] == "recommended"


def test_an_unwritable_data_directory_is_critical(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path, data_dir=tmp_path / "missing")
    assert run_health_test("data-directory-writable", inputs, {})["status"] == "critical"
    assert not list(tmp_path.glob(".health-*"))
    assert run_health_test("data-directory-writable", _inputs(tmp_path), {})["status"] == "good"
    assert not list(tmp_path.glob(".health-*"))


def test_a_damaged_database_is_critical(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    assert run_health_test("database-integrity", inputs, {})["status"] == "good"

    class Broken:
        engine = "sqlite"

        def integrity_check(self) -> str:
            return "*** in database main *** Page 3 is never used"

    broken = dataclasses.replace(inputs, store=Broken())  # type: ignore[arg-type]
    verdict = run_health_test("database-integrity", broken, {})
    assert verdict["status"] == "critical"
    assert "Page 3" in verdict["description"]


@pytest.mark.parametrize(
    ("key", "mode", "status"),
    [
        (b"short", 0o600, "critical"),
        (b"a" * 64, 0o600, "critical"),
        (None, 0o644, "recommended"),
        (None, 0o600, "good"),
    ],
)
def test_the_secret_key_strength_and_file_mode(
    tmp_path: Path, key: bytes | None, mode: int, status: str
) -> None:
    secret = key if key is not None else os.urandom(32)
    path = tmp_path / "secret.key"
    path.write_bytes(secret)
    path.chmod(mode)
    inputs = _inputs(tmp_path, key=secret, key_path=path)
    assert run_health_test("secret-key", inputs, {})["status"] == status


def test_key_entropy_counts_repeated_bytes_as_nothing() -> None:
    assert key_entropy_bits(b"a" * 64) == 0
    assert key_entropy_bits(bytes(range(32))) == pytest.approx(160)


def test_debug_and_application_passwords(tmp_path: Path) -> None:
    assert run_health_test("debug-off", _inputs(tmp_path, debug=True), {})["status"] == (
        "recommended"
    )
    off = _inputs(tmp_path, app_passwords=ApplicationPasswordPolicy("off"))
    assert run_health_test("application-passwords", off, {})["status"] == "recommended"
    auto = _inputs(tmp_path)
    remote = {"wsgi.url_scheme": "http", "REMOTE_ADDR": "203.0.113.9"}
    assert run_health_test("application-passwords", auto, remote)["status"] == "recommended"
    local = {"wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1"}
    assert run_health_test("application-passwords", auto, local)["status"] == "good"


def test_the_cache_probe_round_trips_and_reports_failures(tmp_path: Path) -> None:
    storage = MemoryStorage()
    assert probe_storage(storage) is None
    failing = _inputs(tmp_path, cache_probe=lambda: "connection refused", storage_name="redis")
    verdict = run_health_test("cache-storage", failing, {})
    assert verdict["status"] == "critical"
    assert "connection refused" in verdict["description"]


def test_static_root_problems_are_critical_and_off_is_good(tmp_path: Path) -> None:
    assert run_health_test("static-root-readable", _inputs(tmp_path), {})["status"] == "good"
    bad = _inputs(tmp_path, static_check=lambda: ["/srv is not searchable by www-data"])
    verdict = run_health_test("static-root-readable", bad, {})
    assert verdict["status"] == "critical"
    assert "www-data" in verdict["description"]


def test_directory_sizes_count_files_and_stop_at_the_limit(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "a").write_bytes(b"x" * 10)
    (data / "sub" / "b").write_bytes(b"y" * 5)
    inputs = _inputs(tmp_path, data_dir=data, uploads_dir=tmp_path / "none")
    sizes = directory_sizes(inputs)
    assert sizes["data_dir"] == {"path": str(data), "size": 15, "files": 2, "truncated": False}
    assert sizes["uploads_dir"]["size"] is None
    assert directory_sizes(inputs, limit=1)["data_dir"]["truncated"] is True
