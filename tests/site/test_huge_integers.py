"""Integers past SQLite's 64 bits in a request are never a 500 (#19 schemathesis, #20
check_routes): the site clamps them to SQLite's range as PHP clamps WordPress's integers, so
they name no row; any statement the clamp misses is refused as a 400 by the store's connection."""

from __future__ import annotations

import pytest

from sitecache.app import App
from sitecache.domain_errors import InvalidValueError
from tests.auth.conftest import build_site
from tests.conftest import both_engines

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


HUGE = str(2**63)


@pytest.mark.parametrize(
    ("path", "status", "answer"),
    [
        (f"/site-json/site/v2/posts?include={HUGE}", 200, []),
        (f"/site-json/site/v2/categories?exclude=-{HUGE}0", 200, None),
        (f"/site-json/site/v2/tags?post={HUGE}", 200, []),
        (f"/site-json/site/v2/posts/{HUGE}", 404, "rest_post_invalid_id"),
    ],
)
def test_a_number_sqlite_cannot_hold_names_no_row(
    app: App, path: str, status: int, answer: object
) -> None:
    site = build_site(app)
    response = site.client().get(path, headers=site.basic("administrator"))
    assert response.status_code == status, response.get_data(as_text=True)
    body = response.get_json()
    if isinstance(answer, str):
        assert body["code"] == answer
    elif answer is not None:
        assert body == answer
    else:
        assert isinstance(body, list)


def test_a_statement_the_clamp_misses_is_a_400_not_a_500(app: App) -> None:
    build_site(app)
    with pytest.raises(InvalidValueError) as raised:
        app.auth.store.connection().execute("SELECT ?", (2**63,))
    assert raised.value.code == "rest_invalid_param"


# ---------------------------------------------------------------------- named, not anonymous
@pytest.mark.parametrize(
    ("path", "body", "param", "where"),
    [
        ("/posts", {"title": "x", "author": 10**30}, "author", "author"),
        ("/posts", {"title": "x", "parent": 2**63}, "parent", "parent"),
        ("/posts", {"title": "x", "categories": [10**30]}, "categories", "categories[0]"),
        ("/posts", {"title": "x", "tags": [1, -(2**64)]}, "tags", "tags[1]"),
        ("/comments", {"post": 1, "content": "x", "parent": 10**30}, "parent", "parent"),
    ],
)
def test_a_body_integer_past_64_bits_is_a_400_naming_its_argument(
    app: App, path: str, body: dict[str, object], param: str, where: str
) -> None:
    site = build_site(app)
    post = app.content.create_post(title="Hello", status="publish")
    if path == "/comments":
        body = {**body, "post": post.id}
    response = site.client().post(
        f"/site-json/site/v2{path}", json=body, headers=site.basic("administrator")
    )
    assert response.status_code == 400, response.text
    error = response.get_json()
    assert error["code"] == "rest_invalid_param"
    assert error["message"] == f"Invalid parameter(s): {param}"
    assert error["data"]["status"] == 400
    message = f"{where} must be between {-(2**63)} (inclusive) and {2**63 - 1} (inclusive)"
    assert error["data"]["params"] == {param: message}
    assert error["data"]["details"][param]["code"] == "rest_invalid_param"
    assert error["data"]["details"][param]["message"] == message


@pytest.mark.parametrize("name", ["default_category", "revisions_to_keep"])
@pytest.mark.parametrize("value", [2**63, 10**30])
def test_an_integer_setting_past_64_bits_is_refused_by_name(
    app: App, name: str, value: int
) -> None:
    site = build_site(app)
    before = app.content.get_option(name)
    response = site.client().post(
        "/site-json/site/v2/settings", json={name: value}, headers=site.basic("administrator")
    )
    assert response.status_code == 400, response.text
    error = response.get_json()
    assert error["code"] == "rest_invalid_param"
    assert list(error["data"]["params"]) == [name]
    assert list(error["data"]["details"]) == [name]
    assert app.content.get_option(name) == before


def test_a_bad_stored_integer_option_reads_as_its_default_and_posts_still_save(
    app: App,
) -> None:
    site = build_site(app)
    category = app.content.create_term("category", "News")
    app.content.update_option("default_category", category.id)
    with app.content.batch():  # as a value stored before the bound existed
        app.content.options.write("default_category", 2**63)
        app.content.options.write("revisions_to_keep", 10**30)
    assert app.content.get_option("default_category") == 1
    assert app.content.get_option("revisions_to_keep") == 25
    response = site.client().post(
        "/site-json/site/v2/posts",
        json={"title": "Still saved", "content": "Text."},
        headers=site.basic("administrator"),
    )
    assert response.status_code == 201, response.text
    settings = site.client().get("/site-json/site/v2/settings", headers=site.basic("administrator"))
    assert settings.get_json()["default_category"] == 1
