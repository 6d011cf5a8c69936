"""Revisions and autosaves of posts and pages: storage, the ``site/v2`` routes, the cache."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client, TestResponse

from sitecache.app import App, create_app
from sitecache.site import ContentService, Post
from tests.conftest import AppFactory, both_engines

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


ROLES = ("administrator", "editor", "author", "contributor", "subscriber")


@dataclass
class Site:
    app: App
    client: Client
    headers: dict[str, dict[str, str]]
    users: dict[str, int]
    post: Post
    page: Post
    draft: Post

    def call(
        self, method: str, path: str, role: str | None = None, data: Any = None
    ) -> TestResponse:
        headers = dict(self.headers[role]) if role else {}
        if data is not None:
            headers["Content-Type"] = "application/json"
        return self.client.open(
            f"/site-json/site/v2{path}",
            method=method,
            headers=headers,
            data=json.dumps(data) if data is not None else None,
        )


def make_site(app: App) -> Site:
    headers: dict[str, dict[str, str]] = {}
    users: dict[str, int] = {}
    for role in ROLES:
        user = app.auth.users.create(role, "password123", role)
        password, _ = app.auth.app_passwords.create(user, "tests", "")
        token = base64.b64encode(f"{role}:{password}".encode()).decode()
        headers[role] = {"Authorization": f"Basic {token}"}
        users[role] = user.id
    content = app.content
    post = content.create_post(
        title="Revised", content="First words.", status="publish", author=users["editor"]
    )
    content.update_post(post.id, content="Second words.")
    page = content.create_post(
        type="page", title="About", content="Us.", status="publish", author=users["editor"]
    )
    draft = content.create_post(title="Drafty", content="Unfinished.", author=users["author"])
    return Site(
        app,
        Client(app),
        headers,
        users,
        content.get_post(post.id) or post,
        page,
        draft,
    )


@pytest.fixture
def site(app_factory: AppFactory) -> Site:
    return make_site(app_factory(application_passwords="on"))


def body(response: TestResponse) -> Any:
    return json.loads(response.get_data(as_text=True))


# ---------------------------------------------------------------------- storage


def test_every_text_change_stores_the_new_text_as_the_newest_revision(
    content: ContentService,
) -> None:
    post = content.create_post(title="One", content="a")
    content.update_post(post.id, content="b")
    content.update_post(post.id, status="publish")  # no text change: no revision
    content.update_post(post.id, title="Two", editor=7)
    revisions = content.get_revisions(post.id)
    assert [(r.title, r.content) for r in revisions] == [("Two", "b"), ("One", "b"), ("One", "a")]
    assert revisions[0].author == 7
    assert {r.slug for r in revisions} == {f"{post.id}-revision-v1"}


def test_a_post_created_without_text_has_no_revision_until_it_gets_some(
    content: ContentService,
) -> None:
    post = content.create_post(title="")
    assert content.get_revisions(post.id) == []
    content.update_post(post.id, content="now")
    assert [r.content for r in content.get_revisions(post.id)] == ["now"]


@pytest.mark.parametrize(
    ("keep", "edits", "expected"),
    [(25, 5, 6), (3, 5, 3), (1, 5, 1), (0, 5, 0), (-1, 30, 31)],
)
def test_revisions_are_trimmed_to_revisions_to_keep(
    content: ContentService, keep: int, edits: int, expected: int
) -> None:
    content.update_option("revisions_to_keep", keep)
    post = content.create_post(title="Kept", content="0")
    for number in range(1, edits + 1):
        content.update_post(post.id, content=str(number))
    assert content.count_revisions(post.id) == expected
    if expected:
        assert content.get_revisions(post.id)[0].content == str(edits)


def test_lowering_the_limit_trims_at_the_next_save_and_autosaves_are_not_counted(
    content: ContentService,
) -> None:
    post = content.create_post(title="Long", content="0", status="publish")
    for number in range(1, 5):
        content.update_post(post.id, content=str(number))
    content.put_autosave(post.id, 3, "Long", "typing", "")
    content.update_option("revisions_to_keep", 2)
    content.update_post(post.id, content="5")
    assert [r.content for r in content.get_revisions(post.id)] == ["5", "4"]
    assert [a.content for a in content.get_autosaves(post.id)] == ["typing"]


def test_deleting_a_post_for_good_deletes_its_revisions_and_autosaves(
    content: ContentService,
) -> None:
    post = content.create_post(title="Gone", content="a", status="publish")
    content.update_post(post.id, content="b")
    autosave = content.put_autosave(post.id, 1, "Gone", "c", "")
    revision_ids = [r.id for r in content.get_revisions(post.id)]
    content.delete_post(post.id, force=True)
    assert content.get_posts([*revision_ids, autosave.id]) == {}


def test_one_autosave_per_user_and_post_overwritten_by_the_next(content: ContentService) -> None:
    post = content.create_post(title="Shared", content="a", status="publish")
    first = content.put_autosave(post.id, 1, "Shared", "typing", "")
    second = content.put_autosave(post.id, 1, "Shared", "typing more", "")
    other = content.put_autosave(post.id, 2, "Shared", "someone else", "")
    assert second.id == first.id
    assert other.id != first.id
    assert {a.author: a.content for a in content.get_autosaves(post.id)} == {
        1: "typing more",
        2: "someone else",
    }
    # Text equal to the post's own leaves the autosave as it is (as WordPress does).
    assert content.put_autosave(post.id, 1, "Shared", "a", "") == second
    assert content.get_post(post.id) == post
    assert content.count_revisions(post.id) == 1


LIMITS = st.sampled_from([-1, 0, 1, 2, 3, 5])
EDITS = st.lists(
    st.tuples(
        st.sampled_from(["title", "content", "excerpt", "status"]),
        st.text(max_size=12),
    ),
    max_size=12,
)


@settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(limits=st.lists(LIMITS, min_size=1, max_size=3), edits=EDITS)
def test_revisions_never_exceed_the_limit_and_the_newest_equals_the_post(
    tmp_path: Path, limits: list[int], edits: list[tuple[str, str]]
) -> None:
    app = create_app(
        {
            "data_dir": str(tmp_path / "var"),
            "site_url": "http://example.org",
            "password_hash_cost": 1024,
            "cache_timers": False,
        }
    )
    content = app.content
    post = content.create_post(title="Start", content="start")
    for number, (field, value) in enumerate(edits):
        limit = limits[number % len(limits)]
        content.update_option("revisions_to_keep", limit)
        if field == "status":
            post = content.update_post(post.id, status="publish" if number % 2 else "draft")
        else:
            change: dict[str, Any] = {field: value}  # update_post's **fields (not editor=...)
            post = content.update_post(post.id, **change)
        revisions = content.get_revisions(post.id)
        if limit >= 0:
            assert len(revisions) <= limit
        if limit != 0:
            newest = revisions[0]
            assert (newest.title, newest.content, newest.excerpt) == (
                post.title,
                post.content,
                post.excerpt,
            )
            assert newest.parent == post.id


# ---------------------------------------------------------------------- permissions and errors

# (method, path, role, status, code); {post}, {page}, {draft}, {rev}, {page_rev} are filled in.
REFUSALS = [
    ("GET", "/posts/{post}/revisions", None, 401, "rest_cannot_read"),
    ("GET", "/posts/{post}/revisions", "subscriber", 403, "rest_cannot_read"),
    ("GET", "/posts/{post}/revisions", "contributor", 403, "rest_cannot_read"),
    ("GET", "/posts/{post}/revisions", "author", 403, "rest_cannot_read"),
    ("GET", "/posts/{post}/revisions/{rev}", None, 401, "rest_cannot_read"),
    ("GET", "/pages/{page}/revisions", None, 401, "rest_cannot_read"),
    ("GET", "/posts/999999/revisions", "administrator", 404, "rest_post_invalid_parent"),
    ("GET", "/posts/{page}/revisions", "administrator", 404, "rest_post_invalid_parent"),
    ("GET", "/posts/{post}/revisions/999999", "editor", 404, "rest_post_invalid_id"),
    ("GET", "/posts/{post}/revisions/{post}", "editor", 404, "rest_post_invalid_id"),
    (
        "GET",
        "/pages/{page}/revisions/{rev}",
        "editor",
        404,
        "rest_revision_parent_id_mismatch",
    ),
    ("DELETE", "/posts/{post}/revisions/{rev}", None, 401, "rest_cannot_delete"),
    ("DELETE", "/posts/{post}/revisions/{rev}", "author", 403, "rest_cannot_delete"),
    ("DELETE", "/posts/{post}/revisions/{rev}", "editor", 501, "rest_trash_not_supported"),
    ("DELETE", "/posts/{post}/revisions/999999?force=1", "editor", 404, "rest_post_invalid_id"),
    (
        "GET",
        "/posts/{post}/revisions?offset=2",
        "editor",
        400,
        "rest_revision_invalid_offset_number",
    ),
    (
        "GET",
        "/posts/{post}/revisions?per_page=1&page=3",
        "editor",
        400,
        "rest_revision_invalid_page_number",
    ),
    ("GET", "/posts/{post}/revisions?page=2", "editor", 400, "rest_revision_invalid_page_number"),
    (
        "GET",
        "/posts/{post}/revisions?orderby=relevance",
        "editor",
        400,
        "rest_no_search_term_defined",
    ),
    (
        "GET",
        "/posts/{post}/revisions?orderby=include",
        "editor",
        400,
        "rest_orderby_include_missing_include",
    ),
    ("GET", "/posts/{post}/revisions?per_page=101", "editor", 400, "rest_invalid_param"),
    ("GET", "/posts/{post}/autosaves", None, 401, "rest_cannot_read"),
    ("GET", "/posts/{post}/autosaves", "subscriber", 403, "rest_cannot_read"),
    ("GET", "/pages/{page}/autosaves", "author", 403, "rest_cannot_read"),
    ("GET", "/posts/999999/autosaves", "editor", 404, "rest_post_invalid_parent"),
    ("GET", "/posts/{post}/autosaves/999999", "editor", 404, "rest_post_no_autosave"),
    ("GET", "/posts/{post}/autosaves/{rev}", "editor", 404, "rest_post_no_autosave"),
    ("GET", "/posts/{post}/autosaves/1", None, 401, "rest_cannot_read"),
    ("POST", "/posts/{post}/autosaves", None, 401, "rest_cannot_edit"),
    ("POST", "/posts/{post}/autosaves", "subscriber", 403, "rest_cannot_edit"),
    ("POST", "/posts/{post}/autosaves", "author", 403, "rest_cannot_edit"),
    ("POST", "/posts/999999/autosaves", "editor", 404, "rest_post_invalid_id"),
    ("POST", "/pages/{draft}/autosaves", "editor", 404, "rest_post_invalid_id"),
]


@pytest.mark.parametrize(("method", "path", "role", "status", "code"), REFUSALS)
def test_refusals_have_wordpress_codes(
    site: Site, method: str, path: str, role: str | None, status: int, code: str
) -> None:
    page_rev = site.app.content.get_revisions(site.page.id)[0]
    values = {
        "post": site.post.id,
        "page": site.page.id,
        "draft": site.draft.id,
        "rev": site.app.content.get_revisions(site.post.id)[0].id,
        "page_rev": page_rev.id,
    }
    data = {"content": "x"} if method == "POST" else None
    response = site.call(method, path.format(**values), role, data)
    assert (response.status_code, body(response)["code"]) == (status, code), response.text


@pytest.mark.parametrize("kind", ["revisions", "autosaves"])
def test_a_refused_read_names_what_was_asked_for(site: Site, kind: str) -> None:
    response = site.call("GET", f"/posts/{site.post.id}/{kind}", "subscriber", None)
    assert response.status_code == 403
    assert body(response)["message"] == f"Sorry, you are not allowed to view {kind} of this post."


@pytest.mark.parametrize("role", ["administrator", "editor"])
def test_editors_read_revisions_with_totals_and_links(site: Site, role: str) -> None:
    path = f"/posts/{site.post.id}/revisions"
    everything = site.call("GET", path, role)
    assert everything.status_code == 200
    assert everything.headers["X-Site-Total"] == "2"
    assert everything.headers["X-Site-TotalPages"] == "1"
    assert [item["content"]["rendered"] for item in body(everything)] == [
        "<p>Second words.</p>",
        "<p>First words.</p>",
    ]
    first_page = site.call("GET", f"{path}?per_page=1", role)
    assert first_page.headers["X-Site-TotalPages"] == "2"
    assert first_page.headers["Link"] == (
        f'<http://example.org/site-json/site/v2{path}?per_page=1&page=2>; rel="next"'
    )
    second = site.call("GET", f"{path}?per_page=1&page=2&context=edit", role)
    assert second.headers["Link"] == (
        f'<http://example.org/site-json/site/v2{path}?per_page=1&page=1&context=edit>; rel="prev"'
    )
    (oldest,) = body(second)
    assert oldest["content"]["raw"] == "First words."
    assert oldest["_links"]["parent"][0]["href"].endswith(f"/site/v2/posts/{site.post.id}")
    ascending = body(site.call("GET", f"{path}?order=asc&orderby=id", role))
    assert [item["id"] for item in ascending] == sorted(item["id"] for item in body(everything))
    one = body(site.call("GET", f"{path}/{oldest['id']}?context=embed", role))
    assert set(one) == {"author", "date", "id", "parent", "slug", "title", "excerpt", "_links"}


def test_search_and_relevance_order(site: Site) -> None:
    content = site.app.content
    content.update_post(site.post.id, title="Words about cats")
    path = f"/posts/{site.post.id}/revisions"
    found = body(site.call("GET", f"{path}?search=words&orderby=relevance", "editor"))
    assert found[0]["title"]["rendered"] == "Words about cats"
    assert len(found) == 3
    assert body(site.call("GET", f"{path}?search=first", "editor"))[0]["id"] == (
        content.get_revisions(site.post.id)[-1].id
    )


def test_no_revisions_listed_while_revisions_are_off(site: Site) -> None:
    site.app.content.update_option("revisions_to_keep", 0)
    response = site.call("GET", f"/posts/{site.post.id}/revisions?page=4", "editor")
    assert response.status_code == 200
    assert body(response) == []
    assert (response.headers["X-Site-Total"], response.headers["X-Site-TotalPages"]) == ("0", "0")
    links = body(site.call("GET", f"/posts/{site.post.id}", "editor"))["_links"]
    assert links["version-history"][0]["count"] == 0
    assert "predecessor-version" not in links


def test_posts_link_their_version_history_and_newest_revision(site: Site) -> None:
    links = body(site.call("GET", f"/posts/{site.post.id}"))["_links"]
    newest = site.app.content.get_revisions(site.post.id)[0]
    base = f"http://example.org/site-json/site/v2/posts/{site.post.id}/revisions"
    assert links["version-history"] == [{"href": base, "count": 2}]
    assert links["predecessor-version"] == [{"href": f"{base}/{newest.id}", "id": newest.id}]
    page_links = body(site.call("GET", f"/pages/{site.page.id}"))["_links"]
    assert page_links["version-history"][0]["count"] == 1


def test_deleting_a_revision_needs_force_and_answers_the_previous_one(site: Site) -> None:
    oldest = site.app.content.get_revisions(site.post.id)[-1]
    path = f"/posts/{site.post.id}/revisions/{oldest.id}"
    answer = site.call("DELETE", f"{path}?force=true", "editor")
    assert answer.status_code == 200
    assert body(answer)["deleted"] is True
    assert body(answer)["previous"]["content"]["raw"] == "First words."
    assert site.call("GET", path, "editor").status_code == 404
    assert site.app.content.count_revisions(site.post.id) == 1


def test_restoring_a_revision_is_an_update_that_stores_a_revision(site: Site) -> None:
    oldest = body(site.call("GET", f"/posts/{site.post.id}/revisions?context=edit", "editor"))[-1]
    restored = site.call(
        "PUT",
        f"/posts/{site.post.id}",
        "editor",
        {name: oldest[name]["raw"] for name in ("title", "content", "excerpt")},
    )
    assert restored.status_code == 200
    assert body(restored)["content"]["rendered"] == "<p>First words.</p>"
    revisions = site.app.content.get_revisions(site.post.id)
    assert len(revisions) == 3
    assert revisions[0].content == "First words."
    assert revisions[0].author == site.users["editor"]


# ---------------------------------------------------------------------- autosaves


def test_the_author_autosaving_a_draft_updates_the_draft_without_a_revision(site: Site) -> None:
    before = site.app.content.count_revisions(site.draft.id)
    saved = site.call(
        "POST", f"/posts/{site.draft.id}/autosaves", "author", {"content": "Autosaved."}
    )
    assert saved.status_code == 200
    data = body(saved)
    assert data["id"] == site.draft.id
    assert data["content"]["raw"] == "Autosaved."  # answered in context=edit
    assert site.app.content.get_post(site.draft.id).content == "Autosaved."  # type: ignore[union-attr]
    assert site.app.content.count_revisions(site.draft.id) == before
    assert body(site.call("GET", f"/posts/{site.draft.id}/autosaves", "author")) == []


def test_autosaving_a_published_post_keeps_a_per_user_autosave(site: Site) -> None:
    path = f"/posts/{site.post.id}/autosaves"
    mine = body(site.call("POST", path, "editor", {"title": "Typing", "content": "Unsaved."}))
    again = body(site.call("POST", path, "editor", {"content": "Unsaved, more."}))
    theirs = body(site.call("POST", path, "administrator", {"excerpt": "Admin's."}))
    assert again["id"] == mine["id"]
    assert (again["title"]["raw"], again["content"]["raw"]) == ("Revised", "Unsaved, more.")
    assert mine["slug"] == f"{site.post.id}-autosave-v1"
    assert mine["parent"] == site.post.id
    assert theirs["id"] != mine["id"]
    assert theirs["content"]["raw"] == "Second words."
    listed = body(site.call("GET", path, "editor"))
    assert {item["author"] for item in listed} == {
        site.users["editor"],
        site.users["administrator"],
    }
    one = site.call("GET", f"{path}/{mine['id']}?context=edit", "editor")
    assert body(one)["content"]["raw"] == "Unsaved, more."
    post = site.app.content.get_post(site.post.id)
    assert post == site.post  # the published post is untouched
    assert site.app.content.count_revisions(site.post.id) == 2


def test_autosaves_are_answered_with_their_schema(site: Site) -> None:
    options = body(site.client.options(f"/site-json/site/v2/posts/{site.post.id}/autosaves"))
    assert options["schema"]["title"] == "post-revision"
    assert options["schema"]["properties"]["preview_link"]["context"] == ["edit"]
    methods = [endpoint["methods"] for endpoint in options["endpoints"]]
    assert methods == [["GET"], ["POST"]]
    assert "sticky" in options["endpoints"][1]["args"]
    page_options = body(site.client.options(f"/site-json/site/v2/pages/{site.page.id}/revisions"))
    assert page_options["schema"]["title"] == "page-revision"
    assert "per_page" in page_options["endpoints"][0]["args"]
    assert "default" not in page_options["endpoints"][0]["args"]["per_page"]


def test_revisions_to_keep_is_a_setting(site: Site) -> None:
    settings_path = "/settings"
    assert body(site.call("GET", settings_path, "administrator"))["revisions_to_keep"] == 25
    refused = site.call("POST", settings_path, "administrator", {"revisions_to_keep": -2})
    assert refused.status_code == 400
    changed = site.call("POST", settings_path, "administrator", {"revisions_to_keep": 1})
    assert body(changed)["revisions_to_keep"] == 1


# ---------------------------------------------------------------------- the page cache


def _cache_status(app: App, path: str) -> str:
    response = Client(app, use_cookies=False).get(path, base_url="http://example.org")
    return str(response.headers.get("Cache-Status", ""))


def test_autosaves_and_revisions_leave_the_published_page_cached(site: Site) -> None:
    url = site.app.site.post_url(site.post).removeprefix("http://example.org")
    home = "/"
    for path in (url, home):
        assert _cache_status(site.app, path).endswith("stored")
        assert _cache_status(site.app, path).startswith("sitecache; hit")
    site.call("POST", f"/posts/{site.post.id}/autosaves", "editor", {"content": "Draft words."})
    site.call("GET", f"/posts/{site.post.id}/revisions", "editor")
    oldest = site.app.content.get_revisions(site.post.id)[-1]
    site.call("DELETE", f"/posts/{site.post.id}/revisions/{oldest.id}?force=true", "editor")
    site.call("POST", f"/posts/{site.draft.id}/autosaves", "author", {"content": "Drafted."})
    site.call("POST", "/settings", "administrator", {"revisions_to_keep": 10})
    for path in (url, home):
        assert _cache_status(site.app, path).startswith("sitecache; hit"), path
    page = Client(site.app).get(url, base_url="http://example.org").get_data(as_text=True)
    assert "Draft words." not in page
    # A real change of the published post still purges it.
    site.call("POST", f"/posts/{site.post.id}", "editor", {"content": "Published words."})
    assert not _cache_status(site.app, url).startswith("sitecache; hit")


def test_deleting_a_user_deletes_their_autosaves(site: Site) -> None:
    content = site.app.content
    content.put_autosave(site.post.id, site.users["contributor"], "Theirs", "typing", "")
    content.put_autosave(site.post.id, site.users["editor"], "Mine", "typing", "")
    content.reassign_posts(site.users["contributor"], site.users["editor"])
    assert [a.author for a in content.get_autosaves(site.post.id)] == [site.users["editor"]]
