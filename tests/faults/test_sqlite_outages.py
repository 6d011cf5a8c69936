"""The SQLite site store failing (#29 rows 2 and 6): locked by another process past the busy
timeout (503 ``site_unavailable``), and on a disk that is full (507 ``site_storage_full``, a
real tmpfs filled to its last byte). Each refusal is a JSON error with ``Retry-After`` over
REST and the site's message page for the comment form, nothing is half-written, and the same
writes succeed once the lock is released or space is freed.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from PIL import Image
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from tests.auth.conftest import basic, client_for
from tests.conftest import AppFactory
from tests.faults.conftest import TmpfsFactory

HOME = "http://example.org"
POSTS = "/site-json/site/v2/posts"
#: The busy timeout of these tests' sites (seconds): short, the behaviour is the same.
BUSY_TIMEOUT = 1.0


class Admin:
    """An application's administrator over REST (HTTP Basic, an application password), and a
    visitor posting the comment form."""

    def __init__(self, app: App) -> None:
        self.app = app
        user = app.auth.users.create("boss", "password123", "administrator", "boss@example.org")
        password, _ = app.auth.app_passwords.create(user, "tests")
        self.headers = basic("boss", password)
        self.client: Client = client_for(app)

    def call(self, method: str, path: str, body: Any = None) -> TestResponse:
        return self.client.open(path, method=method, headers=self.headers, json=body)

    def create(self, title: str) -> TestResponse:
        return self.call("POST", POSTS, {"title": title, "status": "publish"})

    def comment_form(self, post_id: int) -> TestResponse:
        return self.client.post(
            "/comment-post",
            base_url=HOME,
            headers={"Origin": HOME},
            data={
                "comment_post_ID": str(post_id),
                "author": "Ann",
                "email": "ann@example.org",
                "comment": "Hello",
            },
        )

    def upload(self) -> TestResponse:
        buffer = io.BytesIO()
        Image.new("RGB", (64, 64), "red").save(buffer, "PNG")
        return self.client.post(
            "/site-json/site/v2/media",
            headers=self.headers,
            data={"file": (io.BytesIO(buffer.getvalue()), "red.png", "image/png")},
        )

    def count(self, table: str) -> int:
        connection = self.app.auth.store.connection()
        return int(connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608


def _refused(response: TestResponse, status: int, code: str) -> None:
    """A JSON refusal: ``code``, a message, ``data.status``, and ``Retry-After``."""
    assert response.status_code == status, response.text
    assert response.json is not None
    assert response.json["code"] == code
    assert response.json["message"]
    assert response.json["data"]["status"] == status
    assert int(response.headers["Retry-After"]) > 0


def _refused_page(response: TestResponse, status: int) -> None:
    """The site's message page with ``status`` and ``Retry-After``, never stored."""
    assert response.status_code == status, response.text
    assert response.mimetype == "text/html"
    assert int(response.headers["Retry-After"]) > 0
    assert "no-store" in response.headers["Cache-Control"]


# ---------------------------------------------------------------------- locked
_HOLD = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
connection.execute("INSERT INTO options (name, value) VALUES ('held', '1')")
print("locked", flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def write_lock(database: Path) -> Iterator[None]:
    """Another process holding ``database``'s write lock (an open write transaction) for
    the block's duration."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(database)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.communicate("", timeout=30)  # released (the transaction rolls back)


def test_a_database_locked_past_the_busy_timeout_answers_503(app_factory: AppFactory) -> None:
    app = app_factory(database_busy_timeout=BUSY_TIMEOUT)
    admin = Admin(app)
    post_id = int(admin.create("before").json["id"])  # type: ignore[index]
    with write_lock(app.auth.store.path):
        before = admin.count("posts")
        started = time.monotonic()
        _refused(admin.create("during"), 503, "site_unavailable")
        waited = time.monotonic() - started
        assert BUSY_TIMEOUT * 0.8 <= waited < BUSY_TIMEOUT + 2, waited
        _refused_page(admin.comment_form(post_id), 503)
        # Readers are not blocked by a writer (WAL).
        assert admin.client.get(f"{POSTS}/{post_id}").status_code == 200
        assert admin.count("posts") == before
    assert admin.create("after").status_code == 201
    assert admin.comment_form(post_id).status_code == 302


# ---------------------------------------------------------------------- disk full
def test_a_full_disk_answers_507_and_keeps_nothing_half_written(
    app_factory: AppFactory, tmpfs: TmpfsFactory
) -> None:
    disk = tmpfs("data", "24m")
    # The page cache in memory: this row is about the site's own store on a full disk.
    app = app_factory(data_dir=str(disk.path / "var"), cache_backend="memory")
    admin = Admin(app)
    post_id = int(admin.create("first").json["id"])  # type: ignore[index]
    posts, comments = admin.count("posts"), admin.count("comments")
    filler = disk.fill()
    created = 0
    refused: list[TestResponse] = []
    for index in range(100):  # the WAL may still hold room for a few small writes
        response = admin.create(f"full-{index}")
        if response.status_code == 201:
            created += 1
            continue
        refused.append(response)
        if len(refused) >= 3:
            break
    assert refused, "no write was refused on a full disk"
    for response in refused:
        _refused(response, 507, "site_storage_full")
    assert admin.count("posts") == posts + created  # each write whole, or not at all
    _refused_page(admin.comment_form(post_id), 507)
    assert admin.count("comments") == comments
    upload = admin.upload()
    _refused(upload, 507, "site_storage_full")
    uploads = disk.path / "var" / "uploads"
    leftovers = [path for path in uploads.rglob("*") if path.is_file()] if uploads.exists() else []
    assert leftovers == []
    filler.unlink()  # space is freed: the same writes succeed
    assert admin.create("after").status_code == 201
    assert admin.comment_form(post_id).status_code == 302
    assert admin.upload().status_code == 201
    assert app.auth.store.integrity_check() == "ok"


def test_the_data_directory_on_a_full_disk_still_starts(
    app_factory: AppFactory, tmpfs: TmpfsFactory
) -> None:
    """A full disk is no reason to refuse to start (a read-only one is): the site starts and
    answers reads, and its writes are refused with 507 until space is freed."""
    disk = tmpfs("data", "24m")
    data_dir = disk.path / "var"
    first = app_factory(data_dir=str(data_dir), cache_backend="memory")
    Admin(first)
    first.close()
    filler = disk.fill()
    app = app_factory(data_dir=str(data_dir), cache_backend="memory")
    client = client_for(app)
    read = client.get(POSTS)
    if read.status_code != 200:  # no room even to open the database: a 503, not a 500
        _refused(read, 503, "site_unavailable")
    filler.unlink()
    assert client.get(POSTS).status_code == 200
