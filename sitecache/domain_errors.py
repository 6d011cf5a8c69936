"""Domain exceptions: what users, passwords, content and options raise when a rule refuses.

Domain code knows nothing of HTTP. When a rule refuses an operation it raises one of these, each
with a machine-readable ``code`` (the error code clients see, such as ``rest_post_invalid_id``),
a ``message`` for humans and ``details`` (more data for the client, usually none). The kind of
refusal is the class. The REST boundary turns each kind into a `sitecache.errors.RestError`
with its HTTP status, in one place and from one table (`sitecache.rest.error_handlers`, after
falcon's ``add_error_handler``); the pages and the command line read ``message`` the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

__all__ = [
    "ConflictError",
    "DomainError",
    "ForbiddenError",
    "GoneError",
    "InvalidFields",
    "InvalidPluginSwitches",
    "InvalidSettings",
    "InvalidURL",
    "InvalidValueError",
    "NotFoundError",
    "NumberOutOfRange",
    "OutageError",
    "StorageFullError",
    "UnauthorizedError",
    "UnavailableError",
]


class DomainError(Exception):
    """A rule of the domain refused an operation.

    Args:
        code: the error code clients see (``rest_user_invalid_id``, ``term_exists``, ...).
        message: a sentence for humans.
        details: more data for the client (``params`` of a refused value, say); never a status.
    """

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"

    def __str__(self) -> str:
        return self.message


class InvalidValueError(DomainError):
    """A value breaks a rule: a bad e-mail address, an unknown status, a weak password."""


class NumberOutOfRange(InvalidValueError):
    """An integer past the store's 64 bits reached a statement (``rest_invalid_param``).

    The store cannot tell which value it was; the REST boundary names the request's argument
    that holds it (`sitecache.rest.number_range`).
    """

    @classmethod
    def past_64_bits(cls) -> NumberOutOfRange:
        """The refusal of an integer outside -2**63 .. 2**63 - 1."""
        return cls(
            "rest_invalid_param", "A number given is too large (at most 9223372036854775807)."
        )


class UnauthorizedError(DomainError):
    """Credentials are wrong or malformed (an unknown login, a bad application password)."""


class ForbiddenError(DomainError):
    """A rule of the site forbids the operation whoever asks (deleting the default category)."""


class NotFoundError(DomainError):
    """What the operation names does not exist (a post, a term, a comment, a user)."""


class ConflictError(DomainError):
    """What is stored refuses the change: a name already used, the last administrator."""


class GoneError(DomainError):
    """The operation was already done: the post or comment is in the trash already."""


# ---------------------------------------------------------------------- outages
class OutageError(DomainError):
    """A service the operation needs failed, not the request: nothing was done, and the same
    request may succeed later (the edge answers with ``Retry-After``).

    Args:
        code: the error code clients see.
        message: a sentence for humans (what failed, that nothing was kept).
        retry_after: seconds after which trying again makes sense.
    """

    def __init__(self, code: str, message: str, retry_after: int = 5) -> None:
        super().__init__(code, message, {"retry_after": retry_after})
        self.retry_after = retry_after


class UnavailableError(OutageError):
    """The service does not answer now (a database down, restarting or locked): 503."""


class StorageFullError(OutageError):
    """The service has no space left for the operation's writes: 507, nothing half-written."""


# ---------------------------------------------------------------------- the page cache
class InvalidFields(InvalidValueError):
    """Named fields of a request or an update break rules (all or nothing: nothing changed).

    Built with `from_fields`, the exception carries, as the cache routes' one 400 does, ``params``
    (field -> message) and ``details`` (field -> ``{code, message}``) in its details.
    """

    @classmethod
    def from_fields(cls, fields: Mapping[str, Mapping[str, Any]]) -> Self:
        """``rest_invalid_param`` naming every field of ``fields`` (field -> code, message)."""
        names = ", ".join(sorted(fields))
        return cls(
            "rest_invalid_param",
            f"Invalid parameter(s): {names}",
            {
                "params": {key: field["message"] for key, field in fields.items()},
                "details": {key: dict(field) for key, field in fields.items()},
            },
        )


class InvalidSettings(InvalidFields):
    """A page-cache settings update breaks a rule of the settings schema (nothing changed)."""


class InvalidPluginSwitches(InvalidFields):
    """A page-cache plugin switch names no plugin or is not a boolean (nothing changed)."""


class InvalidURL(InvalidValueError):
    """A URL to purge or test is not one of the site's pages: not a URL, a host the site does
    not serve, a path escaping the cache.

    Args:
        url: the value refused, as given.
        reason: why, as the end of a sentence about it (``is not a valid URL``).
    """

    def __init__(self, url: object, reason: str) -> None:
        super().__init__(
            "rest_invalid_param", f"url {reason}.", {"params": {"url": f"{url!r} {reason}"}}
        )
        self.url = url
        self.reason = reason
