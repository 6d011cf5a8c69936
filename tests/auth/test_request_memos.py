"""What an application-password request works out once, and where that stops (#18).

Authentication reads the user's passwords; listing them in the same request reuses that read
unless this thread's connection has written anything since. The application-password routes
work out, once per HTTP request, whether application passwords are available and which user a
``user_id`` names; that memo belongs to one environ and one current user, so it never answers
for another request or another user.
"""

from __future__ import annotations

from typing import Any

from sitecache.auth.app_passwords import BasicCredentials, chunk_password
from sitecache.auth.authenticators import PASSWORD_LISTING
from sitecache.errors import RestError
from sitecache.rest import RestRequest
from sitecache.rest.server import check_permission, inherit_caller, shared_memo
from tests.auth.conftest import LOOPBACK, Site, basic
from tests.auth.test_query_count import traced
from tests.auth.test_rest_routes import url


def test_listing_reads_the_passwords_once_with_authentication(site: Site) -> None:
    sam = site.users["subscriber"]
    for name in ("Phone", "Laptop"):
        site.app.auth.app_passwords.create(sam, name)
    headers = site.basic("subscriber")
    client = site.client()
    assert client.get(url("me"), headers=headers).status_code == 200  # records the use
    with traced(site) as statements:
        response = client.get(url("me"), headers=headers)
    assert response.status_code == 200
    assert [item["name"] for item in response.get_json()] == ["Phone", "Laptop", "auth-subscriber"]
    reads = [statement for statement in statements if "app_passwords" in statement]
    assert len(reads) == 1, statements  # authentication's, joined with the user's


def test_the_listing_shows_the_use_authentication_just_recorded(site: Site) -> None:
    headers = site.basic("subscriber")
    site.clock.advance(3600)
    response = site.client().get(url("me"), headers=headers)
    (item,) = response.get_json()
    assert item["last_ip"] == LOOPBACK
    stored = site.app.auth.app_passwords.list(site.users["subscriber"])[0]
    assert stored.last_used == int(site.clock.now)
    assert item["last_used"] == response.get_json()[0]["last_used"] is not None
    assert item["last_used"].startswith("2023-11-14T23:13:20")


def test_a_write_after_authentication_is_listed(site: Site) -> None:
    passwords = site.app.auth.app_passwords
    sam = site.users["subscriber"]
    secret, _ = passwords.create(sam, "First")
    user, _, listing = passwords.authenticate_listing(BasicCredentials(sam.login, secret), "")
    assert [record.name for record in passwords.listed(user, listing)] == ["First"]
    passwords.create(sam, "Second")
    assert [record.name for record in passwords.listed(user, listing)] == ["First", "Second"]
    (first, _) = passwords.list(sam)
    passwords.rename(sam, first.uuid, "Renamed")
    assert [record.name for record in passwords.listed(user, listing)] == ["Renamed", "Second"]


def test_a_listing_answers_for_its_own_user_only(site: Site) -> None:
    passwords = site.app.auth.app_passwords
    sam, ada = site.users["subscriber"], site.users["administrator"]
    secret, _ = passwords.create(sam, "Sam's")
    passwords.create(ada, "Ada's")
    _, _, listing = passwords.authenticate_listing(BasicCredentials(sam.login, secret), "")
    assert [record.name for record in passwords.listed(ada, listing)] == ["Ada's"]
    assert [record.name for record in passwords.listed(sam, None)] == ["Sam's"]


def test_each_request_gets_its_own_listing(site: Site) -> None:
    sam_headers = site.basic("subscriber")
    ada_headers = site.basic("administrator")
    client = site.client()
    first = client.get(url("me"), headers=sam_headers).get_json()
    second = client.get(url("me"), headers=ada_headers).get_json()
    assert [item["name"] for item in first] == ["auth-subscriber"]
    assert [item["name"] for item in second] == ["auth-administrator"]
    site.app.auth.app_passwords.create(site.users["subscriber"], "Later")
    third = client.get(url("me"), headers=sam_headers).get_json()
    assert [item["name"] for item in third] == ["auth-subscriber", "Later"]


def _request(site: Site, role: str, user_id: str) -> RestRequest:
    """An authenticated request for ``…/users/<user_id>/application-passwords``."""
    request = RestRequest("GET", f"/site/v2/users/{user_id}/application-passwords")
    request.environ = {"REMOTE_ADDR": LOOPBACK, "wsgi.url_scheme": "http"}
    request.user = site.users[role]
    site.app.server.ensure_initialized()
    assert not isinstance(site.app.server.match_request_to_handler(request), RestError)
    return request


def _list_permission(site: Site) -> Any:
    """The permission callback of listing a user's application passwords."""
    matched = site.app.server.match_request_to_handler(_request(site, "subscriber", "me"))
    assert not isinstance(matched, RestError)
    return matched[1]["permission_callback"]


def test_an_internal_request_as_another_user_is_not_answered_from_the_memo(site: Site) -> None:
    callback = _list_permission(site)
    ada = site.users["administrator"]
    outer = _request(site, "administrator", str(site.users["subscriber"].id))
    assert check_permission(callback, outer) is True  # ada may list sam's passwords
    inner = _request(site, "subscriber", str(ada.id))
    inherit_caller(inner, outer)  # shares the outer request's memo, and its user...
    inner.user = site.users["subscriber"]  # ...until a plugin acts as someone else
    assert shared_memo(inner) is shared_memo(outer)
    refused = check_permission(callback, inner)
    assert isinstance(refused, RestError)
    assert refused.code == "rest_cannot_list_application_passwords"


def test_another_environ_is_not_answered_from_the_memo(site: Site) -> None:
    callback = _list_permission(site)
    outer = _request(site, "subscriber", "me")
    assert check_permission(callback, outer) is True
    inner = _request(site, "subscriber", "me")
    inherit_caller(inner, outer)
    inner.environ = {"REMOTE_ADDR": "10.0.0.5", "wsgi.url_scheme": "http"}  # not loopback
    refused = check_permission(callback, inner)
    assert isinstance(refused, RestError)
    assert refused.code == "application_passwords_disabled"


def test_the_listing_is_kept_in_the_request_that_authenticated(site: Site) -> None:
    secret = site.app_password("subscriber")
    request = RestRequest("GET", "/site/v2/users/me/application-passwords")
    request.environ = {"REMOTE_ADDR": LOOPBACK, "wsgi.url_scheme": "http"}
    request.set_headers(basic(site.users["subscriber"].login, chunk_password(secret)))
    site.app.server.authenticate(request)
    listing = shared_memo(request)[PASSWORD_LISTING]
    assert listing.user_id == site.users["subscriber"].id
    assert PASSWORD_LISTING not in shared_memo(RestRequest("GET", "/"))


def test_me_means_the_current_user_of_each_request_sharing_the_memo(site: Site) -> None:
    callback = _list_permission(site)
    outer = _request(site, "administrator", "me")
    assert check_permission(callback, outer) is True
    inner = _request(site, "subscriber", "me")
    inherit_caller(inner, outer)
    inner.user = site.users["subscriber"]
    assert check_permission(callback, inner) is True  # sam's own passwords, not ada's
    handler_user = site.app.auth.routes.target_user(inner)
    assert handler_user == site.users["subscriber"]
