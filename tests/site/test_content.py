"""The content service: storage rules and the hooks every write fires."""

from __future__ import annotations

import pytest

from sitecache.app import App
from sitecache.domain_errors import DomainError
from sitecache.site import CommentQuery, ContentService, PostQuery
from sitecache.site.migrations import CONTENT_MIGRATIONS, migrate_content
from tests.conftest import AppFactory, both_engines, rest_error_of, traceable
from tests.site.conftest import Recorder, SmallSite

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


def test_content_tables_live_in_the_users_database_with_their_own_version(app: App) -> None:
    db = app.auth.store.connection()
    for table in ("users", "posts", "terms", "term_relationships", "comments", "options"):
        assert db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] >= 0  # noqa: S608
    version = db.execute("SELECT version FROM schema_versions WHERE component = 'site'")
    assert version.fetchone()[0] == CONTENT_MIGRATIONS[-1][0]
    assert migrate_content(app.auth.store) == CONTENT_MIGRATIONS[-1][0]


def test_creating_a_post_fires_transition_then_save_post_after_commit(
    content: ContentService, recorder: Recorder
) -> None:
    seen_in_db: list[bool] = []
    content.hooks.add_action(
        "save_post", lambda post_id: seen_in_db.append(content.get_post(post_id) is not None)
    )
    post = content.create_post(title="A", status="publish")
    assert recorder.names() == ["transition_post_status", "save_post"]
    assert recorder.calls[0][1] == ("publish", "new", post)
    assert recorder.calls[1][1] == (post.id, post, False)
    assert seen_in_db == [True]


def test_updating_a_post_fires_with_the_old_status_and_update_true(
    content: ContentService, recorder: Recorder, site: SmallSite
) -> None:
    recorder.clear()
    post = content.update_post(site.draft.id, status="publish")
    assert recorder.calls[0] == ("post_updated", (post.id, post, site.draft))
    assert recorder.calls[1] == ("transition_post_status", ("publish", "draft", post))
    assert recorder.calls[2] == ("save_post", (post.id, post, True))


def test_post_updated_carries_the_terms_the_post_had_before(
    app: App, content: ContentService, recorder: Recorder, site: SmallSite
) -> None:
    recorder.clear()
    content.update_post(site.post.id, term_ids=[site.tag.id])
    _, after, before = recorder.calls[0][1]
    assert before.term_ids == (site.category.id, site.tag.id)
    assert after.term_ids == (site.tag.id,)
    assert f"term-archive-{site.category.id}" in app.site.related_tags(before)


def test_trash_is_a_status_change_and_force_delete_fires_deleted_post_with_its_terms(
    content: ContentService, recorder: Recorder, site: SmallSite
) -> None:
    recorder.clear()
    content.delete_post(site.post.id)
    assert recorder.calls[1][1][:2] == ("trash", "publish")
    with pytest.raises(DomainError) as raised:
        content.delete_post(site.post.id)
    assert raised.value.code == "rest_already_trashed"
    recorder.clear()
    content.delete_post(site.post.id, force=True)
    assert recorder.names() == ["delete_post", "deleted_post"]
    deleted = recorder.calls[1][1][1]
    assert set(deleted.term_ids) == {site.category.id, site.tag.id}
    assert content.get_post(site.post.id) is None


def test_publishing_with_a_future_date_schedules_and_due_posts_get_published(
    app: App, recorder: Recorder
) -> None:
    clock = [1_000_000.0]
    content = ContentService(app.auth.store, app.hooks, clock=lambda: clock[0])
    post = content.create_post(title="Later", status="publish", date_gmt=1_000_100)
    assert post.status == "future"
    assert content.publish_due_posts() == []
    clock[0] = 1_000_200.0
    recorder.clear()
    published = content.publish_due_posts()
    assert [p.status for p in published] == ["publish"]
    assert recorder.calls[1][1][:2] == ("publish", "future")


