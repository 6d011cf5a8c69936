"""The ``site/v2`` content routes: schemas, links and embedding, pagination, permissions."""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass
from typing import Any

import pytest
from PIL import Image
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestServer, return_true
from sitecache.schema import validate_value_from_schema
from sitecache.site import Post, PostQuery
from sitecache.site.demo import fill_demo
from sitecache.site.health import HEALTH_TESTS
from tests.conftest import AppFactory
from tests.site.test_extensions import ECHO, echo_plugin, fake

ROLES = ("administrator", "editor", "author", "contributor", "subscriber")


@dataclass
class RestSite:
    app: App
    client: Client
    headers: dict[str, dict[str, str]]
    ids: dict[str, int]

    def call(
        self, method: str, path: str, role: str | None = None, body: Any = None
    ) -> TestResponse:
        headers = dict(self.headers[role]) if role else {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        return self.client.open(
            f"/site-json{path}",
            method=method,
            headers=headers,
            data=json.dumps(body) if body is not None else None,
        )


@pytest.fixture(scope="module")
def rest_site(tmp_path_factory: pytest.TempPathFactory) -> RestSite:
    from sitecache.app import create_app

    app = create_app(
        {
            "data_dir": str(tmp_path_factory.mktemp("rest") / "var"),
            "site_url": "http://example.org",
            "password_hash_cost": 1024,
            "cache_timers": False,
            "application_passwords": "on",
        }
    )
    headers: dict[str, dict[str, str]] = {}
    for role in ROLES:
        user = app.auth.users.create(role, "password123", role)
        password, _ = app.auth.app_passwords.create(user, "tests", "")
        token = base64.b64encode(f"{role}:{password}".encode()).decode()
        headers[role] = {"Authorization": f"Basic {token}"}
    fill_demo(app.content, app.auth.users)
    content = app.content
    post = content.query_posts(PostQuery())[0][0]
    return RestSite(app, Client(app), headers, {"post": post.id})


def body(response: TestResponse) -> Any:
    return json.loads(response.get_data(as_text=True))


def items_of(data: Any) -> list[dict[str, Any]]:
    """The resources of a GET answer: a list, a keyed object of resources, or one object."""
    if isinstance(data, list):
        return data
    if (
        isinstance(data, dict)
        and data
        and all(isinstance(value, dict) and "_links" in value for value in data.values())
    ):
        return list(data.values())
    return [data]


def without_required(schema: Any) -> Any:
    """``schema`` without the ``required`` flags of its properties, at every depth."""
    if isinstance(schema, dict):
        return {
            key: without_required(value)
            for key, value in schema.items()
            if not (key == "required" and isinstance(value, bool))
        }
    if isinstance(schema, list):
        return [without_required(value) for value in schema]
    return schema


def strip_links(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if key not in ("_links", "_embedded")}


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), "green").save(buffer, "PNG")
    return buffer.getvalue()


# Every content route: a concrete URL for its GET, and the write requests it answers.
def _user_routes(site: RestSite) -> dict[str, tuple[str, list[tuple[str, str, Any]]]]:
    """The users and application-password routes (the auth layer's part of ``site/v2``)."""
    admin = site.app.auth.users.find("administrator")
    assert admin is not None
    uuid = site.app.auth.app_passwords.list(admin)[0].uuid
    passwords = "/site/v2/users/(?P<user_id>(?:[\\d]+|me))/application-passwords"
    return {
        "/site/v2/users": ("/site/v2/users", []),
        "/site/v2/users/(?P<id>[\\d]+)": (
            f"/site/v2/users/{admin.id}",
            [("POST", f"/site/v2/users/{admin.id}", {"description": "Walked"})],
        ),
        "/site/v2/users/me": ("/site/v2/users/me", []),
        passwords: (
            "/site/v2/users/me/application-passwords",
            [("POST", "/site/v2/users/me/application-passwords", {"name": "walked"})],
        ),
        passwords + "/introspect": ("/site/v2/users/me/application-passwords/introspect", []),
        passwords + "/(?P<uuid>[\\w\\-]+)": (
            f"/site/v2/users/{admin.id}/application-passwords/{uuid}",
            [("POST", f"/site/v2/users/me/application-passwords/{uuid}", {"name": "renamed"})],
        ),
    }


