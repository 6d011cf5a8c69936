"""The user routes: ``site/v2/users``, ``/users/<id>`` and ``/users/me``.

Listing is paginated (``X-Site-Total``, ``X-Site-TotalPages``, ``Link`` prev/next); callers
without ``list_users`` see only users with published posts (the ``published_author_ids``
filter, empty until content exists) and never the edit context; create, update and delete need
``create_users``, ``edit_user``/``promote_user`` and ``delete_users``, with 401 for anonymous
callers and 403 for logged-in ones; the site's last administrator is never deleted or demoted.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from werkzeug.test import TestResponse

from tests.auth.conftest import PASSWORD, Site, basic
from tests.conftest import both_engines

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


USERS = "/site-json/site/v2/users"
VIEW_FIELDS = {"id", "name", "url", "description", "link", "slug", "avatar_urls", "meta", "_links"}
EDIT_FIELDS = VIEW_FIELDS | {
    "username",
    "first_name",
    "last_name",
    "email",
    "locale",
    "nickname",
    "roles",
    "registered_date",
    "capabilities",
    "extra_capabilities",
}
EMBED_FIELDS = VIEW_FIELDS - {"meta"}


def call(
    site: Site,
    role: str | None,
    method: str,
    path: str,
    json: Any = None,
    query: dict[str, Any] | None = None,
) -> TestResponse:
    headers = site.basic(role) if role else {}
    return site.client().open(path, method=method, headers=headers, json=json, query_string=query)


def publish(site: Site, *roles: str) -> None:
    """Pretend the users with ``roles`` have published posts (what the content store says)."""
    ids = {site.users[role].id for role in roles}
    site.app.hooks.add_filter("published_author_ids", lambda value: {*value, *ids})


def logins(response: TestResponse) -> list[str]:
    return [item["slug"] for item in response.get_json()]


# ---------------------------------------------------------------------- listing
def test_anonymous_callers_see_no_user_until_someone_has_published(site: Site) -> None:
    response = call(site, None, "GET", USERS)
    assert response.status_code == 200
    assert response.get_json() == []
    assert response.headers["X-Site-Total"] == "0"
    assert response.headers["X-Site-TotalPages"] == "0"


def test_published_authors_are_listed_to_everybody_in_the_view_context(site: Site) -> None:
    publish(site, "author")
    response = call(site, None, "GET", USERS)
    assert response.status_code == 200
    (item,) = response.get_json()
    assert set(item) == VIEW_FIELDS
    assert item["slug"] == "aurora"
    assert item["link"] == "http://example.org/author/aurora/"
    assert item["meta"] == {}
    assert item["_links"]["collection"][0]["href"] == "http://example.org/site-json/site/v2/users"
    assert item["_links"]["self"][0]["href"].endswith(f"/site/v2/users/{item['id']}")


def test_an_administrator_lists_every_user_with_every_field(site: Site) -> None:
    response = call(site, "administrator", "GET", USERS, query={"context": "edit"})
    assert response.status_code == 200
    assert response.headers["X-Site-Total"] == "5"
    for item in response.get_json():
        assert set(item) == EDIT_FIELDS
    ada = next(item for item in response.get_json() if item["username"] == "ada")
    assert ada["roles"] == ["administrator"]
    assert ada["email"] == "ada@example.org"
    assert ada["capabilities"]["manage_options"] is True
    assert ada["capabilities"]["administrator"] is True
    assert ada["extra_capabilities"] == {"administrator": True}
    assert ada["registered_date"] == "2023-11-14T22:13:20+00:00"


def test_the_list_is_ordered_by_name_by_default(site: Site) -> None:
    response = call(site, "administrator", "GET", USERS)
    assert logins(response) == ["ada", "aurora", "connie", "eddie", "sam"]
    response = call(site, "administrator", "GET", USERS, query={"orderby": "id", "order": "desc"})
    assert logins(response) == ["sam", "connie", "aurora", "eddie", "ada"]


def test_pages_carry_totals_and_prev_next_links_that_keep_the_query(site: Site) -> None:
    first = call(site, "administrator", "GET", USERS, query={"per_page": 2, "search": "e"})
    # "e" matches every e-mail address (@example.org).
    assert first.headers["X-Site-Total"] == "5"
    assert first.headers["X-Site-TotalPages"] == "3"
    # As in WordPress, the route's own Link header replaces the API-root link.
    link = first.headers["Link"]
    assert 'rel="https://api.w.org/"' not in link
    assert 'per_page=2&search=e&page=2>; rel="next"' in link
    assert 'rel="prev"' not in link
    middle = call(site, "administrator", "GET", USERS, query={"per_page": 2, "page": 2})
    assert logins(middle) == ["connie", "eddie"]
    assert 'page=1>; rel="prev"' in middle.headers["Link"]
    assert 'page=3>; rel="next"' in middle.headers["Link"]
    last = call(site, "administrator", "GET", USERS, query={"per_page": 2, "page": 3})
    assert logins(last) == ["sam"]
    assert 'rel="next"' not in last.headers["Link"]


def test_a_page_past_the_end_is_empty_and_points_back_to_the_last_page(site: Site) -> None:
    response = call(site, "administrator", "GET", USERS, query={"per_page": 2, "page": 9})
    assert response.status_code == 200
    assert response.get_json() == []
    assert 'page=3>; rel="prev"' in response.headers["Link"]


@pytest.mark.parametrize(("name", "value"), [("per_page", 101), ("per_page", 0), ("page", 0)])
def test_pagination_arguments_are_bounded(site: Site, name: str, value: int) -> None:
    response = call(site, "administrator", "GET", USERS, query={name: value})
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_invalid_param"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"search": "EDD"}, ["eddie"]),
        ({"search": "*ada*"}, ["ada"]),
        ({"search": "%"}, []),
        ({"roles": "editor,author"}, ["aurora", "eddie"]),
        ({"slug": "sam,ada"}, ["ada", "sam"]),
        ({"exclude": "1,2,3"}, ["connie", "sam"]),
        ({"include": "5,1", "orderby": "include"}, ["sam", "ada"]),
        ({"offset": 3, "orderby": "id"}, ["connie", "sam"]),
    ],
)
def test_the_collection_can_be_narrowed(
    site: Site, query: dict[str, Any], expected: list[str]
) -> None:
    response = call(site, "administrator", "GET", USERS, query=query)
    assert response.status_code == 200, response.get_json()
    assert logins(response) == expected


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ({"context": "edit"}, "rest_forbidden_context"),
        ({"orderby": "email"}, "rest_forbidden_orderby"),
        ({"orderby": "registered_date"}, "rest_forbidden_orderby"),
        ({"roles": "administrator"}, "rest_user_cannot_view"),
        ({"who": "authors"}, "rest_forbidden_who"),
    ],
)
def test_listing_needs_capabilities_401_anonymous_403_logged_in(
    site: Site, query: dict[str, Any], code: str
) -> None:
    anonymous = call(site, None, "GET", USERS, query=query)
    assert (anonymous.status_code, anonymous.get_json()["code"]) == (401, code)
    subscriber = call(site, "subscriber", "GET", USERS, query=query)
    assert (subscriber.status_code, subscriber.get_json()["code"]) == (403, code)


def test_a_search_without_list_users_never_matches_email_addresses(site: Site) -> None:
    publish(site, "author", "editor")
    by_mail = call(site, "subscriber", "GET", USERS, query={"search": "aurora@example"})
    assert by_mail.get_json() == []
    by_name = call(site, None, "GET", USERS, query={"search": "auro"})
    assert logins(by_name) == ["aurora"]
    admin = call(site, "administrator", "GET", USERS, query={"search": "aurora@example"})
    assert logins(admin) == ["aurora"]


def test_who_authors_lists_everyone_who_can_write_posts_to_a_writer(site: Site) -> None:
    response = call(site, "contributor", "GET", USERS, query={"who": "authors"})
    assert response.status_code == 200
    assert logins(response) == ["ada", "aurora", "connie", "eddie"]


# ---------------------------------------------------------------------- one user
def test_a_user_reads_themself_in_any_context(site: Site) -> None:
    sam = site.users["subscriber"]
    response = call(site, "subscriber", "GET", f"{USERS}/{sam.id}", query={"context": "edit"})
    assert response.status_code == 200
    assert set(response.get_json()) == EDIT_FIELDS
    assert response.get_json()["email"] == "sam@example.org"


def test_a_user_without_list_users_cannot_see_an_unpublished_user_or_tell_if_it_exists(
    site: Site,
) -> None:
    ada = site.users["administrator"]
    hidden = call(site, "subscriber", "GET", f"{USERS}/{ada.id}")
    unknown = call(site, "subscriber", "GET", f"{USERS}/999")
    assert hidden.status_code == unknown.status_code == 403
    assert hidden.get_json() == unknown.get_json()
    assert hidden.get_json()["code"] == "rest_user_cannot_view"
    anonymous = call(site, None, "GET", f"{USERS}/{ada.id}")
    assert (anonymous.status_code, anonymous.get_json()["code"]) == (401, "rest_user_cannot_view")


def test_a_published_author_is_public_in_the_view_context_only(site: Site) -> None:
    publish(site, "author")
    aurora = site.users["author"]
    response = call(site, None, "GET", f"{USERS}/{aurora.id}")
    assert response.status_code == 200
    assert set(response.get_json()) == VIEW_FIELDS
    embed = call(site, None, "GET", f"{USERS}/{aurora.id}", query={"context": "embed"})
    assert set(embed.get_json()) == EMBED_FIELDS
    edit = call(site, None, "GET", f"{USERS}/{aurora.id}", query={"context": "edit"})
    assert (edit.status_code, edit.get_json()["code"]) == (401, "rest_forbidden_context")


def test_an_administrator_gets_404_for_an_unknown_user(site: Site) -> None:
    response = call(site, "administrator", "GET", f"{USERS}/999")
    assert (response.status_code, response.get_json()["code"]) == (404, "rest_user_invalid_id")


def test_me_is_the_current_user(site: Site) -> None:
    response = call(site, "editor", "GET", f"{USERS}/me", query={"context": "edit"})
    assert response.status_code == 200
    assert response.get_json()["id"] == site.users["editor"].id
    assert response.get_json()["roles"] == ["editor"]


def test_me_answers_401_not_logged_in_but_allows_get(site: Site) -> None:
    response = call(site, None, "GET", f"{USERS}/me")
    assert response.status_code == 401
    assert response.get_json() == {
        "code": "rest_not_logged_in",
        "message": "You are not currently logged in.",
        "data": {"status": 401},
    }
    assert response.headers["Allow"] == "GET"


def test_avatar_urls_come_in_24_48_and_96_pixels_from_the_hashed_address(site: Site) -> None:
    response = call(site, "subscriber", "GET", f"{USERS}/me")
    avatars = response.get_json()["avatar_urls"]
    digest = hashlib.sha256(b"sam@example.org").hexdigest()
    assert avatars == {
        str(size): f"https://secure.gravatar.com/avatar/{digest}?s={size}&d=mm&r=g"
        for size in (24, 48, 96)
    }


def test_avatar_sizes_and_urls_are_filterable_and_the_schema_follows(site: Site) -> None:
    site.app.hooks.add_filter("rest_avatar_sizes", lambda sizes: [32, 64])
    site.app.hooks.add_filter(
        "get_avatar_url", lambda url, user, size: f"https://avatars.example/{user.slug}/{size}.png"
    )
    response = call(site, "subscriber", "GET", f"{USERS}/me")
    assert response.get_json()["avatar_urls"] == {
        "32": "https://avatars.example/sam/32.png",
        "64": "https://avatars.example/sam/64.png",
    }
    options = call(site, None, "OPTIONS", USERS)
    assert set(options.get_json()["schema"]["properties"]["avatar_urls"]["properties"]) == {
        "32",
        "64",
    }


def test_options_publish_the_user_schema_and_the_arguments(site: Site) -> None:
    response = call(site, None, "OPTIONS", USERS)
    assert response.status_code == 200
    schema = response.get_json()["schema"]
    assert schema["title"] == "user"
    assert schema["properties"]["password"]["context"] == []
    get_args, post_args = (endpoint["args"] for endpoint in response.get_json()["endpoints"])
    assert get_args["per_page"]["maximum"] == 100
    assert {"page", "per_page", "search", "orderby", "order", "roles", "who"} <= set(get_args)
    assert {name for name, arg in post_args.items() if arg.get("required")} == {
        "username",
        "email",
        "password",
    }
    assert "id" not in post_args
    assert "link" not in post_args


def test_the_index_lists_the_user_routes(site: Site) -> None:
    routes = call(site, None, "GET", "/site-json/site/v2").get_json()["routes"]
    assert {"/site/v2/users", "/site/v2/users/(?P<id>[\\d]+)", "/site/v2/users/me"} <= set(routes)


# ---------------------------------------------------------------------- creating
NEW_USER = {
    "username": "Jo Smith",
    "email": "jo@example.org",
    "password": "jo-password-1",
    "name": "Jo <b>Smith</b>",
    "first_name": "Jo",
    "last_name": "Smith",
    "url": "https://jo.example",
    "description": "Writes about caches.",
}


def test_an_administrator_creates_a_user_who_can_then_log_in(site: Site) -> None:
    response = call(site, "administrator", "POST", USERS, json=NEW_USER)
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert response.headers["Location"] == f"http://example.org{USERS}/{body['id']}"
    assert set(body) == EDIT_FIELDS
    assert body["username"] == "Jo Smith"
    assert body["slug"] == "jo-smith"
    assert body["name"] == "Jo Smith"  # sanitize_text_field drops the tags
    assert body["roles"] == ["subscriber"]
    assert (body["first_name"], body["last_name"]) == ("Jo", "Smith")
    assert body["url"] == "https://jo.example"
    assert body["link"] == "http://example.org/author/jo-smith/"
    assert "password" not in body
    me = site.client().get(f"{USERS}/me", headers=basic("Jo Smith", "jo-password-1"))
    # Basic auth with a login password is not an application password: refused.
    assert me.status_code == 401
    user = site.app.auth.users.find("jo@example.org")
    assert user is not None
    assert site.app.auth.users.check_password(user, "jo-password-1")


def test_creating_with_a_role_sets_it(site: Site) -> None:
    response = call(site, "administrator", "POST", USERS, json={**NEW_USER, "roles": ["editor"]})
    assert response.status_code == 201
    assert response.get_json()["roles"] == ["editor"]


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"roles": ["overlord"]}, 400, "rest_user_invalid_role"),
        ({"roles": ["editor", "author"]}, 400, "rest_user_invalid_role"),
        ({"username": "bad/name"}, 400, "rest_invalid_param"),
        ({"password": "short"}, 400, "rest_invalid_param"),
        ({"password": "back\\slash-long"}, 400, "rest_invalid_param"),
        ({"email": "not-an-address"}, 400, "rest_invalid_param"),
        ({"locale": "fr_FR"}, 400, "rest_invalid_param"),
        ({"username": "ada"}, 409, "existing_user_login"),
        ({"email": "ADA@example.org"}, 409, "existing_user_email"),
        ({"slug": "ada"}, 400, "rest_user_invalid_slug"),
    ],
)
def test_creating_refuses_bad_input(
    site: Site, change: dict[str, Any], status: int, code: str
) -> None:
    response = call(site, "administrator", "POST", USERS, json={**NEW_USER, **change})
    assert (response.status_code, response.get_json()["code"]) == (status, code), (
        response.get_json()
    )
    assert site.app.auth.users.find("Jo Smith") is None


@pytest.mark.parametrize("missing", ["username", "email", "password"])
def test_creating_needs_a_username_an_email_and_a_password(site: Site, missing: str) -> None:
    fields = {key: value for key, value in NEW_USER.items() if key != missing}
    response = call(site, "administrator", "POST", USERS, json=fields)
    assert (response.status_code, response.get_json()["code"]) == (
        400,
        "rest_missing_callback_param",
    )


def test_creating_needs_create_users(site: Site) -> None:
    anonymous = call(site, None, "POST", USERS, json=NEW_USER)
    assert (anonymous.status_code, anonymous.get_json()["code"]) == (401, "rest_cannot_create_user")
    editor = call(site, "editor", "POST", USERS, json=NEW_USER)
    assert (editor.status_code, editor.get_json()["code"]) == (403, "rest_cannot_create_user")


# ---------------------------------------------------------------------- updating
def test_a_user_edits_their_own_profile(site: Site) -> None:
    change = {"name": "Sam S.", "description": "Reader.", "nickname": "sammy", "locale": "en_US"}
    response = call(site, "subscriber", "POST", f"{USERS}/me", json=change)
    assert response.status_code == 200, response.get_json()
    assert {key: response.get_json()[key] for key in change} == change
    again = call(site, "subscriber", "GET", f"{USERS}/me", query={"context": "edit"})
    assert again.get_json()["nickname"] == "sammy"


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_an_administrator_edits_anyone_and_changes_roles(site: Site, method: str) -> None:
    sam = site.users["subscriber"]
    response = call(
        site, "administrator", method, f"{USERS}/{sam.id}", json={"roles": ["editor"], "slug": "S"}
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["roles"] == ["editor"]
    assert response.get_json()["slug"] == "s"
    stored = site.app.auth.users.get(sam.id)
    assert stored is not None
    assert stored.role == "editor"


def test_a_new_password_replaces_the_old_one(site: Site) -> None:
    response = call(site, "subscriber", "PUT", f"{USERS}/me", json={"password": "new-password-9"})
    assert response.status_code == 200
    sam = site.users["subscriber"]
    assert site.app.auth.users.check_password(sam, "new-password-9")
    assert not site.app.auth.users.check_password(sam, PASSWORD)


@pytest.mark.parametrize(
    ("role", "target", "change", "status", "code"),
    [
        ("subscriber", "editor", {"name": "X"}, 403, "rest_cannot_edit"),
        (None, "editor", {"name": "X"}, 401, "rest_cannot_edit"),
        ("subscriber", "subscriber", {"roles": ["administrator"]}, 403, "rest_cannot_edit_roles"),
        ("administrator", "administrator", {"roles": ["editor"]}, 403, "rest_user_invalid_role"),
        ("subscriber", "subscriber", {"username": "other"}, 400, "rest_user_invalid_argument"),
        ("subscriber", "subscriber", {"email": "ada@example.org"}, 400, "rest_user_invalid_email"),
        ("subscriber", "subscriber", {"slug": "ada"}, 400, "rest_user_invalid_slug"),
        ("subscriber", "subscriber", {"slug": "!!"}, 400, "rest_invalid_param"),
    ],
)
def test_updating_refuses_what_the_caller_may_not_do(
    site: Site, role: str | None, target: str, change: dict[str, Any], status: int, code: str
) -> None:
    user = site.users[target]
    response = call(site, role, "POST", f"{USERS}/{user.id}", json=change)
    assert (response.status_code, response.get_json()["code"]) == (status, code), (
        response.get_json()
    )
    assert site.app.auth.users.get(user.id) == user


def test_updating_an_unknown_user_looks_forbidden_without_list_users(site: Site) -> None:
    subscriber = call(site, "subscriber", "POST", f"{USERS}/999", json={"name": "X"})
    assert (subscriber.status_code, subscriber.get_json()["code"]) == (403, "rest_cannot_edit")
    admin = call(site, "administrator", "POST", f"{USERS}/999", json={"name": "X"})
    assert (admin.status_code, admin.get_json()["code"]) == (404, "rest_user_invalid_id")


# ---------------------------------------------------------------------- deleting
def test_deleting_answers_the_previous_user_and_removes_their_passwords(site: Site) -> None:
    sam = site.users["subscriber"]
    site.app_password("subscriber")
    seen: list[tuple[Any, ...]] = []
    site.app.hooks.add_action("delete_user", lambda *args: seen.append(args))
    ada = site.users["administrator"]
    response = call(
        site,
        "administrator",
        "DELETE",
        f"{USERS}/{sam.id}",
        query={"force": "true", "reassign": ada.id},
    )
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["deleted"] is True
    previous = response.get_json()["previous"]
    assert previous["username"] == "sam"
    assert previous["email"] == "sam@example.org"
    assert site.app.auth.users.get(sam.id) is None
    assert site.app.auth.app_passwords.list(sam) == []
    assert seen[0][:2] == (sam.id, ada.id)


@pytest.mark.parametrize("nobody", ["false", "0", ""])
def test_reassign_may_name_nobody_while_there_is_nothing_to_reassign(
    site: Site, nobody: str
) -> None:
    seen: list[tuple[Any, ...]] = []
    site.app.hooks.add_action("deleted_user", lambda *args: seen.append(args))
    sam = site.users["subscriber"]
    response = call(
        site,
        "administrator",
        "DELETE",
        f"{USERS}/{sam.id}",
        query={"force": "true", "reassign": nobody},
    )
    assert response.status_code == 200, response.get_json()
    assert seen[0][:2] == (sam.id, None)


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ({"reassign": 1}, 501, "rest_trash_not_supported"),
        ({"force": "true"}, 400, "rest_missing_callback_param"),
        ({"force": "true", "reassign": 999}, 400, "rest_user_invalid_reassign"),
        ({"force": "true", "reassign": "self"}, 400, "rest_user_invalid_reassign"),
        ({"force": "true", "reassign": "someone"}, 400, "rest_invalid_param"),
    ],
)
def test_deleting_needs_force_and_a_valid_reassign(
    site: Site, query: dict[str, Any], status: int, code: str
) -> None:
    sam = site.users["subscriber"]
    if query.get("reassign") == "self":
        query = {**query, "reassign": sam.id}
    response = call(site, "administrator", "DELETE", f"{USERS}/{sam.id}", query=query)
    assert (response.status_code, response.get_json()["code"]) == (status, code), (
        response.get_json()
    )
    assert site.app.auth.users.get(sam.id) is not None


@pytest.mark.parametrize("path", ["{id}", "me"])
def test_deleting_needs_delete_users_even_for_yourself(site: Site, path: str) -> None:
    sam = site.users["subscriber"]
    url = f"{USERS}/{path.format(id=sam.id)}"
    query = {"force": "true", "reassign": "false"}
    response = call(site, "subscriber", "DELETE", url, query=query)
    assert (response.status_code, response.get_json()["code"]) == (403, "rest_user_cannot_delete")
    anonymous = call(site, None, "DELETE", f"{USERS}/{sam.id}", query=query)
    assert (anonymous.status_code, anonymous.get_json()["code"]) == (401, "rest_user_cannot_delete")
    assert site.app.auth.users.get(sam.id) is not None


def test_the_last_administrator_cannot_delete_themself(site: Site) -> None:
    seen: list[tuple[Any, ...]] = []
    site.app.hooks.add_action("delete_user", lambda *args: seen.append(args))
    query = {"force": "true", "reassign": "false"}
    response = call(site, "administrator", "DELETE", f"{USERS}/me", query=query)
    assert (response.status_code, response.get_json()["code"]) == (
        409,
        "rest_user_last_administrator",
    )
    assert site.app.auth.users.count_role("administrator") == 1
    assert seen == []  # nothing was given away


def test_an_administrator_may_delete_another_administrator(site: Site) -> None:
    second = site.app.auth.users.create("bea", PASSWORD, "administrator", "bea@example.org")
    query = {"force": "true", "reassign": "false"}
    response = call(site, "administrator", "DELETE", f"{USERS}/{second.id}", query=query)
    assert response.status_code == 200
    assert site.app.auth.users.count_role("administrator") == 1


def test_users_can_be_created_in_a_batch_as_in_wordpress(site: Site) -> None:
    requests = [
        {
            "method": "POST",
            "path": "/site/v2/users",
            "body": {**NEW_USER, "username": f"b{i}", "email": f"b{i}@example.org"},
        }
        for i in range(2)
    ]
    response = call(
        site, "administrator", "POST", "/site-json/batch/v1", json={"requests": requests}
    )
    assert response.status_code == 207, response.get_json()
    assert [item["status"] for item in response.get_json()["responses"]] == [201, 201]
    assert site.app.auth.users.find("b1") is not None
