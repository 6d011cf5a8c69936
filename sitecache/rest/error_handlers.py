"""The REST boundary's table from domain exception to `RestError` (falcon's ``add_error_handler``).

Domain code raises `sitecache.domain_errors` exceptions; the REST server catches them where it
runs permission callbacks, handlers and authenticators, and answers with the `RestError` this
table gives: the exception's code, message and details, with the HTTP status of its kind. A
handler is found by walking the exception's class hierarchy from the most specific class, so a
plugin's own ``NotFoundError`` subclass answers 404 until it registers a handler of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from sitecache.domain_errors import (
    ConflictError,
    DomainError,
    ForbiddenError,
    GoneError,
    InvalidValueError,
    NotFoundError,
    StorageFullError,
    UnauthorizedError,
    UnavailableError,
)
from sitecache.errors import RestError

__all__ = ["DOMAIN_ERROR_STATUSES", "DomainErrorHandler", "ErrorHandlers", "answer_with_status"]

DomainErrorHandler = Callable[[DomainError], RestError]
"""Turns one domain exception into the REST error answered."""

DOMAIN_ERROR_STATUSES: Final[Mapping[type[DomainError], int]] = {
    # A refusal of an unnamed kind is the caller's to fix.
    DomainError: 400,
    InvalidValueError: 400,
    UnauthorizedError: 401,
    ForbiddenError: 403,
    NotFoundError: 404,
    ConflictError: 409,
    GoneError: 410,
    # Outages are nobody's mistake: the same request may succeed later (`Retry-After`).
    UnavailableError: 503,
    StorageFullError: 507,
}
"""The HTTP status of each kind of domain exception."""


def answer_with_status(status: int) -> DomainErrorHandler:
    """A handler answering ``RestError(code, message, {"status": status, **details})``."""

    def handle(error: DomainError) -> RestError:
        return RestError(error.code, error.message, {"status": status, **error.details})

    return handle


class ErrorHandlers:
    """Which `RestError` answers each domain exception (one table per REST server)."""

    def __init__(self) -> None:
        self._handlers: dict[type[DomainError], DomainErrorHandler] = {
            kind: answer_with_status(status) for kind, status in DOMAIN_ERROR_STATUSES.items()
        }

    def add(self, kind: type[DomainError], handler: DomainErrorHandler) -> None:
        """Answer ``kind`` (and its subclasses without a handler of their own) with
        ``handler``; replaces an earlier handler of ``kind``."""
        self._handlers[kind] = handler

    def find(self, kind: type[DomainError]) -> DomainErrorHandler:
        """The handler of the most specific class of ``kind`` that has one."""
        # NOTE: every DomainError has DomainError itself in its MRO, and that one always has a
        # handler, so the walk always ends with one (falcon's _find_error_handler walk).
        for base in kind.__mro__:
            handler = self._handlers.get(base)
            if handler is not None:
                return handler
        return self._handlers[DomainError]

    def to_rest_error(self, error: DomainError) -> RestError:
        """The REST error that answers ``error``."""
        return self.find(type(error))(error)
