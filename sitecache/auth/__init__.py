"""Users, roles and authentication: cookie sessions with nonces, application passwords.

`AuthService` assembles the layer for one site (its SQLite store and secret key live in the data
directory) and plugs its authenticators and routes into the REST server; `AuthViews` serves the
login, logout, REST-nonce, account and application-authorization pages. Each name is imported
from its module on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sitecache.auth.passwords import PasswordHasher
    from sitecache.auth.roles import (
        ROLE_CAPABILITIES,
        ROLES,
        SiteUser,
        is_site_admin,
        require_site_admin,
    )
    from sitecache.auth.service import AuthService
    from sitecache.auth.views import AuthViews

__all__ = [
    "ROLES",
    "ROLE_CAPABILITIES",
    "AuthService",
    "AuthViews",
    "PasswordHasher",
    "SiteUser",
    "is_site_admin",
    "require_site_admin",
]

#: where each name of `__all__` is defined: importing this package loads none of them (the
#: command line and the cache load the parts they use, not the login pages' templates)
_HOMES = {
    "ROLES": "roles",
    "ROLE_CAPABILITIES": "roles",
    "SiteUser": "roles",
    "is_site_admin": "roles",
    "require_site_admin": "roles",
    "PasswordHasher": "passwords",
    "AuthService": "service",
    "AuthViews": "views",
}


def __getattr__(name: str) -> Any:
    """The names of `__all__`, each imported from its module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sitecache.auth' has no attribute {name!r}")
    value = getattr(import_module(f"sitecache.auth.{home}"), name)
    globals()[name] = value
    return value
