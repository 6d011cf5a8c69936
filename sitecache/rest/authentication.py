"""The authentication seam of the REST server: who is calling, and how that is decided.

The server runs an ordered list of `Authenticator` objects once per request, before dispatch.
Each one looks for its own kind of credentials and answers with an `Authentication` (the caller
is known: stop here), a `RestError` (the credentials are wrong: answer with it) or ``None``
(no credentials of this kind: ask the next one); it may also raise a domain exception
(`sitecache.domain_errors`), which the server answers through its error handlers. When every
authenticator passes, the caller is `ANONYMOUS`. Concrete authenticators (cookie sessions with
nonces, application passwords) live in `sitecache.auth`; this module only fixes the contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from sitecache.errors import RestError

if TYPE_CHECKING:
    from sitecache.rest.request import RestRequest

__all__ = [
    "ANONYMOUS",
    "AnonymousUser",
    "Authentication",
    "Authenticator",
    "User",
    "authorization_required_status",
    "is_logged_in",
]


@runtime_checkable
class User(Protocol):
    """What the REST layer needs to know of a user."""

    @property
    def id(self) -> int:
        """The user's id; 0 for the anonymous user."""
        ...

    @property
    def login(self) -> str:
        """The login name ("" for the anonymous user)."""
        ...

    def can(self, capability: str, *args: object) -> bool:
        """Whether the user has ``capability`` (optionally about an object in ``args``)."""
        ...


@dataclass(frozen=True, slots=True)
class AnonymousUser:
    """The caller nobody has authenticated: id 0, no capabilities."""

    id: int = 0
    login: str = ""
    display_name: str = ""

    def can(self, capability: str, *args: object) -> bool:
        """The anonymous user can do nothing that needs a capability."""
        return False

    @property
    def is_logged_in(self) -> bool:
        """Always ``False``."""
        return False


ANONYMOUS: AnonymousUser = AnonymousUser()


@dataclass(frozen=True, slots=True)
class Authentication:
    """A successful authentication.

    Attributes:
        user: the authenticated user.
        method: how it was established (``"cookie"``, ``"application_password"``, ...).
        app_password: the uuid of the application password used, if any.
        headers: response headers to send (a refreshed nonce, say).
    """

    user: User
    method: str
    app_password: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


class Authenticator(Protocol):
    """One way of recognising the caller of a REST request."""

    def authenticate(self, request: RestRequest) -> Authentication | RestError | None:
        """The caller, an error for bad credentials, or ``None`` when none of this kind.

        Raises:
            DomainError: bad credentials, as an alternative to returning a `RestError`.
        """
        ...


def is_logged_in(user: User) -> bool:
    """Whether ``user`` is a real, logged-in user (id other than 0)."""
    return user.id != 0


def authorization_required_status(user: User) -> int:
    """401 for the anonymous caller, 403 for a logged-in one."""
    return 403 if is_logged_in(user) else 401
