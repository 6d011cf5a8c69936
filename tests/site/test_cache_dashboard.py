"""The cache dashboard (``/site-admin/cache`` and its tabs) without a browser: who may see it,
what it renders without JavaScript, its forms (which reach the cache only through the REST
API), their confirmations, their words and POST-redirect-GET."""

from __future__ import annotations

import re

import pytest
from werkzeug.test import Client

from sitecache.site.dashboard import DASHBOARD_PATH
from tests.auth.conftest import Site, build_site, hidden_field, log_in
from tests.conftest import AppFactory

BASE = "http://example.org"
TABS = ("", "/contents", "/preload", "/settings", "/diagnostics", "/glossary")


@pytest.fixture
def site(app_factory: AppFactory) -> Site:
    return build_site(app_factory())


def admin_of(site: Site, role: str = "administrator") -> Client:
    """A client holding a session of the user with ``role``, on the site's own host."""
    client = site.client()
    assert log_in(client, site.users[role].login, base_url=BASE).status_code == 303
    return client


def page(client: Client, tab: str = "", query: str = "") -> str:
    response = client.get(DASHBOARD_PATH + tab + query, base_url=BASE)
    assert response.status_code == 200, response.text
    return response.text


def send(
    client: Client, tab: str = "", nonce: str | None = None, **fields: str
) -> tuple[int, str, str]:
    """Post a form of ``tab`` as the browser does: (status, page text, redirect location);
    a 303 is followed, as the browser follows it."""
    data = {"_sitenonce": nonce if nonce is not None else hidden_field(page(client), "_sitenonce")}
    response = client.post(
        DASHBOARD_PATH + tab, data={**data, **fields}, base_url=BASE, headers={"Origin": BASE}
    )
    if response.status_code != 303:
        return response.status_code, response.text, ""
    location = response.headers["Location"]
    shown = client.get(location, base_url=BASE)
    return shown.status_code, shown.text, location


def post(client: Client, tab: str = "", nonce: str | None = None, **fields: str) -> tuple[int, str]:
    """`send`, confirming when the dashboard asks first."""
    status, html, _ = send(client, tab, nonce, **fields)
    if 'id="confirm-yes"' in html:
        status, html, _ = send(client, tab, nonce, **fields, confirmed="yes")
    return status, html


def settings_fields(client: Client, group: str = "basics") -> dict[str, str]:
    """The settings form of ``group`` as the browser would send it unchanged."""
    html = page(client, "/settings", f"?group={group}")
    form = html[html.index('id="settings-form"') : html.index('id="settings-save"')]
    fields = dict(
        re.findall(r'<input type="(?:number|text)" id="[^"]+" name="([^"]+)" value="([^"]*)"', form)
    )
    fields.update(
        (name, "1")
        for name in re.findall(
            r'<input type="checkbox" id="[^"]+" name="([^"]+)" value="1" checked', form
        )
    )
    fields.update(re.findall(r'<textarea id="[^"]+" name="([^"]+)"[^>]*>([^<]*)</textarea>', form))
    for name, options in re.findall(r'<select id="[^"]+" name="([^"]+)"[^>]*>(.*?)</select>', form):
        fields[name] = re.findall(r"<option selected>([^<]+)</option>", options)[0]
    fields["group"] = group
    return fields


@pytest.mark.parametrize(
    ("role", "status"),
    [("administrator", 200), ("editor", 403), ("author", 403), ("subscriber", 403)],
)
def test_only_administrators_see_the_dashboard(site: Site, role: str, status: int) -> None:
    client = admin_of(site, role)
    for tab in TABS:
        response = client.get(DASHBOARD_PATH + tab, base_url=BASE)
        assert response.status_code == status
        assert "no-store" in response.headers["Cache-Control"]
        assert ("Page cache" in response.text) is (status == 200)


def test_anonymous_visitors_are_sent_to_the_login_form_and_back(site: Site) -> None:
    response = site.client().get(DASHBOARD_PATH + "/contents", base_url=BASE)
    assert response.status_code == 303
    assert response.headers["Location"].startswith(
        "/login?redirect_to=%2Fsite-admin%2Fcache%2Fcontents"
    )


