"""Demo content: realistic, deterministic, written in one transaction; the CLI flags."""

from __future__ import annotations

import re
from contextlib import nullcontext
from pathlib import Path

import pytest
from werkzeug.test import Client

from sitecache import cli
from sitecache.app import App
from sitecache.auth import AuthService, PasswordHasher
from sitecache.hooks import Hooks
from sitecache.site import CommentQuery, ContentService, PostQuery
from sitecache.site.demo import fill_demo
from tests.conftest import AppFactory, traceable
from tests.e2e.server import free_port


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
    traceable(app.auth.store.connection()).set_trace_callback(statements.append)
    fill_demo(app.content, app.auth.users)
    traceable(app.auth.store.connection()).set_trace_callback(None)
    # Every content write commits once; after it only the applied cache purge (written to the
    # outbox in that same transaction) is crossed off.
    commit = statements.index("COMMIT")
    assert sum(statement.startswith("BEGIN") for statement in statements[:commit]) == 1
    assert sum("INSERT INTO outbox" in statement for statement in statements[:commit]) == 1
    after = statements[commit + 1 :]
    assert all(
        statement.startswith(("BEGIN", "COMMIT", "SELECT", "DELETE FROM outbox"))
        for statement in after
    ), after


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


@pytest.mark.usefixtures("port_8000_taken")
def test_serve_demo_fills_only_a_first_start(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # #16: without --bind this probed :8000 and failed whenever `make run` was running.
    launched: list[list[str]] = []
    monkeypatch.setattr(
        "sitecache.cli.serve.os.execve", lambda path, argv, env: launched.append(argv)
    )
    monkeypatch.setattr("sitecache.cli.users.user_terminal", lambda: nullcontext(None))
    bind = f"127.0.0.1:{free_port()}"
    cli.main(["--data-dir", str(data_dir), "serve", "--demo", "--bind", bind])
    assert "Demo content" in capsys.readouterr().out
    cli.main(["--data-dir", str(data_dir), "serve", "--demo", "--bind", bind])
    assert "Demo content" not in capsys.readouterr().out
    assert len(launched) == 2


def test_the_demo_about_page_shows_blocks(demo_app: App, demo_client: Client) -> None:
    about = demo_app.content.get_post_by_slug("page", "about")
    assert about is not None
    response = demo_client.get("/about/", base_url="http://example.org")
    text = response.get_data(as_text=True)
    for css in ("wp-block-search", "wp-block-latest-posts", "wp-block-tag-cloud",
                "wp-block-archives"):  # fmt: skip
        assert css in text
    tags = str(response.headers["Cache-Tag"]).split(",")
    assert {"post-list", "term-list-post_tag"} <= set(tags)
