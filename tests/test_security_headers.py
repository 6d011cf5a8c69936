"""Security headers on every answer and the private data directory (#10 point 14)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from werkzeug.test import Client

from sitecache.app import App
from tests.conftest import AppFactory
from tests.doc_pages import REPOSITORY


@pytest.mark.parametrize(
    "path", ["/", "/no-such-page", "/login", "/site-admin/", "/logout", "/site-json/", "/favicon"]
)
def test_every_answer_says_nosniff(client: Client, path: str) -> None:
    assert client.get(path).headers["X-Content-Type-Options"] == "nosniff"


def test_a_method_not_allowed_text_answer_says_nosniff(client: Client) -> None:
    response = client.post("/")
    assert response.mimetype == "text/plain"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("path", ["/", "/no-such-page"])
def test_site_pages_may_be_framed_by_the_site_only_and_keep_referrers_short(
    client: Client, path: str
) -> None:
    headers = client.get(path).headers
    assert "frame-ancestors 'self'" in headers["Content-Security-Policy"]
    assert "object-src 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Frame-Options"] == "SAMEORIGIN"
    assert headers["Referrer-Policy"] == "strict-origin-when-cross-origin"


@pytest.mark.parametrize("path", ["/login", "/logout"])
def test_admin_pages_forbid_frames_and_scripts(app: App, path: str) -> None:
    app.auth.users.create("ada", "password", "administrator", "a@example.org")
    client = Client(app)
    client.post("/login", data={"log": "ada", "pwd": "password"})
    headers = client.get(path).headers
    policy = headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy
    assert "frame-ancestors 'none'" in policy
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Referrer-Policy"] == "same-origin"


def test_an_existing_empty_data_directory_is_made_private(
    app_factory: AppFactory, tmp_path: Path
) -> None:
    data_dir = tmp_path / "empty"
    data_dir.mkdir(mode=0o755)
    data_dir.chmod(0o755)
    app_factory(data_dir=str(data_dir))
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700


def test_a_data_directory_holding_files_keeps_its_owners_mode(
    app_factory: AppFactory, tmp_path: Path
) -> None:
    data_dir = tmp_path / "shared"
    data_dir.mkdir()
    (data_dir / "README").write_text("mine\n", encoding="utf-8")
    data_dir.chmod(0o750)
    app_factory(data_dir=str(data_dir))
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o750


@pytest.mark.parametrize("path", ["/", "/login", "/site-admin/", "/site-admin/cache"])
def test_the_docs_state_each_pages_content_security_policy(app: App, path: str) -> None:
    app.auth.users.create("ada", "password", "administrator", "a@example.org")
    client = Client(app)
    client.post("/login", data={"log": "ada", "pwd": "password"})
    policy = client.get(path).headers["Content-Security-Policy"]
    page = REPOSITORY / "docs" / "reference" / "authentication.md"
    text = " ".join(page.read_text(encoding="utf-8").split())
    assert f"`Content-Security-Policy: {policy}`" in text, (path, policy)