def concrete_routes(site: RestSite) -> dict[str, tuple[str, list[tuple[str, str, Any]]]]:
    content = site.app.content
    page = content.create_post(type="page", title="Walk page", status="publish")
    post = content.create_post(title="Walk post", status="publish")
    other = content.create_post(title="Walk other post", status="publish")
    category = content.create_term("category", "Walk category")
    tag = content.create_term("post_tag", "Walk tag")
    comment = content.add_comment(
        post_id=post.id,
        content="walk",
        author_email="w@example.com",
        author_name="W",
        status="approve",
    )
    media = [
        site.app.media.upload(_png(), "image/png", f"walk-{n}.png", alt_text="Walk", author=1)
        for n in range(2)
    ]
    loose = media[0].post.id
    site.app.plugins.discover = lambda: [fake(ECHO, echo_plugin)]
    site.app.plugins.sync_interval = 0
    return {
        "/site/v2/media": ("/site/v2/media", []),
        "/site/v2/media/(?P<id>[\\d]+)": (
            f"/site/v2/media/{loose}",
            [
                ("POST", f"/site/v2/media/{loose}", {"alt_text": "Edited", "caption": "C"}),
                ("DELETE", f"/site/v2/media/{media[1].post.id}?force=true", None),
            ],
        ),
        "/site/v2/posts": (
            "/site/v2/posts",
            [("POST", "/site/v2/posts", {"title": "Made", "status": "publish", "tags": [tag.id]})],
        ),
        "/site/v2/posts/(?P<id>[\\d]+)": (
            f"/site/v2/posts/{other.id}",
            [
                ("POST", f"/site/v2/posts/{other.id}", {"title": "Edited"}),
                ("DELETE", f"/site/v2/posts/{other.id}", None),
            ],
        ),
        "/site/v2/pages": (
            "/site/v2/pages",
            [("POST", "/site/v2/pages", {"title": "Made page", "parent": page.id})],
        ),
        "/site/v2/pages/(?P<id>[\\d]+)": (
            f"/site/v2/pages/{page.id}",
            [("PATCH", f"/site/v2/pages/{page.id}", {"menu_order": 3})],
        ),
        "/site/v2/categories": (
            "/site/v2/categories",
            [("POST", "/site/v2/categories", {"name": "Made category", "parent": category.id})],
        ),
        "/site/v2/categories/(?P<id>[\\d]+)": (
            f"/site/v2/categories/{category.id}",
            [("POST", f"/site/v2/categories/{category.id}", {"description": "Edited"})],
        ),
        "/site/v2/tags": ("/site/v2/tags", [("POST", "/site/v2/tags", {"name": "Made tag"})]),
        "/site/v2/tags/(?P<id>[\\d]+)": (
            f"/site/v2/tags/{tag.id}",
            [("PUT", f"/site/v2/tags/{tag.id}", {"name": "Edited tag"})],
        ),
        "/site/v2/comments": (
            "/site/v2/comments",
            [("POST", "/site/v2/comments", {"post": post.id, "content": "Made comment"})],
        ),
        "/site/v2/comments/(?P<id>[\\d]+)": (
            f"/site/v2/comments/{comment.id}",
            [
                ("POST", f"/site/v2/comments/{comment.id}", {"status": "hold"}),
                ("DELETE", f"/site/v2/comments/{comment.id}", None),
            ],
        ),
        "/site/v2/types": ("/site/v2/types", []),
        "/site/v2/types/(?P<type>[\\w-]+)": ("/site/v2/types/post", []),
        "/site/v2/statuses": ("/site/v2/statuses", []),
        "/site/v2/statuses/(?P<status>[\\w-]+)": ("/site/v2/statuses/draft", []),
        "/site/v2/taxonomies": ("/site/v2/taxonomies", []),
        "/site/v2/taxonomies/(?P<taxonomy>[\\w-]+)": ("/site/v2/taxonomies/category", []),
        "/site/v2/search": ("/site/v2/search?search=cache", []),
        **_user_routes(site),
        "/site/v2/settings": (
            "/site/v2/settings",
            [("POST", "/site/v2/settings", {"title": "Walked"})],
        ),
        "/site/v2/site-health/tests": ("/site/v2/site-health/tests", []),
        "/site/v2/site-health/directory-sizes": ("/site/v2/site-health/directory-sizes", []),
        **{
            f"/site/v2/site-health/tests/{name}": (f"/site/v2/site-health/tests/{name}", [])
            for name in HEALTH_TESTS
        },
        "/site/v2/block-types": ("/site/v2/block-types", []),
        "/site/v2/block-types/(?P<namespace>[a-zA-Z0-9_-]+)": ("/site/v2/block-types/core", []),
        "/site/v2/block-types/(?P<namespace>[a-zA-Z0-9_-]+)/(?P<name>[a-zA-Z0-9_-]+)": (
            "/site/v2/block-types/core/latest-posts",
            [],
        ),
        "/site/v2/block-renderer/(?P<name>[a-z0-9-]+/[a-z0-9-]+)": (
            "/site/v2/block-renderer/core/archives?context=edit",
            [
                (
                    "POST",
                    "/site/v2/block-renderer/core/latest-posts?context=edit",
                    {"attributes": {"postsToShow": 2}, "post_id": post.id},
                )
            ],
        ),
        **_revision_routes(site, post, page),
        "/site/v2/plugins": ("/site/v2/plugins", []),
        "/site/v2/plugins/(?P<plugin>[^.\\/]+(?:\\/[^.\\/]+)?)": (
            f"/site/v2/plugins/{ECHO}",
            [
                ("POST", f"/site/v2/plugins/{ECHO}", {"status": "active"}),
                ("PATCH", f"/site/v2/plugins/{ECHO}", {"status": "inactive"}),
            ],
        ),
        "/site/v2/block-directory/search": ("/site/v2/block-directory/search?term=echo", []),
        "/site/v2/themes": ("/site/v2/themes", []),
        '/site/v2/themes/(?P<stylesheet>[^\\/:<>\\*\\?"\\\\|]+(?:\\/[^\\/:<>\\*\\?"\\\\|]+)?)': (
            "/site/v2/themes/sitecache",
            [("POST", "/site/v2/themes/sitecache", {"status": "active"})],
        ),
    }


