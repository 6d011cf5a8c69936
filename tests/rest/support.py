"""Helpers shared by the REST test modules: a fake user and authenticator, JSON bodies."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from werkzeug.test import TestResponse

from sitecache.errors import RestError
from sitecache.rest import Authentication, RestRequest, return_true


@dataclass(frozen=True)
class FakeUser:
    """A logged-in user who can do anything."""

    id: int = 7
    login: str = "editor"

    def can(self, capability: str, *args: object) -> bool:
        return True


@dataclass
class HeaderLogin:
    """Logs the caller in as `FakeUser` when the request has ``X-Test-Login``; ``X-Test-Fail``
    gives an authentication error. ``headers`` come back through the `Authentication` (a
    refreshed nonce, say)."""

    headers: dict[str, str] = field(default_factory=dict)

    def authenticate(self, request: RestRequest) -> Authentication | RestError | None:
        if request.get_header("x_test_fail"):
            return RestError("rest_cookie_invalid_nonce", "Cookie check failed", {"status": 403})
        if request.get_header("x_test_login"):
            return Authentication(user=FakeUser(), method="test", headers=self.headers)
        return None


def body_of(response: TestResponse) -> Any:
    """The decoded JSON body."""
    return json.loads(response.get_data(as_text=True))


def echo(request: RestRequest) -> dict[str, Any]:
    """Report what the handler saw."""
    return {
        "method": request.get_method(),
        "route": request.get_route(),
        "params": request.get_params(),
    }


def public(methods: Any = "GET", callback: Any = echo, **extra: Any) -> dict[str, Any]:
    """A well-formed handler that anybody may call."""
    return {"methods": methods, "callback": callback, "permission_callback": return_true, **extra}
