"""The REST authenticators: application passwords over HTTP Basic, and cookies with a nonce.

They plug into the REST server's authentication seam and run in this order:

1. `ApplicationPasswordAuthenticator` (priority 10): ``Authorization: Basic login:password``.
   Wrong or malformed credentials are answered up front with 401 (``invalid_username``,
   ``incorrect_password``, ``invalid_authorization_header`` or
   ``application_passwords_disabled``), never silently anonymous.
2. `CookieNonceAuthenticator` (priority 20): a session cookie counts only with a
   valid ``site_rest`` nonce (``_sitenonce`` parameter or ``X-Site-Nonce`` header). Without a
   nonce the request is anonymous; with an invalid one it is refused with 403
   ``rest_cookie_invalid_nonce``; with a valid one the response carries a fresh nonce. It is
   skipped when an application password already authenticated the request.
"""

from __future__ import annotations

from typing import Final

from sitecache.auth.app_passwords import (
    ApplicationPasswordPolicy,
    ApplicationPasswords,
    parse_basic_authorization,
)
from sitecache.auth.nonces import NonceService
from sitecache.auth.sessions import SessionManager, session_token
from sitecache.domain_errors import UnauthorizedError
from sitecache.errors import RestError
from sitecache.rest import ANONYMOUS, Authentication, RestRequest
from sitecache.rest.server import shared_memo

__all__ = [
    "PASSWORD_LISTING",
    "REST_NONCE_ACTION",
    "ApplicationPasswordAuthenticator",
    "CookieNonceAuthenticator",
    "client_ip",
]

REST_NONCE_ACTION: Final = "site_rest"
NONCE_HEADER: Final = "X-Site-Nonce"
PASSWORD_LISTING: Final = "application_password_listing"  # noqa: S105 - a memo key
"""The shared-memo key of the `PasswordListing` an application-password authentication read."""


def client_ip(request: RestRequest) -> str:
    """The client's address as the WSGI server saw it (proxies' headers are not trusted)."""
    return str(request.environ.get("REMOTE_ADDR") or "")


class ApplicationPasswordAuthenticator:
    """HTTP Basic with an application password (REST requests only)."""

    def __init__(self, passwords: ApplicationPasswords, policy: ApplicationPasswordPolicy) -> None:
        self.passwords = passwords
        self.policy = policy

    def authenticate(self, request: RestRequest) -> Authentication | None:
        """The user of valid Basic credentials; ``None`` when there are none.

        Raises:
            UnauthorizedError: malformed or wrong credentials, or application passwords not
                available to this request (the server answers 401).
        """
        credentials = parse_basic_authorization(request.get_header("authorization"))
        if credentials is None:
            return None
        if not self.policy.available(request.environ):
            raise UnauthorizedError(
                "application_passwords_disabled", "Application passwords are not available."
            )
        user, password, listing = self.passwords.authenticate_listing(
            credentials, client_ip(request)
        )
        # The user's passwords as just read: listing them in this request reads them no more.
        shared_memo(request)[PASSWORD_LISTING] = listing
        return Authentication(user, "application_password", app_password=password.uuid)


class CookieNonceAuthenticator:
    """A login session cookie, accepted only with a valid ``site_rest`` nonce."""

    def __init__(self, sessions: SessionManager, nonces: NonceService) -> None:
        self.sessions = sessions
        self.nonces = nonces

    @staticmethod
    def nonce_of(request: RestRequest) -> str | None:
        """The nonce sent: ``_sitenonce`` (form body of a POST first, then the query string),
        else the ``X-Site-Nonce`` header; ``None`` when absent."""
        for source in (request.get_body_params(), request.get_query_params()):
            if "_sitenonce" in source:
                value = source["_sitenonce"]
                return value if isinstance(value, str) else ""
        return request.get_header(NONCE_HEADER)

    def authenticate(self, request: RestRequest) -> Authentication | RestError | None:
        """The session's user with a valid nonce; 403 for a bad nonce; ``None`` without one."""
        nonce = self.nonce_of(request)
        if nonce is None:
            # SECURITY: a cookie without a nonce could be a cross-site request: anonymous.
            # (Decided before the session lookup, so such requests cost no database read.)
            return None
        session = self.sessions.find(session_token(request.get_header("cookie")))
        user_id, token = (session.user.id, session.token) if session else (0, "")
        if not self.nonces.verify(nonce, REST_NONCE_ACTION, user_id, token):
            if session is not None:
                # Still a logged-in request for the response headers, as in WordPress.
                request.refused_user = session.user
            return RestError(
                "rest_cookie_invalid_nonce", "Cookie nonce is invalid", {"status": 403}
            )
        fresh = self.nonces.create(REST_NONCE_ACTION, user_id, token)
        return Authentication(
            session.user if session else ANONYMOUS, "cookie", headers={NONCE_HEADER: fresh}
        )