def _revision_routes(
    site: RestSite, post: Post, page: Post
) -> dict[str, tuple[str, list[tuple[str, str, Any]]]]:
    """The revision and autosave routes of posts and pages, each with revisions to list,
    read and delete, and an autosave to read."""
    content = site.app.content
    admin = site.app.auth.users.find("administrator")
    assert admin is not None
    routes: dict[str, tuple[str, list[tuple[str, str, Any]]]] = {}
    for base, parent in (("posts", post), ("pages", page)):
        content.update_post(parent.id, content="A second version.", excerpt="Walked.")
        kept, doomed = content.get_revisions(parent.id)[:2]
        autosave = content.put_autosave(parent.id, admin.id, "Typing", "Unsaved words.", "")
        path = f"/site/v2/{base}/{parent.id}"
        routes.update(
            {
                f"/site/v2/{base}/(?P<parent>[\\d]+)/revisions": (f"{path}/revisions", []),
                f"/site/v2/{base}/(?P<parent>[\\d]+)/revisions/(?P<id>[\\d]+)": (
                    f"{path}/revisions/{kept.id}",
                    [("DELETE", f"{path}/revisions/{doomed.id}?force=true", None)],
                ),
                f"/site/v2/{base}/(?P<id>[\\d]+)/autosaves": (
                    f"{path}/autosaves",
                    [("POST", f"{path}/autosaves", {"title": "Typed", "content": "More words."})],
                ),
                f"/site/v2/{base}/(?P<parent>[\\d]+)/autosaves/(?P<id>[\\d]+)": (
                    f"{path}/autosaves/{autosave.id}",
                    [],
                ),
            }
        )
    return routes


