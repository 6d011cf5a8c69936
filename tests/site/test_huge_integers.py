"""Integers past SQLite's 64 bits in a request are a 400, never a 500 (#19, schemathesis)."""

from __future__ import annotations

import pytest

from sitecache.app import App
from tests.auth.conftest import build_site

HUGE = str(2**63)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"/site-json/site/v2/posts?include={HUGE}"),
        ("GET", f"/site-json/site/v2/categories?exclude=-{HUGE}0"),
        ("GET", f"/site-json/site/v2/posts/{HUGE}"),
        ("GET", f"/site-json/site/v2/tags?post={HUGE}"),
    ],
)
def test_a_number_sqlite_cannot_hold_is_a_400(app: App, method: str, path: str) -> None:
    site = build_site(app)
    response = site.client().open(path, method=method, headers=site.basic("administrator"))
    assert response.status_code == 400, response.get_data(as_text=True)
    assert response.get_json()["code"] in ("rest_invalid_param", "rest_post_invalid_id")
