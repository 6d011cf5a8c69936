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
from typing import Any

__all__ = [
    "ConflictError",
    "DomainError",
    "ForbiddenError",
    "GoneError",
    "InvalidValueError",
    "NotFoundError",
    "UnauthorizedError",
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
