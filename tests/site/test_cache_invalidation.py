"""The cache reacts to content changes: exactly the related pages are purged (issue #9)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from markupsafe import escape
from werkzeug.test import Client

from sitecache import invalidation
from sitecache.app import App
from sitecache.site import Post, Term
from sitecache.site.targets import TERM_BASES
from tests.auth.conftest import basic, client_for
from tests.site.conftest import SmallSite

SITE = "http://example.org"
NOTICE = '<p class="comment-awaiting-moderation">Your comment is awaiting moderation.</p>'


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def status(app: App, path: str) -> str:
    response = Client(app, use_cookies=False).get(path, base_url=SITE)
    return str(response.headers.get("Cache-Status", ""))


def is_hit(app: App, path: str) -> bool:
    return status(app, path).startswith("sitecache; hit")


@pytest.fixture
def pages(app: App, site: SmallSite) -> dict[str, str]:
    """The pages of the small site, each requested once so that it is stored."""
    other_category = app.content.create_term("category", "Elsewhere")
    other = app.content.create_post(
        title="Unrelated", status="publish", author=site.author, term_ids=[other_category.id]
    )
    urls = {
        "post": path_of(app.site.post_url(site.post)),
        "home": "/",
        "category": path_of(app.site.term_url(site.category)),
        "tag": path_of(app.site.term_url(site.tag)),
        "author": "/author/alice/",
        "feed": "/feed/",
        "unrelated": path_of(app.site.post_url(other)),
        "other_category": path_of(app.site.term_url(other_category)),
        "page": path_of(app.site.post_url(site.page)),
    }
    for path in urls.values():
        assert status(app, path).endswith("stored"), path
        assert is_hit(app, path), path
    return urls


RELATED = ("post", "home", "category", "tag", "author", "feed")
UNRELATED = ("unrelated", "other_category", "page")


def assert_purged(app: App, pages: dict[str, str], purged: tuple[str, ...]) -> None:
    for name in purged:
        assert not is_hit(app, pages[name]), f"{name} should have been purged"
    for name in set(pages) - set(purged):
        assert is_hit(app, pages[name]), f"{name} should still be a hit"


def test_editing_a_post_purges_exactly_its_related_pages(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    app.content.update_post(site.post.id, title="Hello again")
    assert_purged(app, pages, RELATED)
    body = Client(app).get(pages["post"], base_url=SITE).data
    assert b"Hello again" in body


def test_unpublishing_a_post_purges_the_same_pages(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    app.content.update_post(site.post.id, status="draft")
    assert_purged(app, pages, RELATED)
    assert b"Hello world" not in Client(app).get("/", base_url=SITE).data


def test_deleting_a_post_purges_the_same_pages(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    app.content.delete_post(site.post.id, force=True)
    assert_purged(app, pages, RELATED)


def test_a_post_moved_out_of_a_category_purges_the_category_it_left(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    app.content.set_post_terms(site.post.id, "category", [])
    assert not is_hit(app, pages["category"])


def test_saving_a_draft_purges_nothing(app: App, site: SmallSite, pages: dict[str, str]) -> None:
    app.content.update_post(site.draft.id, title="Still secret")
    assert_purged(app, pages, ())


def test_a_held_comment_purges_nothing_and_its_notice_is_never_stored(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    comment = app.content.add_comment(
        post_id=site.post.id, author_name="Reader", author_email="r@example.org",
        content="Nice post", status="hold",
    )  # fmt: skip
    assert_purged(app, pages, ())
    assert comment.status == "hold"
    for entry in app.cache.engine.storage.keys_for("host", None):
        stored = app.cache.engine.load(entry)
        assert stored is None or NOTICE.encode() not in stored.body


def test_an_approved_comment_purges_its_post_and_related_pages(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    app.content.add_comment(
        post_id=site.post.id, author_name="Reader", author_email="r@example.org",
        content="Nice post", status="approve",
    )  # fmt: skip
    assert_purged(app, pages, RELATED)


def test_refresh_single_only_on_comments_purges_only_the_post(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    assert isinstance(
        app.cache.engine.update_settings({"refresh_single_only_on_comments": True}), dict
    )
    comment = app.content.add_comment(
        post_id=site.post.id, author_name="Reader", author_email="r@example.org",
        content="Nice post", status="hold",
    )  # fmt: skip
    app.content.update_comment(comment.id, status="approve")
    assert_purged(app, pages, ("post",))


def test_lock_down_stops_automatic_purges(app: App, site: SmallSite, pages: dict[str, str]) -> None:
    assert isinstance(app.cache.engine.update_settings({"lock_down": True}), dict)
    app.content.update_post(site.post.id, title="Hello again")
    assert_purged(app, pages, ())
    assert app.cache.purge_url(pages["post"]).deleted == 1


WITHDRAWALS: dict[str, dict[str, Any]] = {
    "made private": {"status": "private"},
    "back to draft": {"status": "draft"},
    "trashed": {"status": "trash"},
    "given a password": {"password": "opensesame"},
}


@pytest.mark.parametrize("change", WITHDRAWALS.values(), ids=list(WITHDRAWALS))
def test_lock_down_still_purges_a_post_taken_from_the_public(
    app: App, site: SmallSite, pages: dict[str, str], change: dict[str, Any]
) -> None:
    assert isinstance(app.cache.engine.update_settings({"lock_down": True}), dict)
    app.content.update_post(site.post.id, **change)
    assert_purged(app, pages, RELATED)
    for path in (pages["post"], "/", pages["feed"]):
        assert (
            b"First paragraph" not in Client(app, use_cookies=False).get(path, base_url=SITE).data
        )


def test_ending_lock_down_purges_what_it_held_back(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    assert isinstance(app.cache.engine.update_settings({"lock_down": True}), dict)
    app.content.update_post(site.post.id, title="Hello again")
    assert_purged(app, pages, ())
    assert app.cache.engine.update_settings({"gc_interval": 120})["lock_down"] is True
    assert_purged(app, pages, ())  # another setting changed: still locked down
    assert app.cache.engine.update_settings({"lock_down": False})["lock_down"] is False
    assert_purged(app, pages, tuple(pages))
    assert b"Hello again" in Client(app, use_cookies=False).get("/", base_url=SITE).data


def test_a_settings_reset_out_of_lock_down_purges_too(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    assert isinstance(app.cache.engine.update_settings({"lock_down": True}), dict)
    app.content.update_post(site.post.id, title="Hello again")
    assert app.cache.engine.reset_settings()["lock_down"] is False
    assert_purged(app, pages, tuple(pages))


def test_lock_down_still_purges_a_deleted_post(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    assert isinstance(app.cache.engine.update_settings({"lock_down": True}), dict)
    app.content.delete_post(site.post.id, force=True)
    assert_purged(app, pages, RELATED)
    assert Client(app, use_cookies=False).get(pages["post"], base_url=SITE).status_code == 404


def test_lock_down_holds_back_a_new_password_only_when_it_withdraws_nothing(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    # A published post edited while locked down keeps its cached pages (the point of it).
    assert isinstance(app.cache.engine.update_settings({"lock_down": True}), dict)
    app.content.update_post(site.post.id, title="Renamed", password="")
    assert_purged(app, pages, ())


@pytest.mark.parametrize("how", ["unapproved", "spam", "trashed", "deleted"])
def test_lock_down_still_purges_a_comment_taken_down(
    app: App, site: SmallSite, pages: dict[str, str], how: str
) -> None:
    comment = app.content.add_comment(
        post_id=site.post.id, author_name="Reader", author_email="r@example.org",
        content="Call 555-0100 at home", status="approve",
    )  # fmt: skip
    for path in pages.values():  # the comment is on the post's page now
        status(app, path)
    assert b"555-0100" in Client(app, use_cookies=False).get(pages["post"], base_url=SITE).data
    assert is_hit(app, pages["post"])
    assert isinstance(app.cache.engine.update_settings({"lock_down": True}), dict)
    if how == "deleted":
        app.content.delete_comment(comment.id, force=True)
    else:
        new_status = {"unapproved": "hold", "spam": "spam", "trashed": "trash"}[how]
        app.content.update_comment(comment.id, status=new_status)
    assert not is_hit(app, pages["post"])
    assert b"555-0100" not in Client(app, use_cookies=False).get(pages["post"], base_url=SITE).data


def test_clear_on_post_edit_purges_the_whole_site(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    assert isinstance(app.cache.engine.update_settings({"clear_on_post_edit": True}), dict)
    app.content.update_post(site.post.id, title="Hello again")
    assert_purged(app, pages, tuple(pages))


def test_renaming_a_term_purges_its_archive(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    app.content.update_term(site.tag.id, name="Snakes")
    assert not is_hit(app, pages["tag"])
    assert is_hit(app, pages["unrelated"])


def test_changing_a_site_option_purges_every_page(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    app.content.update_option("title", "A new title")
    assert_purged(app, pages, tuple(pages))


@pytest.mark.parametrize(("page_type", "path"), [("search", "/search/hello/"), ("feed", "/feed/")])
def test_search_pages_and_feeds_obey_the_pages_setting(
    app: App, site: SmallSite, page_type: str, path: str
) -> None:
    assert status(app, path).endswith("stored")
    assert isinstance(app.cache.engine.update_settings({"pages": {page_type: True}}), dict)
    app.cache.purge_all()
    assert status(app, path) == "sitecache; fwd=uri-miss; detail=page_type"
    assert status(app, path) == "sitecache; fwd=uri-miss; detail=page_type"


def search_page(app: App, term: str) -> bytes:
    """The body of the search results page for ``term``, reached through ``/?s=``."""
    response = Client(app, use_cookies=False).get(f"/?s={term}", base_url=SITE)
    assert response.status_code in (301, 302, 308), response.status_code
    location = path_of(response.headers["Location"])
    assert location == f"/search/{term}/"
    return Client(app, use_cookies=False).get(location, base_url=SITE).get_data()


def test_publishing_a_matching_post_purges_the_cached_search_page(
    app: App, site: SmallSite
) -> None:
    search_page(app, "zeppelin")
    assert is_hit(app, "/search/zeppelin/")
    created = app.content.create_post(
        title="The zeppelin lands", status="publish", author=site.author
    )
    assert not is_hit(app, "/search/zeppelin/")
    assert b"The zeppelin lands" in search_page(app, "zeppelin")
    assert created.id > 0


def test_editing_a_post_to_match_or_not_purges_search_pages(app: App, site: SmallSite) -> None:
    search_page(app, "zeppelin")
    assert is_hit(app, "/search/zeppelin/")
    app.content.update_post(site.post.id, title="Hello zeppelin")
    assert b"Hello zeppelin" in search_page(app, "zeppelin")
    assert is_hit(app, "/search/zeppelin/")
    app.content.update_post(site.post.id, title="Hello world")
    assert b"Hello zeppelin" not in search_page(app, "zeppelin")


def test_saving_a_draft_keeps_search_pages(app: App, site: SmallSite) -> None:
    search_page(app, "hello")
    assert is_hit(app, "/search/hello/")
    app.content.update_post(site.draft.id, title="hello draft")
    assert is_hit(app, "/search/hello/")


def test_renaming_an_author_purges_every_page_showing_their_name(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    user = app.auth.users.get(site.author)
    assert user is not None
    app.auth.users.update(user, {"display_name": "Alice Liddell"})
    # Every page listing or showing one of her posts (all the small site's pages are hers).
    assert_purged(app, pages, tuple(pages))
    body = Client(app).get(pages["post"], base_url=SITE).get_data(as_text=True)
    assert "Alice Liddell" in body


def test_a_profile_change_no_page_shows_purges_nothing(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    user = app.auth.users.get(site.author)
    assert user is not None
    app.auth.users.update(user, {"description": "Writes about Python.", "display_name": "Alice"})
    assert_purged(app, pages, ())


def test_a_new_author_slug_purges_the_archive_under_its_old_url(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    user = app.auth.users.get(site.author)
    assert user is not None
    app.auth.users.update(user, {"slug": "alice-l"})
    assert not is_hit(app, pages["author"])
    assert Client(app).get(pages["author"], base_url=SITE).status_code == 404
    assert "/author/alice-l/" in Client(app).get(pages["post"], base_url=SITE).get_data(
        as_text=True
    )


def test_deleting_an_author_purges_the_pages_of_the_posts_they_leave(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    user = app.auth.users.get(site.author)
    assert user is not None
    app.auth.users.delete(user)  # the posts stay (the CLI without --reassign), authorless
    assert_purged(app, pages, tuple(pages))
    assert "Alice" not in Client(app).get(pages["post"], base_url=SITE).get_data(as_text=True)


#: (settings set first, the change, whether the change purges the site): the changes that make
#: stored pages wrong to serve purge (`PURGING_CHANGES`), those read at request time do not.
SETTINGS_CHANGES: list[tuple[dict[str, Any], dict[str, Any], bool]] = [
    ({}, {"enabled": False}, True),
    ({}, {"compression": False}, True),
    ({"compression": False}, {"compression": True}, True),
    ({"cache_404": True}, {"cache_404": False}, True),
    ({}, {"pages": {"single": True}}, True),
    ({"pages": {"search": True}}, {"pages": {"search": True, "tag": True}}, True),
    ({}, {"rejected_uris": ["^/nothing-yet/"]}, True),
    ({}, {"mobile": True}, True),
    ({"static_files": True}, {"static_files": False}, True),
    ({"lock_down": True}, {"lock_down": False}, True),
    ({}, {"cache_404": True}, False),
    ({"pages": {"search": True}}, {"pages": {"search": False}}, False),
    ({"rejected_uris": ["^/a/", "^/b/"]}, {"rejected_uris": ["^/a/"]}, False),
    ({"mobile": True}, {"mobile": False}, False),
    ({}, {"static_files": True}, False),
    ({}, {"enabled": True, "mobile": False, "pages": {"single": False}}, False),
    ({}, {"gc_interval": 120, "max_age": 60, "stale_while_revalidate": 0}, False),
    ({}, {"rejected_cookies": ["cart_"], "rejected_user_agents": ["bot"]}, False),
    ({}, {"known_users": "anonymous", "cache_query_strings": True, "debug": True}, False),
    ({}, {"preload_interval": 30, "max_entries": 10, "clear_on_post_edit": True}, False),
]


@pytest.mark.parametrize(("before", "change", "purges"), SETTINGS_CHANGES)
def test_a_settings_change_purges_the_site_when_stored_pages_would_be_wrong_to_serve(
    app: App, site: SmallSite, before: dict[str, Any], change: dict[str, Any], purges: bool
) -> None:
    engine = app.cache.engine
    if before:
        engine.update_settings(before)
    paths = ["/", "/feed/", "/author/alice/", path_of(app.site.post_url(site.post))]
    for path in paths:
        Client(app, use_cookies=False).get(path, base_url=SITE)
        assert is_hit(app, path), path
    engine.update_settings(change)
    if not engine.settings().enabled:
        assert engine.storage.summary(engine.clock()).total == 0
        return
    for path in paths:
        assert is_hit(app, path) is not purges, path


def test_a_page_type_turned_off_is_served_live_from_the_next_request(
    app: App, site: SmallSite, pages: dict[str, str]
) -> None:
    app.cache.engine.update_settings({"pages": {"single": True}})
    for _ in range(2):
        assert not is_hit(app, pages["post"])
    app.content.update_post(site.post.id, title="Hello again")
    assert b"Hello again" in Client(app, use_cookies=False).get(pages["post"], base_url=SITE).data


# ---------------------------------------------------------------------- what a page shows of others
# A term's name and link show next to every post carrying it, on every page listing the post;
# a page's path names its ancestors. The next request for each such page must be a miss
# showing the change, on every permalink structure.

STRUCTURES = (
    "",
    "/%postname%/",
    "/%year%/%monthnum%/%day%/%postname%/",
    "/archives/%post_id%/",
    "/%category%/%author%/%postname%/",
)
PRETTY_STRUCTURES = tuple(structure for structure in STRUCTURES if structure)


def use_structure(app: App, structure: str) -> None:
    """Permalinks of ``structure``; with plain ones (query strings) the cache keeps them too."""
    app.content.update_option("permalink_structure", structure)
    if not structure:
        assert isinstance(app.cache.engine.update_settings({"cache_query_strings": True}), dict)


@dataclass
class Admin:
    """Acts on the site's REST API as an administrator."""

    client: Client
    auth: dict[str, str]

    def call(self, method: str, path: str, body: Any = None) -> int:
        """``method`` on ``/site-json<path>``; the status code (2xx asserted)."""
        response = self.client.open(
            f"/site-json{path}", method=method, headers=self.auth, json=body, base_url=SITE
        )
        assert 200 <= response.status_code < 300, response.get_data(as_text=True)
        return response.status_code


