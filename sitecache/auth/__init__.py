"""Users, roles and authentication: cookie sessions with nonces, application passwords.

`AuthService` assembles the layer for one site (its SQLite store and secret key live in the data
directory) and plugs its authenticators and routes into the REST server; `AuthViews` serves the
login, logout, REST-nonce, account and application-authorization pages. Each name is imported
from its module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sitecache.lazy_exports import lazy_exports

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
    "ROLES": "sitecache.auth.roles",
    "ROLE_CAPABILITIES": "sitecache.auth.roles",
    "SiteUser": "sitecache.auth.roles",
    "is_site_admin": "sitecache.auth.roles",
    "require_site_admin": "sitecache.auth.roles",
    "PasswordHasher": "sitecache.auth.passwords",
    "AuthService": "sitecache.auth.service",
    "AuthViews": "sitecache.auth.views",
}


__getattr__ = lazy_exports(__name__, _HOMES)