def test_slugs_are_unique_per_type_and_an_edit_keeps_a_revision(content: ContentService) -> None:
    first = content.create_post(title="Same title", status="publish")
    second = content.create_post(title="Same title", status="publish")
    page = content.create_post(type="page", title="Same title", status="publish")
    assert (first.slug, second.slug, page.slug) == ("same-title", "same-title-2", "same-title")
    content.update_post(first.id, content="new words")
    revisions, total = content.query_posts(
        PostQuery(types=("revision",), statuses=("inherit",), parents=(first.id,))
    )
    assert total == 2
    assert [(r.title, r.content) for r in revisions] == [
        ("Same title", "new words"),
        ("Same title", ""),
    ]
    assert content.get_revisions(first.id) == revisions


def test_invalid_statuses_and_unknown_terms_are_refused(content: ContentService) -> None:
    with pytest.raises(DomainError) as raised:
        content.create_post(title="x", status="published")
    assert raised.value.code == "rest_invalid_status"
    with pytest.raises(DomainError) as raised:
        content.create_post(title="x", term_ids=[999])
    assert raised.value.code == "rest_invalid_term_id"


def test_term_writes_fire_created_edited_and_delete_term(
    content: ContentService, recorder: Recorder
) -> None:
    term = content.create_term("post_tag", "Caching")
    assert recorder.calls[0] == ("created_term", (term.id, "post_tag"))
    post = content.create_post(title="Tagged", status="draft", term_ids=[term.id])
    recorder.clear()
    content.update_term(term.id, name="Page caching")
    content.delete_term(term.id)
    # The term as it was before the edit; the posts that carried the deleted term.
    edited, deleted = recorder.calls[:2]
    assert edited == ("edited_term", (term.id, "post_tag", term))
    assert deleted[0] == "delete_term"
    assert deleted[1][:2] == (term.id, "post_tag")
    assert deleted[1][3] == [post.id]
    assert content.get_post(post.id) is not None
    with pytest.raises(DomainError):
        content.create_term("genre", "x")


def test_the_default_category_cannot_be_deleted_and_new_posts_get_it(
    content: ContentService,
) -> None:
    default = content.create_term("category", "Uncategorized")
    content.update_option("default_category", default.id)
    post = content.create_post(title="No category")
    assert post.term_ids == (default.id,)
    with pytest.raises(DomainError) as raised:
        content.delete_term(default.id)
    assert rest_error_of(raised.value).data["status"] == 403


def test_a_first_comment_is_held_and_a_known_author_is_approved(
    content: ContentService, recorder: Recorder, site: SmallSite
) -> None:
    recorder.clear()
    first = content.add_comment(post_id=site.post.id, author_email="a@example.com", content="Hi")
    assert first.status == "hold"
    assert recorder.calls == [("comment_post", (first.id, 0))]
    recorder.clear()
    approved = content.update_comment(first.id, status="approve")
    assert recorder.calls[-1] == ("transition_comment_status", ("approve", "hold", approved))
    second = content.add_comment(post_id=site.post.id, author_email="A@example.com", content="Hi")
    assert second.status == "approve"
    content.update_option("comment_moderation", True)
    third = content.add_comment(post_id=site.post.id, author_email="a@example.com", content="x")
    assert third.status == "hold"


def test_comment_queries_count_by_status_and_post(content: ContentService, site: SmallSite) -> None:
    for status in ("approve", "approve", "hold", "spam"):
        content.add_comment(post_id=site.post.id, content="c", status=status)
    assert content.query_comments(CommentQuery(posts=(site.post.id,)))[1] == 2
    assert content.query_comments(CommentQuery(statuses=("hold", "spam")))[1] == 2
    assert content.comment_counts([site.post.id]) == {site.post.id: 2}


def test_updated_option_fires_only_on_a_change_and_bad_values_are_refused(
    content: ContentService, recorder: Recorder
) -> None:
    assert content.get_option("posts_per_page") == 10
    assert content.update_option("posts_per_page", 5) is True
    assert content.update_option("posts_per_page", 5) is False
    assert recorder.calls == [("updated_option", ("posts_per_page", 10, 5))]
    for name, value in (("posts_per_page", 0), ("timezone", "Mars/Base"), ("nope", 1)):
        with pytest.raises(DomainError):
            content.update_option(name, value)


def test_options_default_to_the_configuration(app_factory: AppFactory) -> None:
    application = app_factory(site_name="Configured", permalink_structure="")
    assert application.content.get_option("title") == "Configured"
    assert application.content.get_option("permalink_structure") == ""


