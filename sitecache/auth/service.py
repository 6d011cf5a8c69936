"""`AuthService`: the auth layer of one site, assembled and plugged into the REST server.

It owns the site database (``site.db``) and secret key (``secret.key``) in the data directory,
the user, session, nonce, throttle and application-password services, and installs the
authenticators, the application-password routes and the index's ``authentication`` entry.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sitecache.auth.app_passwords import ApplicationPasswordPolicy, ApplicationPasswords
from sitecache.auth.authenticators import ApplicationPasswordAuthenticator, CookieNonceAuthenticator
from sitecache.auth.flash import FlashMessages
from sitecache.auth.keys import load_or_create_secret_key
from sitecache.auth.nonces import NonceService
from sitecache.auth.outages import StoreLimits
from sitecache.auth.passwords import PasswordHasher
from sitecache.auth.rest_routes import ApplicationPasswordRoutes
from sitecache.auth.sessions import Session, SessionManager, session_token
from sitecache.auth.store import SiteStore
from sitecache.auth.throttle import LoginThrottle
from sitecache.auth.users import UserRepository
from sitecache.auth.users_routes import UserRoutes
from sitecache.hooks import Hooks
from sitecache.rest import RestRequest, RestServer

__all__ = ["AUTHORIZE_PATH", "AuthService"]

AUTHORIZE_PATH = "/site-admin/authorize-application"


class AuthService:
    """Users, sessions, nonces and application passwords of one site.

    Args:
        data_dir: where ``site.db`` and ``secret.key`` live (created when missing).
        hasher: the password hasher (its cost can be lowered for tests).
        app_passwords: ``"auto"`` (TLS or loopback), ``"on"`` or ``"off"``.
        clock: seconds since the epoch.
        database_url: the site database when it is not ``<data_dir>/site.db``: a shared
            PostgreSQL (``postgresql://...``) keeps the secret key too, so every node signs and
            checks the same cookies, nonces and application passwords.
        migrate: apply pending migrations now (default: on SQLite; a PostgreSQL database is
            migrated by ``sitecache init`` and checked by the serving nodes). A database that
            does not answer now is migrated or checked on first use instead.
        limits: how long the store waits for its database (`StoreLimits`).
        start_without_store: a database that does not answer now is migrated or checked on
            first use (a server boots without it); ``False``: raise (a command).

    Raises:
        SchemaVersionError: the database's schema is not this code's and is not migrated.
        StoreUnavailable: the database does not answer and ``start_without_store`` is off.
    """

    def __init__(
        self,
        data_dir: Path,
        hasher: PasswordHasher | None = None,
        app_passwords: str = "auto",
        clock: Callable[[], float] = time.time,
        database_url: str = "",
        migrate: bool | None = None,
        limits: StoreLimits | None = None,
        start_without_store: bool = True,
    ) -> None:
        self.data_dir = data_dir
        self.store = SiteStore(
            data_dir / "site.db", url=database_url or None, auto_migrate=migrate, limits=limits
        )
        if not start_without_store:
            if self.store.auto_migrate:
                self.store.migrate()
            else:
                self.store.prepare()
        else:
            # Boot anyway when the database does not answer: the page cache serves what it
            # holds, requests that need it answer 503, the first use after its return
            # migrates or checks it.
            self.store.prepare_if_answering()
        self.key = load_or_create_secret_key(data_dir / "secret.key", self.store)
        self.users = UserRepository(self.store, hasher or PasswordHasher(), clock)
        self.sessions = SessionManager(self.store, self.users, self.key, clock)
        self.nonces = NonceService(self.key, clock)
        self.throttle = LoginThrottle(self.store, clock)
        self.flash = FlashMessages(self.store, clock)
        self.policy = ApplicationPasswordPolicy(app_passwords)
        self.app_passwords = ApplicationPasswords(self.store, self.users, self.key, clock)
        self.routes = ApplicationPasswordRoutes(self.users, self.app_passwords, self.policy)
        self.user_routes = UserRoutes(self.users)

    def install(self, server: RestServer, hooks: Hooks) -> None:
        """Add the authenticators, the application-password and user routes and the index entry
        to ``server``."""
        server.add_authenticator(
            ApplicationPasswordAuthenticator(self.app_passwords, self.policy), priority=10
        )
        server.add_authenticator(CookieNonceAuthenticator(self.sessions, self.nonces), priority=20)
        hooks.add_action("rest_api_init", self.routes.register)
        hooks.add_action("rest_api_init", self.user_routes.register)

        def authentication_index(value: Any, request: RestRequest) -> Any:
            if not self.policy.available(request.environ):
                return value
            entry = {"endpoints": {"authorization": server.home_url() + AUTHORIZE_PATH}}
            return {**(value if isinstance(value, dict) else {}), "application-passwords": entry}

        hooks.add_filter("rest_authentication_index", authentication_index)

    def session_from_environ(self, environ: Mapping[str, Any]) -> Session | None:
        """The login session of a request's cookie, if it is live."""
        return self.sessions.find(session_token(str(environ.get("HTTP_COOKIE") or "")))