def test_every_tab_renders_without_javascript_with_the_navigation(site: Site) -> None:
    admin = admin_of(site)
    for tab in TABS:
        html = page(admin, tab)
        assert "<script" not in html
        assert '<nav class="tabs" aria-label="Page cache sections">' in html
        assert html.count('aria-current="page"') >= (1 if tab != "/glossary" else 0)
    overview = page(admin)
    for part in ("switch", "status", "stats", "storage"):
        assert f'<section id="{part}"' in overview
    assert 'id="history-chart"' in overview  # from the series of GET /stats
    assert "Visitors' requests by cache outcome" in overview


def test_labels_are_words_with_the_key_beside_and_help_is_rendered(site: Site) -> None:
    admin = admin_of(site)
    basics = page(admin, "/settings")
    assert (
        '<label for="f_max_age">Page lifetime (seconds)</label> <span class="key">(max_age)'
        in basics
    )
    assert "Seconds a page stays fresh" in basics
    cached = page(admin, "/settings", "?group=cached")
    assert "`" not in cached  # no Markdown source
    assert "<code>utm_*</code>" in cached
    assert "<legend>Never cache these page types" in cached
    assert "Tick a page type to stop caching it" in cached
    assert '<label for="f_pages.feed">Feeds (RSS)</label>' in cached
    assert '<select id="f_known_users"' in cached


def test_a_setting_saved_through_the_form_persists_and_says_what_changed(site: Site) -> None:
    admin = admin_of(site)
    fields = settings_fields(admin)
    fields["f_max_age"] = "1234"
    status, html, location = send(admin, "/settings", action="save_settings", **fields)
    assert status == 200, html
    assert location.startswith(DASHBOARD_PATH + "/settings?group=basics&done=")
    assert "Saved Basics: Page lifetime (seconds)." in html
    assert site.app.cache.engine.settings().max_age == 1234
    assert 'name="f_max_age" value="1234"' in page(admin, "/settings")
    # The other groups' settings were not sent, so not changed (unticked boxes elsewhere).
    assert site.app.cache.engine.settings().preload_taxonomies is True


def test_a_ticked_page_type_is_never_cached(site: Site) -> None:
    admin = admin_of(site)
    fields = settings_fields(admin, "cached")
    fields["f_pages.feed"] = "1"
    status, html = post(admin, "/settings", action="save_settings", **fields)
    assert status == 200, html
    assert site.app.cache.engine.settings_values()["pages"]["feed"] is True


def test_a_bad_value_is_summarised_at_the_top_and_shown_inline(site: Site) -> None:
    admin = admin_of(site)
    fields = settings_fields(admin, "advanced")
    fields["f_gc_interval"] = "5"  # below its minimum of 60
    fields["f_max_entries"] = "99"
    status, html = post(admin, "/settings", action="save_settings", **fields)
    assert status == 400
    summary = html[html.index('id="error"') : html.index("</div>", html.index('id="error"'))]
    assert '<a href="#f_gc_interval">Clean-up interval (seconds): ' in summary
    assert 'id="error-gc_interval"' in html
    assert re.search(r'name="f_gc_interval" value="5"[^>]*aria-invalid="true"', html)
    assert "error-max_entries" not in html
    assert site.app.cache.engine.settings().max_entries == 50_000  # all or nothing