def test_a_batch_is_one_transaction_whose_hooks_fire_after_commit(
    app: App, content: ContentService, recorder: Recorder
) -> None:
    statements: list[str] = []
    traceable(app.auth.store.connection()).set_trace_callback(statements.append)
    fired_inside: list[int] = []
    with content.batch():
        for number in range(5):
            content.create_post(title=f"Post {number}", status="publish")
        fired_inside.append(len(recorder.calls))
    traceable(app.auth.store.connection()).set_trace_callback(None)
    assert fired_inside == [0]
    assert len(recorder.calls) == 10
    # The five posts, their first revisions and the cache purge they owe commit in one
    # transaction; after it only the applied purge is crossed off the outbox.
    commit = statements.index("COMMIT")
    assert sum(s.startswith("BEGIN") for s in statements[:commit]) == 1
    assert sum("INSERT INTO posts" in s for s in statements[:commit]) == 10
    assert sum("'revision', 'inherit'" in s for s in statements[:commit]) == 5
    assert sum("INSERT INTO outbox" in s for s in statements[:commit]) == 1
    assert not any("INTO posts" in s or "UPDATE posts" in s for s in statements[commit:])


def test_a_failed_batch_writes_nothing_and_fires_nothing(
    content: ContentService, recorder: Recorder
) -> None:
    def write_two() -> None:
        with content.batch():
            content.create_post(title="kept?", status="publish")
            content.create_post(title="bad", status="nope")

    with pytest.raises(DomainError):
        write_two()
    assert recorder.calls == []
    assert content.query_posts(PostQuery())[1] == 0


def test_post_queries_filter_by_term_search_author_and_date(
    content: ContentService, site: SmallSite
) -> None:
    def ids(**query: object) -> list[int]:
        return [post.id for post in content.query_posts(PostQuery(**query))[0]]  # type: ignore[arg-type]

    assert ids(term_ids=(site.tag.id,)) == [site.post.id]
    assert ids(search="paragraph") == [site.post.id]
    assert ids(search="100%") == []
    assert ids(authors=(site.author,)) == [site.post.id]
    assert ids(year=2023, month=11) == [site.post.id]
    assert ids(year=2023, month=10) == []
    assert ids(types=("post", "page"), statuses=("draft",)) == [site.draft.id]


def test_the_users_layer_learns_who_has_published(app: App, site: SmallSite) -> None:
    ids = app.hooks.apply_filters("published_author_ids", set())
    assert ids == {site.author}


def test_deleting_a_user_gives_their_posts_away_or_deletes_them(
    app: App, content: ContentService, recorder: Recorder, site: SmallSite
) -> None:
    heir = app.auth.users.create("heir", "password123", "editor")
    recorder.clear()
    app.hooks.do_action("delete_user", site.author, heir.id, None)
    moved = content.get_post(site.post.id)
    assert moved is not None
    assert moved.author == heir.id
    assert ("save_post", (moved.id, moved, True)) in recorder.calls
    app.hooks.do_action("delete_user", heir.id, None, None)
    assert content.get_post(site.post.id) is None
    assert "deleted_post" in recorder.names()


def test_a_page_read_never_publishes_the_timers_holder_does(app: App) -> None:
    """#17: no write on the read path; a scheduled post is published by the timers' holder
    (each tick), its related pages purged like any other publish."""
    from werkzeug.test import Client

    now = int(app.content.now())
    post = app.content.create_post(title="Scheduled", status="publish", date_gmt=now + 3600)
    assert post.status == "future"
    app.content.update_post(post.id, date_gmt=now - 5)  # the date has come (status stays)
    forced = app.auth.store.connection()
    forced.execute("UPDATE posts SET status = 'future' WHERE id = ?", (post.id,))
    client = Client(app, use_cookies=False)
    statements: list[str] = []
    traceable(forced).set_trace_callback(statements.append)
    home = client.get("/", base_url="http://example.org")
    traceable(forced).set_trace_callback(None)
    assert b"Scheduled" not in home.data
    assert not any(s.startswith(("UPDATE", "INSERT", "DELETE")) for s in statements)
    assert app.cache_api.timers.tick() is True
    assert app.content.get_post(post.id).status == "publish"  # type: ignore[union-attr]
    assert b"Scheduled" in client.get("/", base_url="http://example.org").data
