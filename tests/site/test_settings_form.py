"""One rule for numbers (#34): the cache dashboard's settings form accepts exactly the texts the
REST API accepts for the same setting, since it hands them to the API as typed (full-width and
Arabic-Indic digits and ``1_000`` used to pass the form through Python's ``int`` while the API
refused them)."""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from sitecache.cache.settings import SETTINGS_SCHEMA
from sitecache.site.settings_form import body_from_form
from tests.auth.conftest import Site, build_site
from tests.conftest import AppFactory
from tests.site.test_cache_dashboard import admin_of, post, settings_fields

#: Texts typed into a number field (max_age) or the number-or-text one (preload_posts).
TYPED = [
    "300",
    " 300 ",
    "+300",
    "300.0",
    "3e2",
    "\uff13\uff10\uff10",
    "٣٠٠",
    "1_000",
    "0x12c",
    "-5",
    "all",
]


@pytest.fixture
def site(app_factory: AppFactory) -> Site:
    return build_site(app_factory(application_passwords="on"))


def rest_answer(site: Site, body: dict[str, object]) -> tuple[int, object]:
    """The REST API's verdict on ``body`` (status, and the settings or the refused params)."""
    response = Client(site.app).post(
        "/site-json/site-cache/v1/settings", json=body, headers=site.basic("administrator")
    )
    data = response.get_json()
    return response.status_code, (
        {key: data[key] for key in body} if response.status_code == 200 else data["data"]["params"]
    )


@pytest.mark.parametrize("setting", ["max_age", "preload_posts"])
@pytest.mark.parametrize("text", TYPED)
def test_the_form_and_the_api_accept_the_same_texts(site: Site, setting: str, text: str) -> None:
    from_form = body_from_form(SETTINGS_SCHEMA, {f"f_{setting}": text})[setting]
    assert rest_answer(site, {setting: from_form}) == rest_answer(site, {setting: text})


def test_full_width_digits_are_refused_by_the_dashboard_as_by_the_api(site: Site) -> None:
    admin = admin_of(site)
    fields = settings_fields(admin)
    fields["f_max_age"] = "\uff13\uff10\uff10"
    status, html = post(admin, action="save_settings", **fields)
    assert status == 400
    assert 'id="error-max_age"' in html
    assert site.app.cache.engine.settings().max_age == 3600  # nothing saved
