"""The cache dashboard (``/site-admin/cache``) without a browser: who may see it, what it
renders without JavaScript, and its forms, which reach the cache only through the REST API."""

from __future__ import annotations

import pytest
from werkzeug.test import Client

from sitecache.site.dashboard import DASHBOARD_PATH
from tests.auth.conftest import Site, build_site, hidden_field, log_in
from tests.conftest import AppFactory

BASE = "http://example.org"


@pytest.fixture
def site(app_factory: AppFactory) -> Site:
    return build_site(app_factory())


def admin_of(site: Site, role: str = "administrator") -> Client:
    """A client holding a session of the user with ``role``, on the site's own host."""
    client = site.client()
    assert log_in(client, site.users[role].login, base_url=BASE).status_code == 303
    return client


def page(client: Client, query: str = "") -> str:
    response = client.get(DASHBOARD_PATH + query, base_url=BASE)
    assert response.status_code == 200, response.text
    return response.text


def post(client: Client, nonce: str | None = None, **fields: str) -> tuple[int, str]:
    data = {"_sitenonce": nonce if nonce is not None else hidden_field(page(client), "_sitenonce")}
    response = client.post(
        DASHBOARD_PATH, data={**data, **fields}, base_url=BASE, headers={"Origin": BASE}
    )
    return response.status_code, response.text


def settings_fields(client: Client) -> dict[str, str]:
    """The settings form as the browser would send it unchanged (text fields and ticked boxes)."""
    html = page(client)
    form = html[html.index('id="settings-form"') : html.index('id="settings-save"')]
    import re

    fields = dict(
        re.findall(r'<input type="(?:number|text)" id="[^"]+" name="([^"]+)" value="([^"]*)"', form)
    )
    fields.update(
        (name, "1")
        for name in re.findall(r'<input type="checkbox" name="([^"]+)" value="1" checked', form)
    )
    fields.update(re.findall(r'<textarea id="[^"]+" name="([^"]+)">([^<]*)</textarea>', form))
    for name, options in re.findall(r'<select id="[^"]+" name="([^"]+)">(.*?)</select>', form):
        fields[name] = re.findall(r"<option selected>([^<]+)</option>", options)[0]
    return fields


@pytest.mark.parametrize(
    ("role", "status"),
    [("administrator", 200), ("editor", 403), ("author", 403), ("subscriber", 403)],
)
def test_only_administrators_see_the_dashboard(site: Site, role: str, status: int) -> None:
    response = admin_of(site, role).get(DASHBOARD_PATH, base_url=BASE)
    assert response.status_code == status
    assert "no-store" in response.headers["Cache-Control"]
    assert ("Page cache" in response.text) is (status == 200)


def test_anonymous_visitors_are_sent_to_the_login_form(site: Site) -> None:
    response = site.client().get(DASHBOARD_PATH, base_url=BASE)
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/login?redirect_to=%2Fsite-admin%2Fcache")


def test_renders_every_part_without_javascript(site: Site) -> None:
    anonymous = site.client()
    assert anonymous.get("/", base_url=BASE).status_code == 200
    assert anonymous.get("/?utm=1&x=2", base_url=BASE).status_code == 200  # a bypass
    html = page(admin_of(site))
    assert "<script" not in html
    for part in ("status", "stats", "preload", "test", "purge", "contents", "settings"):
        assert f'<section id="{part}">' in html
    assert "<svg" in html
    assert 'id="history-chart"' in html  # the last 24 hours, from the series of GET /stats
    assert "Requests by cache outcome" in html
    assert 'name="f_max_age"' in html
    assert 'min="0"' in html
    assert '<select id="f_known_users"' in html
    assert "bypass_any_cookie" in html
    assert (
        "Seconds between garbage-collection runs." in html
    )  # help text from the schema's descriptions
    assert '<td class="entry-url">http://example.org/</td>' in html
    assert "query_string" in html
    assert "not cached" in html


def test_a_setting_saved_through_the_form_persists(site: Site) -> None:
    admin = admin_of(site)
    fields = settings_fields(admin)
    fields["f_max_age"] = "1234"
    status, html = post(admin, action="save_settings", **fields)
    assert status == 200, html
    assert "Settings saved." in html
    assert site.app.cache.engine.settings().max_age == 1234
    assert 'name="f_max_age" value="1234"' in page(admin)


def test_a_bad_value_is_shown_inline_and_nothing_is_saved(site: Site) -> None:
    admin = admin_of(site)
    fields = settings_fields(admin)
    fields["f_max_age"] = "99"
    fields["f_gc_interval"] = "5"  # below its minimum of 60
    status, html = post(admin, action="save_settings", **fields)
    assert status == 400
    assert 'id="error-gc_interval"' in html
    assert 'name="f_gc_interval" value="5"' in html  # what was typed is kept
    assert "error-max_age" not in html
    assert site.app.cache.engine.settings().max_age == 3600  # all or nothing


