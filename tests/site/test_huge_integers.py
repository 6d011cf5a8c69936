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