@pytest.fixture
def admin(app: App) -> Admin:
    user = app.auth.users.create("boss", "password123", "administrator", "boss@example.org")
    password, _ = app.auth.app_passwords.create(user, "tests")
    return Admin(client_for(app), basic("boss", password))


def get(app: App, path: str) -> tuple[int, str, str]:
    """``(status code, Cache-Status, body)`` of an anonymous request."""
    response = Client(app, use_cookies=False).get(path, base_url=SITE)
    return response.status_code, str(response.headers.get("Cache-Status", "")), response.text


def warm(app: App, paths: dict[str, str]) -> None:
    """Request every page until it is a hit."""
    for name, path in paths.items():
        get(app, path)
        assert is_hit(app, path), f"{name} ({path}) is not cached"


def assert_next_is_a_miss(app: App, paths: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Every page's next request is no hit; ``{name: (status code, body)}``."""
    answers = {}
    for name, path in paths.items():
        code, cache_status, body = get(app, path)
        assert "hit" not in cache_status, f"{name} ({path}) still a hit: {cache_status}"
        answers[name] = (code, body)
    return answers


@dataclass
class TermSite:
    """A post in two categories and two tags, the first of each changing."""

    post: Post
    category: Term
    other_category: Term
    tag: Term
    other_tag: Term


@pytest.fixture
def term_site(app: App, site: SmallSite) -> TermSite:
    content = app.content
    other_category = content.create_term("category", "Second")
    other_tag = content.create_term("post_tag", "Other")
    post = content.update_post(
        site.post.id,
        term_ids=[site.category.id, other_category.id, site.tag.id, other_tag.id],
    )
    return TermSite(post, site.category, other_category, site.tag, other_tag)


def term_pages(app: App, site: TermSite) -> dict[str, str]:
    """Every page that lists or shows the post, by kind."""
    user = app.auth.users.get(site.post.author)
    assert user is not None
    links = app.site.links
    return {
        "post": path_of(app.site.post_url(site.post)),
        "home": "/",
        "other_category": path_of(app.site.term_url(site.other_category)),
        "other_tag": path_of(app.site.term_url(site.other_tag)),
        "author": links.author_path(user),
        "search": links.search_path("hello"),
        "date": links.table().build("date", {"year": 2023}),
        "feed": links.feed_path(),
        "sitemap": "/sitemap.xml",
    }


#: What each kind of page shows of a post's terms: listings its categories (name and link),
#: the post's own page and the feed every term's name, the sitemap every term's URL.
LISTINGS = frozenset({"home", "other_category", "other_tag", "author", "search", "date"})
SHOWS_NAME = {"category": LISTINGS | {"post", "feed"}, "post_tag": frozenset({"post", "feed"})}
SHOWS_LINK = {
    "category": LISTINGS | {"post", "sitemap"},
    "post_tag": frozenset({"post", "sitemap"}),
}

TERM_CHANGES: dict[str, tuple[str, dict[str, str]]] = {
    "category renamed": ("category", {"name": "Gnu Two"}),
    "category slug changed": ("category", {"slug": "gnu-two"}),
    "category renamed and slug changed": ("category", {"name": "Gnu Two", "slug": "gnu-two"}),
    "tag renamed": ("post_tag", {"name": "Gnu Two"}),
    "tag slug changed": ("post_tag", {"slug": "gnu-two"}),
}


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("change", TERM_CHANGES.values(), ids=list(TERM_CHANGES))
def test_a_term_change_purges_every_page_showing_its_posts(
    app: App,
    term_site: TermSite,
    admin: Admin,
    structure: str,
    change: tuple[str, dict[str, str]],
) -> None:
    use_structure(app, structure)
    taxonomy, fields = change
    term = term_site.category if taxonomy == "category" else term_site.tag
    paths = term_pages(app, term_site)
    warm(app, paths)
    admin.call("POST", f"/site/v2/{TERM_BASES[taxonomy]}/{term.id}", fields)
    answers = assert_next_is_a_miss(app, paths)
    changed = app.content.get_term(term.id)
    assert changed is not None
    post_url = app.site.post_url(term_site.post)
    moved = path_of(post_url) != paths["post"]  # %category% and the category's slug
    assert moved == (
        structure.startswith("/%category%") and taxonomy == "category" and "slug" in fields
    )
    if moved:
        assert answers["post"][0] == 404
        assert str(escape(post_url)) in answers["sitemap"][1]
        assert str(escape(post_url)) in answers["home"][1]
    for name in SHOWS_NAME[taxonomy] if "name" in fields else ():
        if name != "post" or not moved:
            assert "Gnu Two" in answers[name][1], name
    for name in SHOWS_LINK[taxonomy] if "slug" in fields else ():
        if name != "post" or not moved:
            assert str(escape(app.site.term_url(changed))) in answers[name][1], name


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("taxonomy", ["category", "post_tag"])
def test_a_deleted_term_purges_every_page_showing_its_posts(
    app: App, term_site: TermSite, admin: Admin, structure: str, taxonomy: str
) -> None:
    use_structure(app, structure)
    # The other ones: the first category is the default one, which cannot be deleted.
    term = term_site.other_category if taxonomy == "category" else term_site.other_tag
    paths = term_pages(app, term_site)
    del paths["other_category" if taxonomy == "category" else "other_tag"]  # a 404 now
    warm(app, paths)
    admin.call("DELETE", f"/site/v2/{TERM_BASES[taxonomy]}/{term.id}?force=true")
    answers = assert_next_is_a_miss(app, paths)
    for name in SHOWS_NAME[taxonomy] & set(paths):
        code, body = answers[name]
        assert code == 404 or f">{term.name}<" not in body, name


def test_a_term_with_more_posts_than_the_bound_purges_the_whole_site(
    app: App, term_site: TermSite, pages: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(invalidation, "MAX_PURGED_POSTS", 1)
    app.content.create_post(
        title="Another", status="publish", author=term_site.post.author,
        term_ids=[term_site.category.id],
    )  # fmt: skip
    warm(app, pages)
    app.content.update_term(term_site.category.id, name="Gnu Two")
    assert_purged(app, pages, tuple(pages))  # the unrelated pages too


def test_a_term_description_change_purges_only_its_archive_and_lists(
    app: App, term_site: TermSite
) -> None:
    paths = term_pages(app, term_site)
    archive = path_of(app.site.term_url(term_site.category))
    warm(app, {**paths, "archive": archive})
    app.content.update_term(term_site.category.id, description="All the news.")
    assert not is_hit(app, archive)
    assert "All the news." in get(app, archive)[2]
    for name in ("other_category", "other_tag", "author", "search", "sitemap"):
        assert is_hit(app, paths[name]), name


def test_lock_down_holds_back_a_term_rename(app: App, term_site: TermSite) -> None:
    # A rename withdraws nothing: locked down, the pages keep their copies until it ends.
    paths = term_pages(app, term_site)
    warm(app, paths)
    assert isinstance(app.cache.engine.update_settings({"lock_down": True}), dict)
    app.content.update_term(term_site.category.id, name="Gnu Two", slug="gnu-two")
    for name, path in paths.items():
        assert is_hit(app, path), name
    assert app.cache.engine.update_settings({"lock_down": False})["lock_down"] is False
    answers = assert_next_is_a_miss(app, paths)
    assert "Gnu Two" in answers["author"][1]


@dataclass
class PageTree:
    """``/about/team/lead/`` and ``/elsewhere/``."""

    about: Post
    team: Post
    lead: Post
    elsewhere: Post


def page_tree(app: App, author: int, about_status: str) -> PageTree:
    def page(title: str, slug: str, parent: int = 0, status: str = "publish") -> Post:
        return app.content.create_post(
            type="page", title=title, slug=slug, content=f"{title} zeppelin.",
            status=status, author=author, parent=parent,
        )  # fmt: skip

    about = page("About", "about", status=about_status)
    team = page("Team", "team", about.id)
    return PageTree(about, team, page("Lead", "lead", team.id), page("Elsewhere", "elsewhere"))


#: ``(status of /about/, the change and what it moves)``.
PAGE_MOVES: dict[str, tuple[str, str, str, Any]] = {
    "parent slug changed": ("publish", "POST", "about", {"slug": "company"}),
    "draft parent slug changed": ("draft", "POST", "about", {"slug": "company"}),
    "child reparented": ("publish", "POST", "team", {"parent": "elsewhere"}),
    "child made top level": ("publish", "POST", "team", {"parent": 0}),
    "parent deleted": ("publish", "DELETE", "about", None),
}


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("move", PAGE_MOVES.values(), ids=list(PAGE_MOVES))
def test_moving_a_page_purges_the_pages_below_it(
    app: App, site: SmallSite, admin: Admin, structure: str, move: tuple[str, str, str, Any]
) -> None:
    use_structure(app, structure)
    about_status, method, which, body = move
    tree = page_tree(app, site.author, about_status)
    paths = {
        "team": path_of(app.site.post_url(tree.team)),
        "lead": path_of(app.site.post_url(tree.lead)),
        "sitemap": "/sitemap.xml",
        "search": app.site.links.search_path("zeppelin"),
    }
    warm(app, paths)
    target: Post = getattr(tree, which)
    if body is not None and body.get("parent") == "elsewhere":
        body = {"parent": tree.elsewhere.id}
    suffix = "?force=true" if method == "DELETE" else ""
    admin.call(method, f"/site/v2/pages/{target.id}{suffix}", body)
    answers = assert_next_is_a_miss(app, paths)
    for name in ("team", "lead"):
        page = app.content.get_post(getattr(tree, name).id)
        assert page is not None
        url = app.site.post_url(page)
        moved = path_of(url) != paths[name]
        assert moved == bool(structure), name  # plain links name pages by id
        assert answers[name][0] == (404 if moved else 200), name
        assert str(escape(url)) in answers["sitemap"][1], name
        assert str(escape(url)) in answers["search"][1], name
        code, _, shown = get(app, path_of(url))
        assert code == 200, name
        assert f"{page.title} zeppelin." in shown, name