def test_every_route_answers_data_valid_against_its_own_published_schema(
    rest_site: RestSite,
) -> None:
    server = rest_site.app.server
    routes = concrete_routes(rest_site)
    server.ensure_initialized()
    mine = {pattern for pattern in server.get_routes("site/v2") if pattern != "/site/v2"}
    assert mine == set(routes), "a content route is not walked"
    for pattern, (url, writes) in routes.items():
        options = rest_site.call("OPTIONS", url.split("?")[0])
        description = body(options)
        # "required" marks what a create needs (the users' username and password); an answer
        # filtered by its context may leave those out.
        schema = without_required(description["schema"])
        context = description["endpoints"][0]["args"].get("context", {})
        # As the administrator, anonymously and as an author (who may read what is public and
        # is refused what is not: 401 or 403, walked through the administrator's answers).
        answers = [
            rest_site.call("GET", url, "administrator"),
            rest_site.call("GET", url),
            rest_site.call("GET", url, "author"),
        ]
        if "edit" in context.get("enum", ()):
            edit_url = url + ("&" if "?" in url else "?") + "context=edit"
            answers.append(rest_site.call("GET", edit_url, "administrator"))
        answers += [
            rest_site.call(method, path, "administrator", data) for method, path, data in writes
        ]
        for response in answers:
            if response.status_code in (401, 403) and (
                pattern.startswith(
                    (
                        "/site/v2/settings",
                        "/site/v2/statuses/",
                        "/site/v2/block-types",
                        "/site/v2/block-renderer/",
                        "/site/v2/plugins",
                        "/site/v2/block-directory",
                        "/site/v2/themes",
                        "/site/v2/site-health/",
                        "/site/v2/users/",
                    )
                )
                or any(part in pattern for part in ("/revisions", "/autosaves"))
            ):
                continue  # not public: the administrator's answers are walked
            assert response.status_code in (200, 201), (pattern, response.get_data(as_text=True))
            data = body(response)
            if isinstance(data, dict) and data.get("deleted") is True:
                data = data["previous"]
            for item in items_of(data):
                verdict = validate_value_from_schema(strip_links(item), schema, "item")
                assert verdict is True, (
                    pattern,
                    verdict.message if isinstance(verdict, RestError) else verdict,
                )


def _fake_users_route(server: RestServer) -> None:
    """A stand-in for the users route (another issue's work) when it is not registered."""
    if any(p.startswith("/site/v2/users/(?P<id>") for p in server.get_routes("site/v2")):
        return

    def user(request: RestRequest) -> dict[str, Any]:
        return {"id": int(request.get_param("id")), "name": "stand-in"}

    server.register_rest_route(
        "site/v2",
        "/users/(?P<id>[\\d]+)",
        {"methods": "GET", "callback": user, "permission_callback": return_true},
    )


def test_embedding_a_post_embeds_its_author_replies_and_terms(app_factory: AppFactory) -> None:
    app = app_factory()
    app.hooks.add_action("rest_api_init", _fake_users_route)
    author = app.auth.users.create("writer", "password123", "author")
    tag = app.content.create_term("post_tag", "Embedded")
    post = app.content.create_post(title="E", status="publish", author=author.id, term_ids=[tag.id])
    app.content.add_comment(post_id=post.id, content="reply", status="approve")
    data = body(Client(app).get(f"/site-json/site/v2/posts/{post.id}?_embed=1"))
    embedded = data["_embedded"]
    assert embedded["author"][0]["id"] == author.id
    assert embedded["replies"][0][0]["content"]["rendered"] == "<p>reply</p>"
    assert [[term["name"] for term in group] for group in embedded["wp:term"]] == [[], ["Embedded"]]
    links = data["_links"]
    assert links["author"][0]["href"] == f"http://example.org/site-json/site/v2/users/{author.id}"
    assert [link["taxonomy"] for link in links["wp:term"]] == ["category", "post_tag"]


