"""Demo content: realistic, deterministic, written in one transaction; the CLI flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from werkzeug.test import Client

from sitecache import cli
from sitecache.app import App
from sitecache.auth import AuthService, PasswordHasher
from sitecache.hooks import Hooks
from sitecache.site import CommentQuery, ContentService, PostQuery
from sitecache.site.demo import fill_demo
from tests.conftest import AppFactory


def snapshot(app: App) -> list[tuple[object, ...]]:
    db = app.auth.store.connection()
    rows: list[tuple[object, ...]] = []
    for table in ("posts", "terms", "term_relationships", "comments"):
        rows += [tuple(row) for row in db.execute(f"SELECT * FROM {table} ORDER BY 1, 2")]  # noqa: S608
    return rows


def test_the_demo_is_a_realistic_site(demo_app: App) -> None:
    content = demo_app.content
    published = content.query_posts(PostQuery(per_page=1))[1]
    assert published >= 200
    for status in ("draft", "pending", "private", "future", "trash"):
        assert content.query_posts(PostQuery(statuses=(status,)))[1] > 0, status
    assert content.query_posts(PostQuery(types=("page",)))[1] >= 3
    assert content.query_comments(CommentQuery(statuses=("hold",)))[1] > 0
    assert content.query_comments(CommentQuery(statuses=("approve",)))[1] > 100
    assert len(content.published_authors()) >= 3
    counts = demo_app.auth.store.connection().execute(
        "SELECT taxonomy, COUNT(*) FROM terms GROUP BY taxonomy"
    )
    assert {row[0]: row[1] >= 5 for row in counts} == {"category": True, "post_tag": True}


def test_the_same_seed_gives_the_same_site(app_factory: AppFactory, tmp_path: Path) -> None:
    first = app_factory()
    fill_demo(first.content, first.auth.users)
    second = app_factory(data_dir=str(tmp_path / "other"))
    fill_demo(second.content, second.auth.users)
    assert snapshot(first) == snapshot(second)


def test_the_demo_is_written_in_one_transaction(app: App) -> None:
    app.auth.users.create("alice", "password123", "editor")  # authors exist: no user writes
    for login in ("bruno", "chen", "dana"):
        app.auth.users.create(login, "password123", "author")
    statements: list[str] = []
    app.auth.store.connection().set_trace_callback(statements.append)
    fill_demo(app.content, app.auth.users)
    app.auth.store.connection().set_trace_callback(None)
    assert sum(statement.startswith("BEGIN") for statement in statements) == 1
    assert sum(statement == "COMMIT" for statement in statements) == 1


def test_the_demo_site_browses(demo_client: Client) -> None:
    home = demo_client.get("/")
    assert home.status_code == 200
    link = re.search(r'<h2><a href="http://example.org(/[^"]+)">', home.get_data(as_text=True))
    assert link is not None
    assert demo_client.get(link.group(1)).headers["X-Site-Page-Type"] == "single"
    assert demo_client.get("/page/5/").status_code == 200
    assert demo_client.get("/category/performance/").status_code == 200
    assert demo_client.get("/about/team/").status_code == 200
    assert demo_client.get("/contact/team/").status_code == 404
    assert demo_client.get("/team/").status_code == 404


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for variable in ("SITECACHE_CONFIG", "SITECACHE_DATA_DIR", "SITECACHE_SITE_URL"):
        monkeypatch.delenv(variable, raising=False)
    config = tmp_path / "sitecache.toml"
    config.write_text("password_hash_cost = 1024\n", encoding="utf-8")
    monkeypatch.setenv("SITECACHE_CONFIG", str(config))
    return tmp_path / "var"


def test_init_demo_fills_the_new_site(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--data-dir", str(data_dir), "init", "--demo"]) == 0
    assert "Demo content: 255 posts" in capsys.readouterr().out
    auth = AuthService(data_dir, hasher=PasswordHasher(n=1024))
    content = ContentService(auth.store, Hooks())
    assert content.query_posts(PostQuery(per_page=1))[1] >= 200


def test_serve_demo_fills_only_a_first_start(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    launched: list[list[str]] = []
    monkeypatch.setattr(cli.os, "execve", lambda path, argv, env: launched.append(argv))
    # Port 0: hermetic, whoever listens on the default port (serve checks it can bind).
    serve = ["--data-dir", str(data_dir), "serve", "--demo", "--bind", "127.0.0.1:0"]
    cli.main(serve)
    assert "Demo content" in capsys.readouterr().out
    cli.main(serve)
    assert "Demo content" not in capsys.readouterr().out
    assert len(launched) == 2