def test_purging_one_entry_removes_it_from_the_list(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    admin = admin_of(site)
    assert "http://example.org/</td>" in page(admin)
    status, html = post(admin, action="purge", scope="url", url="http://example.org/")
    assert status == 200, html
    assert "Purged: 1 entries deleted" in html
    assert "http://example.org/</td>" not in html


@pytest.mark.parametrize(
    "fields", [{"scope": "nosuch"}, {"scope": ""}, {}, {"scope": "URL", "url": "/"}]
)
def test_an_unknown_purge_scope_is_refused_and_purges_nothing(
    site: Site, fields: dict[str, str]
) -> None:
    site.client().get("/", base_url=BASE)
    admin = admin_of(site)
    status, html = post(admin, action="purge", **fields)
    assert status == 400, html
    assert "Unknown purge scope" in html
    assert "http://example.org/</td>" in html  # still cached


def test_the_site_scope_purges_this_site(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    status, html = post(admin_of(site), action="purge", scope="site")
    assert status == 200, html
    assert "Purged: 1 entries deleted (site)" in html


def test_search_filters_the_contents(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    admin = admin_of(site)
    assert 'id="no-entries"' in page(admin, "?s=nothing-like-this")
    assert "http://example.org/</td>" in page(admin, "?s=example")


def test_preload_start_and_cancel_and_the_cache_test(site: Site) -> None:
    admin = admin_of(site)
    status, html = post(admin, action="preload_start")
    assert status == 200
    assert "Preload started." in html
    status, html = post(admin, action="preload_cancel")
    assert status == 200
    assert "Preload cancelled." in html
    status, html = post(admin, action="test", url="/")
    assert status == 200
    assert 'id="test-result">Passed' in html


def test_only_the_watch_view_reloads_itself_while_a_preload_runs(site: Site) -> None:
    # The plain dashboard never reloads under a hand typing into the settings form; the
    # answer to "Start preload" and ?watch=preload follow the preload while it runs.
    admin = admin_of(site)
    _, started = post(admin, action="preload_start")
    plain = admin.get(DASHBOARD_PATH, base_url=BASE).text
    watched = admin.get(DASHBOARD_PATH + "?watch=preload", base_url=BASE).text
    assert 'http-equiv="refresh"' not in plain
    for html in (started, watched):
        assert ('http-equiv="refresh"' in html) is ("Running:" in html)
    if "Running:" in plain:
        assert 'id="preload-watch"' in plain
    post(admin, action="preload_cancel")


def test_a_form_without_a_valid_nonce_changes_nothing(site: Site) -> None:
    admin = admin_of(site)
    status, html = post(admin, nonce="forged", action="purge", scope="all")
    assert status == 403
    assert "nonce" in html.lower()


def test_a_cross_site_form_is_refused(site: Site) -> None:
    admin = admin_of(site)
    nonce = hidden_field(page(admin), "_sitenonce")
    response = admin.post(
        DASHBOARD_PATH,
        data={"_sitenonce": nonce, "action": "purge", "scope": "all"},
        base_url=BASE,
        headers={"Origin": "http://evil.example"},
    )
    assert response.status_code == 403


def test_the_page_cache_never_stores_the_dashboard(site: Site) -> None:
    admin = admin_of(site)
    for _ in range(2):
        response = admin.get(DASHBOARD_PATH, base_url=BASE)
        assert "fwd=bypass" in response.headers["Cache-Status"]
        assert "hit" not in response.headers["Cache-Status"]
    listed = site.app.cache.engine.list_entries(1, 100)[0]
    assert not any("/site-admin" in entry["url"] for entry in listed)


@pytest.mark.parametrize("paged", ["%C2%B2", "%D9%A2x", "9" * 5000, "abc", "0"])
def test_a_page_number_that_is_no_whole_number_shows_the_first_page(site: Site, paged: str) -> None:
    # "²".isdigit() is true and int("²") fails; 5000 digits pass isdigit() and exceed int()'s limit.
    html = page(admin_of(site), "?paged=" + paged)
    assert "Page cache" in html


@pytest.mark.parametrize("post_id", ["²", "abc", "-1"])
def test_a_post_id_that_is_no_whole_number_is_refused_in_the_form(site: Site, post_id: str) -> None:
    site.client().get("/", base_url=BASE)
    status, html = post(admin_of(site), action="purge", scope="post_id", post_id=post_id)
    assert status == 400, html
    assert 'id="error"' in html
    assert 'id="error-details"' in html  # the API's reason, not only "Invalid parameter(s)"
    assert "http://example.org/</td>" in html  # nothing purged


def test_a_refused_purge_shows_the_apis_reason_escaped(site: Site) -> None:
    admin = admin_of(site)
    status, html = post(admin, action="purge", scope="url", url="http://example.org/a/../<b>")
    assert status == 400, html
    details = html[
        html.index('id="error-details"') : html.index("</ul>", html.index("error-details"))
    ]
    assert "dot segments" in details
    assert "<b>" not in html


def test_a_stale_form_says_to_reload_the_page(site: Site) -> None:
    status, html = post(admin_of(site), nonce="stale", action="purge", scope="all")
    assert status == 403
    assert "This form has expired; reload the page and try again." in html
    assert "Cookie nonce is invalid" not in html
