"""Roles, capabilities and the site-administrator check.

Five roles grant WordPress's default capabilities; ``manage_options`` is the site-administrator
check (`is_site_admin`, and `require_site_admin` as a permission callback). A route protected by
it answers 401 to an anonymous caller and 403 to a logged-in caller without the capability.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from sitecache.auth import ROLE_CAPABILITIES, ROLES, SiteUser, is_site_admin, require_site_admin
from sitecache.rest import ANONYMOUS, RestRequest
from tests.auth.conftest import ADMIN_ONLY, Site, basic, rest_nonce

ALL_ROLES = ["administrator", "editor", "author", "contributor", "subscriber"]


def user(role: str, user_id: int = 5) -> SiteUser:
    return SiteUser(id=user_id, login="u", email="u@example.org", display_name="U", role=role)


def test_there_are_exactly_the_five_wordpress_roles() -> None:
    assert list(ROLES) == ALL_ROLES
    assert set(ROLE_CAPABILITIES) == set(ALL_ROLES)


def test_each_role_has_every_capability_of_the_roles_below_it() -> None:
    for higher, lower in itertools.pairwise(ALL_ROLES):
        assert ROLE_CAPABILITIES[lower] < ROLE_CAPABILITIES[higher], (higher, lower)


@pytest.mark.parametrize(
    ("capability", "granted_to"),
    [
        ("read", {"administrator", "editor", "author", "contributor", "subscriber"}),
        ("edit_posts", {"administrator", "editor", "author", "contributor"}),
        ("delete_posts", {"administrator", "editor", "author", "contributor"}),
        ("publish_posts", {"administrator", "editor", "author"}),
        ("upload_files", {"administrator", "editor", "author"}),
        ("edit_others_posts", {"administrator", "editor"}),
        ("moderate_comments", {"administrator", "editor"}),
        ("manage_categories", {"administrator", "editor"}),
        ("unfiltered_html", {"administrator", "editor"}),
        ("manage_options", {"administrator"}),
        ("edit_users", {"administrator"}),
        ("list_users", {"administrator"}),
        ("create_users", {"administrator"}),
        ("delete_users", {"administrator"}),
        ("promote_users", {"administrator"}),
        ("activate_plugins", {"administrator"}),
        ("switch_themes", {"administrator"}),
        ("update_core", {"administrator"}),
        ("no_such_capability", set()),
    ],
)
def test_capabilities_are_granted_by_role(capability: str, granted_to: set[str]) -> None:
    for role in ALL_ROLES:
        assert user(role).can(capability) is (role in granted_to), role


@pytest.mark.parametrize(
    "capability",
    [
        "edit_user",
        "list_app_passwords",
        "create_app_password",
        "read_app_password",
        "edit_app_password",
        "delete_app_password",
        "delete_app_passwords",
    ],
)
@pytest.mark.parametrize("role", ALL_ROLES)
def test_a_user_may_act_on_themselves_but_only_administrators_on_others(
    capability: str, role: str
) -> None:
    me = user(role, user_id=5)
    assert me.can(capability, 5)
    assert me.can(capability, 6) is (role == "administrator")


def test_an_unknown_role_grants_nothing() -> None:
    assert not user("ghost").can("read")
    assert not is_site_admin(user("ghost"))


@pytest.mark.parametrize("role", ALL_ROLES)
def test_only_an_administrator_is_a_site_administrator(role: str) -> None:
    assert is_site_admin(user(role)) is (role == "administrator")


def test_the_anonymous_user_is_not_a_site_administrator() -> None:
    assert is_site_admin(ANONYMOUS) is False


@dataclass
class Capable:
    """A user object granting exactly one capability."""

    capability: str
    id: int = 9
    login: str = "x"

    def can(self, capability: str, *args: object) -> bool:
        return capability == self.capability


@pytest.mark.parametrize(
    ("capability", "admin"), [("manage_options", True), ("edit_users", False), ("read", False)]
)
def test_the_site_administrator_check_is_the_manage_options_capability(
    capability: str, admin: bool
) -> None:
    assert is_site_admin(Capable(capability)) is admin
    request = RestRequest("GET", "/x")
    request.user = Capable(capability)
    assert require_site_admin(request) is admin


@pytest.mark.parametrize(("role", "allowed"), [(role, role == "administrator") for role in ROLES])
def test_require_site_admin_as_a_permission_callback(role: str, allowed: bool) -> None:
    request = RestRequest("GET", "/x")
    request.user = user(role)
    assert require_site_admin(request) is allowed


def test_require_site_admin_refuses_the_anonymous_caller() -> None:
    assert require_site_admin(RestRequest("GET", "/x")) is False


# ---------------------------------------------------------------------- over HTTP
def test_an_anonymous_caller_of_an_admin_route_gets_401(site: Site) -> None:
    response = site.client().get(ADMIN_ONLY)
    assert response.status_code == 401
    assert response.get_json()["code"] == "rest_forbidden"


@pytest.mark.parametrize("role", ["editor", "author", "contributor", "subscriber"])
def test_a_logged_in_caller_without_manage_options_gets_403_by_cookie(
    site: Site, role: str
) -> None:
    client = site.logged_in(role)
    response = client.get(ADMIN_ONLY, headers={"X-Site-Nonce": rest_nonce(client)})
    assert response.status_code == 403
    assert response.get_json()["code"] == "rest_forbidden"


@pytest.mark.parametrize("role", ["editor", "author", "contributor", "subscriber"])
def test_a_logged_in_caller_without_manage_options_gets_403_by_application_password(
    site: Site, role: str
) -> None:
    password = site.app_password(role)
    response = site.client().get(ADMIN_ONLY, headers=basic(site.users[role].login, password))
    assert response.status_code == 403
    assert response.get_json()["code"] == "rest_forbidden"


def test_an_administrator_passes_the_admin_route_by_cookie_and_nonce(site: Site) -> None:
    client = site.logged_in("administrator")
    response = client.get(ADMIN_ONLY, headers={"X-Site-Nonce": rest_nonce(client)})
    assert response.status_code == 200
    assert response.get_json() == {"ok": True}


def test_an_administrator_passes_the_admin_route_by_application_password(site: Site) -> None:
    password = site.app_password("administrator")
    response = site.client().get(ADMIN_ONLY, headers=basic("ada", password))
    assert response.status_code == 200
    assert response.get_json() == {"ok": True}


def test_an_administrator_cookie_without_a_nonce_is_anonymous_and_gets_401(site: Site) -> None:
    response = site.logged_in("administrator").get(ADMIN_ONLY)
    assert response.status_code == 401
    assert response.get_json()["code"] == "rest_forbidden"


@pytest.mark.parametrize(
    ("capability", "primitive"),
    [
        ("delete_user", "delete_users"),
        ("promote_user", "promote_users"),
        ("remove_user", "remove_users"),
    ],
)
def test_deleting_or_promoting_a_user_needs_the_primitive_capability_even_on_yourself(
    capability: str, primitive: str
) -> None:
    for role in ALL_ROLES:
        me = user(role, user_id=7)
        expected = primitive in ROLE_CAPABILITIES[role]
        assert me.can(capability, 7) is expected, role
        assert me.can(capability, 8) is expected, role


def test_editing_yourself_needs_only_to_be_you() -> None:
    assert user("subscriber", user_id=7).can("edit_user", 7)
    assert not user("subscriber", user_id=7).can("edit_user", 8)
    assert user("administrator", user_id=7).can("edit_user", 8)