def test_purging_one_entry_says_what_was_deleted(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    admin = admin_of(site)
    assert "http://example.org/</td>" in page(admin, "/contents")
    status, html = post(admin, "/contents", action="purge", scope="url", url="http://example.org/")
    assert status == 200, html
    assert re.search(r"Deleted 1 page \([0-9.]+ KB\) of http://example.org/\.", html)
    assert "http://example.org/</td>" not in html
    status, html = post(admin, "/contents", action="purge", scope="url", url="/nothing-here")
    assert "No cached page was found for /nothing-here: nothing was purged." in html


def test_each_purge_button_names_its_page(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    html = page(admin_of(site), "/contents")
    assert 'aria-label="Purge http://example.org/"' in html


@pytest.mark.parametrize(
    "fields", [{"scope": "nosuch"}, {"scope": ""}, {}, {"scope": "URL", "url": "/"}]
)
def test_an_unknown_purge_scope_is_refused_and_purges_nothing(
    site: Site, fields: dict[str, str]
) -> None:
    site.client().get("/", base_url=BASE)
    admin = admin_of(site)
    status, html = post(admin, "/contents", action="purge", **fields)
    assert status == 400, html
    assert "Unknown purge scope" in html
    assert "http://example.org/</td>" in html  # still cached


def test_purging_everything_asks_first_and_says_what_it_deleted(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    admin = admin_of(site)
    status, html, _ = send(admin, "/contents", action="purge", scope="all")
    assert status == 200
    assert "Delete every cached page?" in html
    assert re.search(r"This deletes the 1 cached page \([0-9.]+ KB\) of every host", html)
    assert 'name="confirmed" value="yes"' in html
    assert site.app.cache.engine.list_entries()[1] == 1  # nothing happened yet
    status, html, _ = send(admin, "/contents", action="purge", scope="all", confirmed="yes")
    assert status == 200
    assert re.search(r"Deleted 1 page \([0-9.]+ KB\) of every host\.", html)
    assert site.app.cache.engine.list_entries()[1] == 0


def test_the_site_scope_purges_this_site_after_asking(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    status, html = post(admin_of(site), "/contents", action="purge", scope="site")
    assert status == 200, html
    assert re.search(r"Deleted 1 page \([0-9.]+ KB\) of this site\.", html)


def test_restoring_the_defaults_asks_first(site: Site) -> None:
    admin = admin_of(site)
    site.app.cache.engine.update_settings({"max_age": 99})
    _status, html, _ = send(admin, "/settings", action="reset_settings")
    assert "Restore every setting to its default?" in html
    assert site.app.cache.engine.settings().max_age == 99
    _status, html, _ = send(admin, "/settings", action="reset_settings", confirmed="yes")
    assert "Restored the defaults: 1 setting changed (Page lifetime (seconds))." in html
    assert site.app.cache.engine.settings().max_age == 3600


def test_turning_caching_off_asks_first_and_on_does_not(site: Site) -> None:
    admin = admin_of(site)
    _status, html, _ = send(admin, action="caching_off")
    assert "Turn caching off?" in html
    assert site.app.cache.engine.settings().enabled is True
    _, html, _ = send(admin, action="caching_off", confirmed="yes")
    assert "Caching is off" in html
    assert site.app.cache.engine.settings().enabled is False
    _, html, _ = send(admin, action="caching_on")
    assert "Caching is on" in html
    assert site.app.cache.engine.settings().enabled is True


def test_a_done_action_redirects_and_a_reload_repeats_nothing(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    admin = admin_of(site)
    _status, html, location = send(admin, "/contents", action="purge", scope="url", url="/")
    assert "Deleted 1 page" in html
    assert "done=" in location
    site.client().get("/", base_url=BASE)  # cached again
    reloaded = admin.get(location, base_url=BASE).text  # F5
    assert "Deleted 1 page" not in reloaded  # the message was shown once
    assert "http://example.org/</td>" in reloaded  # and nothing was purged again


def test_a_message_is_for_the_session_that_made_it(site: Site) -> None:
    admin = admin_of(site)
    _, _, location = send(admin, action="caching_on")
    other = admin_of(site)
    assert "Caching is on:" not in other.get(location, base_url=BASE).text


def test_search_filters_the_contents(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    admin = admin_of(site)
    assert 'id="no-entries"' in page(admin, "/contents", "?s=nothing-like-this")
    assert "http://example.org/</td>" in page(admin, "/contents", "?s=example")


def test_preload_start_and_cancel_and_the_cache_test(site: Site) -> None:
    admin = admin_of(site)
    status, html = post(admin, "/preload", action="preload_start")
    assert status == 200
    assert re.search(r"Preload started: \d+ pages? to visit\.", html)
    status, html = post(admin, "/preload", action="preload_cancel")
    assert status == 200
    assert "Preload cancelled" in html or "No preload was running" in html
    status, html = post(admin, "/diagnostics", action="test", url="/")
    assert status == 200
    assert '<p id="test-result"><strong>Passed</strong>' in html
    assert "The cache works for /" in html


def test_only_the_watch_view_reloads_itself_while_a_preload_runs(site: Site) -> None:
    # The plain preload tab never reloads; the answer to "Start" and ?watch=preload follow
    # the preload while it runs.
    admin = admin_of(site)
    _, started = post(admin, "/preload", action="preload_start")
    plain = page(admin, "/preload")
    watched = page(admin, "/preload", "?watch=preload")
    assert 'http-equiv="refresh"' not in plain
    for html in (started, watched):
        assert ('http-equiv="refresh"' in html) is ("Running:" in html)
    if "Running:" in plain:
        assert 'id="preload-watch"' in plain
    post(admin, "/preload", action="preload_cancel")


def test_the_hit_ratio_counts_visitors_not_the_administrator(site: Site) -> None:
    visitor = site.client()
    for _ in range(4):
        visitor.get("/", base_url=BASE)  # one miss, three hits: 75 %
    admin = admin_of(site)
    post(admin, "/diagnostics", action="test", url="/")
    for tab in TABS:
        page(admin, tab)
    html = page(admin)
    assert '<span class="big" id="hit-ratio">75.0 %</span>' in html
    assert "3 pages of 4 cacheable pages came from the cache" in html
    assert '#hit-ratio">How is this counted?</a>' in html


def test_the_glossary_shows_the_schemas_descriptions(site: Site) -> None:
    html = page(admin_of(site), "/glossary")
    assert "hit ratio = (hit + stale) ÷ (hit + stale + miss)" in html
    assert '<dt id="field-requests-hit_ratio"><code>requests.hit_ratio</code></dt>' in html
    assert "(hit + stale) / (hit + stale + miss)" in html  # the schema's own description
    assert "<code>own</code>" in html


def test_a_form_without_a_valid_nonce_changes_nothing(site: Site) -> None:
    site.client().get("/", base_url=BASE)
    admin = admin_of(site)
    status, html = post(admin, "/contents", nonce="forged", action="purge", scope="url", url="/")
    assert status == 403
    assert "nonce" in html.lower() or "expired" in html
    assert site.app.cache.engine.list_entries()[1] == 1


def test_a_cross_site_form_is_refused(site: Site) -> None:
    admin = admin_of(site)
    nonce = hidden_field(page(admin), "_sitenonce")
    response = admin.post(
        DASHBOARD_PATH,
        data={"_sitenonce": nonce, "action": "purge", "scope": "all", "confirmed": "yes"},
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
    html = page(admin_of(site), "/contents", "?paged=" + paged)
    assert "Page cache" in html


@pytest.mark.parametrize("post_id", ["²", "abc", "-1"])
def test_a_post_id_that_is_no_whole_number_is_refused_in_the_form(site: Site, post_id: str) -> None:
    site.client().get("/", base_url=BASE)
    status, html = post(
        admin_of(site), "/contents", action="purge", scope="post_id", post_id=post_id
    )
    assert status == 400, html
    assert 'id="error"' in html
    assert 'id="error-details"' in html  # the API's reason, not only "Invalid parameter(s)"
    assert "http://example.org/</td>" in html  # nothing purged


def test_a_refused_purge_shows_the_apis_reason_escaped(site: Site) -> None:
    admin = admin_of(site)
    status, html = post(
        admin, "/contents", action="purge", scope="url", url="http://example.org/a/../<b>"
    )
    assert status == 400, html
    details = html[
        html.index('id="error-details"') : html.index("</ul>", html.index("error-details"))
    ]
    assert "dot segments" in details
    assert "<b>" not in html


def test_a_stale_form_says_to_reload_the_page(site: Site) -> None:
    status, html = post(
        admin_of(site), "/contents", nonce="stale", action="purge", scope="url", url="/"
    )
    assert status == 403
    assert "This form has expired; reload the page and try again." in html
    assert "Cookie nonce is invalid" not in html