@pytest.mark.parametrize(
    ("route", "role", "status"),
    [
        ("posts", None, 401),
        ("posts", "subscriber", 403),
        ("posts", "editor", 200),
        ("categories", None, 401),
        ("categories", "author", 403),
        ("comments", "contributor", 403),
        ("comments", "editor", 200),
        ("types/post", None, 401),
    ],
)
def test_context_edit_needs_the_capability(
    rest_site: RestSite, route: str, role: str | None, status: int
) -> None:
    response = rest_site.call("GET", f"/site/v2/{route}?context=edit", role)
    assert response.status_code == status
    if status != 200:
        assert body(response)["code"] == "rest_forbidden_context"


def test_view_context_hides_edit_fields(rest_site: RestSite) -> None:
    view = body(rest_site.call("GET", f"/site/v2/posts/{rest_site.ids['post']}"))
    assert "raw" not in view["title"]
    assert "password" not in view
    edit = body(
        rest_site.call("GET", f"/site/v2/posts/{rest_site.ids['post']}?context=edit", "editor")
    )
    assert "raw" in edit["title"]
    assert "password" in edit


def test_collections_paginate_with_totals_and_links(rest_site: RestSite) -> None:
    response = rest_site.call("GET", "/site/v2/posts?per_page=5&page=2&search=cache")
    total = int(response.headers["X-Site-Total"])
    assert int(response.headers["X-Site-TotalPages"]) == -(-total // 5)
    assert response.headers["Link"] == (
        '<http://example.org/site-json/site/v2/posts?per_page=5&page=1&search=cache>; rel="prev", '
        '<http://example.org/site-json/site/v2/posts?per_page=5&page=3&search=cache>; rel="next"'
    )
    assert len(body(response)) == 5
    assert rest_site.call("GET", "/site/v2/posts?per_page=101").status_code == 400
    beyond = rest_site.call("GET", "/site/v2/posts?per_page=100&page=99")
    assert body(beyond)["code"] == "rest_post_invalid_page_number"


def test_drafts_and_held_comments_are_not_public(rest_site: RestSite) -> None:
    assert rest_site.call("GET", "/site/v2/posts?status=draft").status_code == 400
    drafts = rest_site.call("GET", "/site/v2/posts?status=draft", "editor")
    assert drafts.status_code == 200
    assert body(drafts)
    draft_id = body(drafts)[0]["id"]
    assert rest_site.call("GET", f"/site/v2/posts/{draft_id}").status_code == 401
    assert rest_site.call("GET", "/site/v2/comments?status=hold").status_code == 401
    assert rest_site.call("GET", "/site/v2/comments?status=hold", "subscriber").status_code == 403
    held = body(rest_site.call("GET", "/site/v2/comments?status=hold", "editor"))
    assert rest_site.call("GET", f"/site/v2/comments/{held[0]['id']}").status_code == 401


@pytest.mark.parametrize(
    ("role", "payload", "status"),
    [
        (None, {"title": "x"}, 401),
        ("subscriber", {"title": "x"}, 403),
        ("contributor", {"title": "x", "status": "publish"}, 403),
        ("contributor", {"title": "x", "status": "pending"}, 201),
        ("author", {"title": "x", "status": "publish"}, 201),
        ("author", {"title": "x", "author": 1}, 403),
    ],
)
def test_writing_posts_follows_the_capabilities(
    rest_site: RestSite, role: str | None, payload: dict[str, Any], status: int
) -> None:
    assert rest_site.call("POST", "/site/v2/posts", role, payload).status_code == status


def test_an_author_cannot_edit_someone_elses_post_but_an_editor_can(rest_site: RestSite) -> None:
    made = body(rest_site.call("POST", "/site/v2/posts", "editor", {"title": "Editor's"}))
    path = f"/site/v2/posts/{made['id']}"
    assert rest_site.call("POST", path, "author", {"title": "Mine now"}).status_code == 403
    assert rest_site.call("POST", path, "administrator", {"title": "Fixed"}).status_code == 200
    assert rest_site.call("DELETE", path, "author").status_code == 403


def test_rest_writes_go_through_the_service_and_fire_hooks(rest_site: RestSite) -> None:
    seen: list[tuple[str, int]] = []
    hooks = rest_site.app.hooks
    hooks.add_action("save_post", lambda post_id: seen.append(("save_post", post_id)))
    hooks.add_action("deleted_post", lambda post_id: seen.append(("deleted_post", post_id)))
    made = body(
        rest_site.call("POST", "/site/v2/posts", "editor", {"title": "Hooked", "status": "publish"})
    )
    rest_site.call("POST", f"/site/v2/posts/{made['id']}", "editor", {"content": "more"})
    trashed = rest_site.call("DELETE", f"/site/v2/posts/{made['id']}", "editor")
    assert body(trashed)["status"] == "trash"
    gone = rest_site.call("DELETE", f"/site/v2/posts/{made['id']}?force=true", "editor")
    assert body(gone)["deleted"] is True
    assert seen == [("save_post", made["id"])] * 3 + [("deleted_post", made["id"])]


def test_terms_need_force_to_delete_and_the_default_category_stays(rest_site: RestSite) -> None:
    made = body(rest_site.call("POST", "/site/v2/tags", "editor", {"name": "Short-lived"}))
    path = f"/site/v2/tags/{made['id']}"
    assert rest_site.call("DELETE", path, "editor").status_code == 501
    assert rest_site.call("DELETE", path + "?force=true", "editor").status_code == 200
    assert rest_site.call("GET", path).status_code == 404
    default = rest_site.app.content.get_option("default_category")
    assert (
        rest_site.call(
            "DELETE", f"/site/v2/categories/{default}?force=true", "administrator"
        ).status_code
        == 403
    )
    assert rest_site.call("POST", "/site/v2/tags", "author", {"name": "No"}).status_code == 403


def test_comments_over_rest_need_a_login_and_moderators_moderate(rest_site: RestSite) -> None:
    post = rest_site.ids["post"]
    assert (
        rest_site.call(
            "POST", "/site/v2/comments", None, {"post": post, "content": "hi"}
        ).status_code
        == 401
    )
    mine = rest_site.call(
        "POST", "/site/v2/comments", "subscriber", {"post": post, "content": "hi"}
    )
    assert mine.status_code == 201
    assert body(mine)["author"] > 0
    forced = rest_site.call(
        "POST",
        "/site/v2/comments",
        "subscriber",
        {"post": post, "content": "x", "status": "approve"},
    )
    assert forced.status_code == 403
    path = f"/site/v2/comments/{body(mine)['id']}"
    assert rest_site.call("POST", path, "subscriber", {"status": "approve"}).status_code == 403
    assert (
        body(rest_site.call("POST", path, "editor", {"status": "approve"}))["status"] == "approved"
    )


def test_settings_are_for_administrators_and_validated(rest_site: RestSite) -> None:
    assert rest_site.call("GET", "/site/v2/settings", "editor").status_code == 403
    bad = rest_site.call("POST", "/site/v2/settings", "administrator", {"posts_per_page": 0})
    assert bad.status_code == 400
    for structure in ("/\x8e\x99/", "/%postname% /", '/"%postname%"/', "/café/%postname%/"):
        refused = rest_site.call(
            "POST", "/site/v2/settings", "administrator", {"permalink_structure": structure}
        )
        assert body(refused)["code"] == "rest_invalid_param", structure  # links stay URLs
    kept = body(rest_site.call("GET", "/site/v2/settings", "administrator"))
    assert kept["permalink_structure"] == "/%postname%/"
    changed: list[Any] = []
    rest_site.app.hooks.add_action("updated_option", lambda *args: changed.append(args))
    good = rest_site.call("POST", "/site/v2/settings", "administrator", {"posts_per_page": 7})
    assert body(good)["posts_per_page"] == 7
    assert changed == [("posts_per_page", 10, 7)]
    rest_site.app.content.update_option("posts_per_page", 10)


def test_statuses_other_than_publish_are_hidden_from_anonymous_callers(rest_site: RestSite) -> None:
    assert list(body(rest_site.call("GET", "/site/v2/statuses"))) == ["publish"]
    assert len(body(rest_site.call("GET", "/site/v2/statuses", "contributor"))) == 6
    assert rest_site.call("GET", "/site/v2/statuses/draft").status_code == 401


def test_search_finds_posts_and_terms(rest_site: RestSite) -> None:
    posts = body(rest_site.call("GET", "/site/v2/search?search=gzip&per_page=3"))
    assert posts
    assert all(item["type"] == "post" for item in posts)
    terms = body(rest_site.call("GET", "/site/v2/search?search=sqlite&type=term"))
    assert [item["title"] for item in terms] == ["sqlite"]


def test_keyed_collections_filter_each_item_by_context(rest_site: RestSite) -> None:
    statuses = body(rest_site.call("GET", "/site/v2/statuses", "editor"))
    assert "private" in statuses
    assert "show_in_list" not in statuses["draft"]
    edit = body(rest_site.call("GET", "/site/v2/types?context=edit", "editor"))
    assert edit["post"]["supports"]["title"] is True
    assert "supports" not in body(rest_site.call("GET", "/site/v2/types"))["post"]


def test_category_and_tag_filters_must_both_match(app_factory: AppFactory) -> None:
    app = app_factory()
    app.content.create_term("category", "Uncategorized")  # the default category, id 1
    category = app.content.create_term("category", "Cat")
    tag = app.content.create_term("post_tag", "Tag")
    both = app.content.create_post(title="Both", status="publish", term_ids=[category.id, tag.id])
    app.content.create_post(title="Cat only", status="publish", term_ids=[category.id])
    app.content.create_post(title="Tag only", status="publish", term_ids=[tag.id])
    client = Client(app)
    found = body(client.get(f"/site-json/site/v2/posts?categories={category.id}&tags={tag.id}"))
    assert [post["id"] for post in found] == [both.id]
    assert len(body(client.get(f"/site-json/site/v2/posts?tags={tag.id}"))) == 2


@pytest.mark.parametrize(
    ("date", "expected"),
    [
        ("1000-00-00T00:00:00", "0999-11-30T00:00:00"),
        ("0042-07-04T12:00:00", "0042-07-04T12:00:00"),
    ],
)
def test_dates_before_the_year_1000_keep_four_digits(
    rest_site: RestSite, date: str, expected: str
) -> None:
    """Found by sitecache.testing.check_routes (#20): "1000-00-00T00:00:00" is a valid date
    (month and day 0 roll back) for the year 999, which strftime wrote "999-11-30T00:00:00",
    a date the post's own schema refuses. PHP's ``Y`` writes at least four digits."""
    made = body(rest_site.call("POST", "/site/v2/posts", "editor", {"title": "Old", "date": date}))
    assert made["date"] == expected
    assert made["date_gmt"] == expected
    assert validate_value_from_schema(made["date"], {"type": "string", "format": "date-time"})


BEYOND_64_BITS = 10**19
HUGE_INTEGER_PATHS = [
    f"/site/v2/{path}"
    for path in (
        "posts/{n}", "pages/{n}", "comments/{n}", "categories/{n}", "tags/{n}", "users/{n}",
        "posts?include[]={n}", "posts?author={n}", "posts?categories={n}", "posts?exclude={n}",
        "posts?offset={n}", "posts?page={n}", "pages?parent={n}", "comments?post={n}",
        "comments?page={n}", "categories?post={n}", "categories?parent={n}", "tags?offset={n}",
        "search?include={n}", "users?include={n}", "users?offset={n}", "users?page={n}",
        "posts/{n}/revisions", "posts/1/revisions/{n}", "pages/{n}/autosaves",
        "posts/1/autosaves/{n}", "posts/1/revisions?offset={n}", "posts/1/revisions?page={n}",
        "posts/1/revisions?include={n}",
    )
]  # fmt: skip


@pytest.mark.parametrize("path", HUGE_INTEGER_PATHS)
def test_integers_beyond_64_bits_find_nothing_rather_than_fail(
    rest_site: RestSite, path: str
) -> None:
    """Found by sitecache.testing.check_routes (#20): an id, page or offset beyond SQLite's
    64-bit integers raised OverflowError (a 500); clamped as PHP clamps it, it finds nothing."""
    answer = rest_site.call("GET", path.format(n=BEYOND_64_BITS), "administrator")
    assert answer.status_code in (200, 400, 404), answer.text
    assert answer.mimetype == "application/json"
