"""Users, roles and authentication: cookie sessions with nonces, application passwords.

`AuthService` assembles the layer for one site (its SQLite store and secret key live in the data
directory) and plugs its authenticators and routes into the REST server; `AuthViews` serves the
login, logout, REST-nonce, account and application-authorization pages.
"""

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
