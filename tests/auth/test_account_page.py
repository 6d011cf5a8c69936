"""The account page (``/site-admin/``) creates and revokes application passwords through the
REST routes ``site/v2/users/me/application-passwords``, with the ``site_rest`` nonce."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from werkzeug.test import Client, TestResponse

from tests.auth.conftest import Site, hidden_field, log_in

BASE = "http://localhost"
#: the nonce of a form that has an ``action`` field (the create and revoke forms)
FORM_NONCE = r'name="_sitenonce" value="([^"]+)"><input type="hidden" name="action"'


def account(client: Client) -> str:
    response = client.get("/site-admin/", base_url=BASE)
    assert response.status_code == 200, response.text
    return response.text


def post(client: Client, nonce: str | None = None, **fields: str) -> tuple[int, str]:
    form = account(client)
    sent = (
        nonce
        if nonce is not None
        else re.findall(
            r'name="_sitenonce" value="([^"]+)"><input type="hidden" name="action"', form
        )[-1]
    )
    response = client.post("/site-admin/", data={"_sitenonce": sent, **fields}, base_url=BASE)
    if response.status_code == 303:  # done: the page it redirects to says what was done
        response = client.get(response.headers["Location"], base_url=BASE)
    return response.status_code, response.text


@pytest.fixture
def author(site: Site) -> Client:
    client = site.client()
    assert log_in(client, site.users["author"].login).status_code == 303
    return client


def follow(client: Client, response: TestResponse) -> tuple[int, str]:
    """The page a 303 answer sends the browser to (status, text)."""
    assert response.status_code == 303, response.text
    page = client.get(response.headers["Location"], base_url=BASE)
    return page.status_code, page.text


def test_create_shows_the_password_once_and_revoke_removes_it(site: Site, author: Client) -> None:
    status, html = post(author, action="create_app_password", name="laptop")
    assert status == 200, html
    password = hidden_field(
        html.replace('type="text" id="new-password-value" readonly', 'type="hidden" name="pw"'),
        "pw",
    )
    assert re.fullmatch(r"[A-Za-z0-9]{4}( [A-Za-z0-9]{4}){5}", password)
    assert site.app.auth.app_passwords.list(site.users["author"])[0].name == "laptop"
    again = account(author)
    assert password not in again  # shown once
    assert "laptop" in again
    uuid = hidden_field(again, "uuid")
    status, html = post(author, action="revoke_app_password", uuid=uuid)
    assert status == 200, html
    assert "Application password revoked." in html
    assert 'aria-label="Revoke' not in html
    assert site.app.auth.app_passwords.list(site.users["author"]) == []


def test_reloading_after_a_create_creates_nothing_and_shows_the_password_no_more(
    site: Site, author: Client
) -> None:
    # POST-redirect-GET: the POST answers 303; reloading the page it leads to (F5) is a GET.
    form = account(author)
    nonce = re.findall(
        r'name="_sitenonce" value="([^"]+)"><input type="hidden" name="action"', form
    )
    answer = author.post(
        "/site-admin/",
        data={"_sitenonce": nonce[-1], "action": "create_app_password", "name": "laptop"},
        base_url=BASE,
    )
    assert answer.status_code == 303
    location = answer.headers["Location"]
    first = author.get(location, base_url=BASE).text
    assert 'id="new-password-value"' in first
    assert "Created laptop." in first
    reloaded = author.get(location, base_url=BASE).text
    assert 'id="new-password-value"' not in reloaded
    assert "Created laptop." not in reloaded
    assert [p.name for p in site.app.auth.app_passwords.list(site.users["author"])] == ["laptop"]


def test_another_session_cannot_read_the_new_password(site: Site, author: Client) -> None:
    form = account(author)
    nonce = re.findall(
        r'name="_sitenonce" value="([^"]+)"><input type="hidden" name="action"', form
    )
    answer = author.post(
        "/site-admin/",
        data={"_sitenonce": nonce[-1], "action": "create_app_password", "name": "laptop"},
        base_url=BASE,
    )
    stranger = site.logged_in("author")  # the same user, another session
    page = stranger.get(answer.headers["Location"], base_url=BASE).text
    assert 'id="new-password-value"' not in page
    assert 'id="new-password-value"' in author.get(answer.headers["Location"], base_url=BASE).text


def data_files_holding(root: Path, secret: str) -> list[str]:
    """The files under ``root`` (the database, its WAL and journal, logs, ...) whose bytes hold
    ``secret``, in any of the encodings a store could write it in."""
    needles = {secret.encode(), secret.encode("utf-16-le"), secret.replace(" ", "").encode()}
    return [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*"))
        if path.is_file() and any(needle in path.read_bytes() for needle in needles)
    ]


def test_a_new_password_is_never_stored_in_plaintext(site: Site, author: Client) -> None:
    # SECURITY: between the POST and the page it redirects to, the password waits sealed with
    # a key of the session's cookie; no row, file or journal of the data directory holds it.
    nonce = re.findall(FORM_NONCE, account(author))[-1]
    answer = author.post(
        "/site-admin/",
        data={"_sitenonce": nonce, "action": "create_app_password", "name": "laptop"},
        base_url=BASE,
    )
    assert answer.status_code == 303
    kept = (
        site.app.auth.store.connection()
        .execute("SELECT value FROM options WHERE name LIKE 'flash:%'")
        .fetchall()
    )
    assert len(kept) == 1
    assert "laptop" not in str(kept[0][0])  # nothing of the message shows, not even the name
    first = author.get(answer.headers["Location"], base_url=BASE).text
    password = hidden_field(
        first.replace('type="text" id="new-password-value" readonly', 'type="hidden" name="pw"'),
        "pw",
    )
    assert re.fullmatch(r"[A-Za-z0-9]{4}( [A-Za-z0-9]{4}){5}", password)
    assert first.count(password) == 1  # shown once, on the page the POST redirected to
    assert data_files_holding(site.app.data_dir, password) == []
    assert str(kept[0][0]).find(password) == -1
    again = author.get(answer.headers["Location"], base_url=BASE).text
    assert password not in again
    assert 'id="new-password-value"' not in again
    assert password not in account(author)
    assert data_files_holding(site.app.data_dir, password) == []


def test_per_row_buttons_name_what_they_act_on(site: Site, author: Client) -> None:
    post(author, action="create_app_password", name="laptop")
    assert 'aria-label="Revoke laptop"' in account(author)


def test_a_form_with_a_bad_nonce_changes_nothing(site: Site, author: Client) -> None:
    status, html = post(author, nonce="forged", action="create_app_password", name="x")
    assert status == 403
    assert "nonce" in html.lower()
    assert site.app.auth.app_passwords.list(site.users["author"]) == []


def test_a_name_the_api_refuses_is_shown(site: Site, author: Client) -> None:
    status, html = post(author, action="create_app_password", name="")
    assert status == 400
    assert 'id="error"' in html
    assert site.app.auth.app_passwords.list(site.users["author"]) == []


def test_anonymous_visitors_cannot_post(site: Site) -> None:
    response = site.client().post(
        "/site-admin/", data={"action": "create_app_password"}, base_url=BASE
    )
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/login")


def test_the_copy_button_script_is_the_sites_own(site: Site) -> None:
    response = site.client().get("/site-admin/copy.js", base_url=BASE)
    assert response.status_code == 200
    assert response.mimetype == "text/javascript"
    assert "data-copy" in response.text
    page = site.logged_in("author").get("/site-admin/", base_url=BASE)
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]


@pytest.mark.parametrize("name", ["", "x" * 300])
def test_the_reason_the_api_refuses_a_name_is_shown(site: Site, author: Client, name: str) -> None:
    # The REST API and the command line say why; the form says it too, under its summary.
    status, html = post(author, action="create_app_password", name=name)
    assert status == 400
    details = html[
        html.index('id="error-details"') : html.index("</ul>", html.index("error-details"))
    ]
    assert "name" in details
    assert "<li>" in details


def test_a_stale_form_says_to_reload_the_page(site: Site, author: Client) -> None:
    status, html = post(author, nonce="stale", action="create_app_password", name="x")
    assert status == 403
    assert "This form has expired; reload the page and try again." in html
    assert "Cookie nonce is invalid" not in html
