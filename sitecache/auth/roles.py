"""Roles, capabilities and the site-administrator check.

The five roles grant WordPress's default capabilities (the ones this site uses). Meta
capabilities about one user (``edit_user``, and the application-password ones) are mapped to
primitive capabilities: acting on yourself needs only to be logged in; acting on someone else
needs ``edit_users``. `is_site_admin` is the one check every cache route calls:
the ``manage_options`` capability.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "ROLES",
    "ROLE_CAPABILITIES",
    "SiteUser",
    "is_site_admin",
    "map_meta_capability",
    "require_site_admin",
]

_SUBSCRIBER: Final = frozenset({"read"})
_CONTRIBUTOR: Final = _SUBSCRIBER | {"edit_posts", "delete_posts"}
_AUTHOR: Final = _CONTRIBUTOR | {
    "upload_files",
    "edit_published_posts",
    "publish_posts",
    "delete_published_posts",
}
_EDITOR: Final = _AUTHOR | {
    "moderate_comments",
    "manage_categories",
    "manage_links",
    "unfiltered_html",
    "edit_others_posts",
    "edit_pages",
    "edit_others_pages",
    "edit_published_pages",
    "publish_pages",
    "delete_pages",
    "delete_others_pages",
    "delete_published_pages",
    "delete_others_posts",
    "delete_private_posts",
    "edit_private_posts",
    "read_private_posts",
    "delete_private_pages",
    "edit_private_pages",
    "read_private_pages",
}
_ADMINISTRATOR: Final = _EDITOR | {
    "switch_themes",
    "edit_themes",
    "activate_plugins",
    "edit_plugins",
    "edit_users",
    "edit_files",
    "manage_options",
    "import",
    "export",
    "list_users",
    "create_users",
    "delete_users",
    "remove_users",
    "promote_users",
    "edit_theme_options",
    "edit_dashboard",
    "install_plugins",
    "update_plugins",
    "delete_plugins",
    "install_themes",
    "update_themes",
    "delete_themes",
    "update_core",
    "unfiltered_upload",
}

ROLE_CAPABILITIES: Final[Mapping[str, frozenset[str]]] = {
    "administrator": _ADMINISTRATOR,
    "editor": _EDITOR,
    "author": _AUTHOR,
    "contributor": _CONTRIBUTOR,
    "subscriber": _SUBSCRIBER,
}
ROLES: Final = tuple(ROLE_CAPABILITIES)
_NOTHING: Final[frozenset[str]] = frozenset()

_ABOUT_A_USER: Final = frozenset(
    {
        "edit_user",
        "list_app_passwords",
        "create_app_password",
        "read_app_password",
        "edit_app_password",
        "delete_app_password",
        "delete_app_passwords",
    }
)


_ANY_USER: Final[Mapping[str, str]] = {
    "delete_user": "delete_users",
    "promote_user": "promote_users",
    "remove_user": "remove_users",
}
"""Meta capabilities about one user that need the primitive one even on yourself."""


def map_meta_capability(capability: str, user_id: int, args: tuple[object, ...]) -> list[str]:
    """The primitive capabilities ``capability`` needs (``map_meta_cap``).

    A meta capability about one user (the first of ``args``) needs nothing more than being that
    user, and ``edit_users`` for anyone else; ``delete_user``, ``promote_user`` and
    ``remove_user`` need ``delete_users``, ``promote_users`` and ``remove_users`` whoever the
    user is (as in WordPress); other capabilities map to themselves.
    """
    return [_primitive_capability(capability, user_id, args)]


def _primitive_capability(capability: str, user_id: int, args: tuple[object, ...]) -> str:
    """The one primitive capability `map_meta_capability` maps ``capability`` to."""
    mapped = _ANY_USER.get(capability)
    if mapped is not None:
        return mapped
    if capability in _ABOUT_A_USER:
        target = args[0] if args else None
        if isinstance(target, int) and not isinstance(target, bool) and target == user_id:
            return "read"
        return "edit_users"
    return capability


@dataclass(frozen=True, slots=True)
class SiteUser:
    """A registered user (satisfies `sitecache.rest.User`)."""

    id: int
    login: str
    email: str
    display_name: str
    role: str
    registered: int = 0
    slug: str = ""
    url: str = ""
    first_name: str = ""
    last_name: str = ""
    nickname: str = ""
    description: str = ""
    locale: str = ""

    def can(self, capability: str, *args: object) -> bool:
        """Whether this user has ``capability`` (meta capabilities are mapped first)."""
        granted = ROLE_CAPABILITIES.get(self.role, _NOTHING)
        if capability in _ABOUT_A_USER:  # `_primitive_capability`, inlined (hot)
            target = args[0] if args else None
            if target == self.id and (
                target.__class__ is int
                or (isinstance(target, int) and not isinstance(target, bool))
            ):
                return "read" in granted
            return "edit_users" in granted
        return _ANY_USER.get(capability, capability) in granted

    @property
    def is_logged_in(self) -> bool:
        """Always ``True`` for a registered user."""
        return True


def is_site_admin(user: Any) -> bool:
    """The site-administrator check: the ``manage_options`` capability."""
    return bool(user.can("manage_options"))


def require_site_admin(request: Any) -> bool:
    """A permission callback: ``True`` only for a site administrator.

    Anything else makes the server answer ``rest_forbidden``: 401 when not logged in, 403 when
    logged in without the capability.
    """
    return is_site_admin(request.user)
