"""Calls to the site's own REST API on behalf of a logged-in browser (the admin pages' one path).

The dashboard and account pages never change anything themselves: each form they serve is
turned into the REST request a script would send (the session cookie, a fresh ``site_rest``
nonce in ``X-Site-Nonce``, a JSON body) and answered by the REST server through the same
``serve_request`` entry point as a request from the network: same authentication, permission
callbacks, validation and error codes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from sitecache.rest.http import serve_request
from sitecache.rest.server import RestServer

__all__ = ["FORM_MESSAGES", "RestAnswer", "call_rest"]

#: Request headers of the browser's request that the internal request keeps.
_KEPT_ENVIRON: Final = (
    "HTTP_COOKIE",
    "HTTP_HOST",
    "HTTP_USER_AGENT",
    "REMOTE_ADDR",
    "SERVER_NAME",
    "SERVER_PORT",
    "wsgi.url_scheme",
)

#: Error code -> what a browser form says instead of the REST message (which is worded for a
#: script). The form's own nonce is the one the REST API checks, so a page left open past the
#: nonce's lifetime is refused with ``rest_cookie_invalid_nonce``.
FORM_MESSAGES: Final[dict[str, str]] = {
    "rest_cookie_invalid_nonce": "This form has expired; reload the page and try again.",
}


@dataclass(frozen=True)
class RestAnswer:
    """What the REST API answered: status, the decoded JSON body and the headers."""

    status: int
    data: Any
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the status is a 2xx."""
        return 200 <= self.status < 300

    @property
    def error_message(self) -> str:
        """The error's message (``""`` for a success)."""
        if self.ok or not isinstance(self.data, dict):
            return ""
        return str(self.data.get("message") or f"HTTP {self.status}")

    @property
    def error_code(self) -> str:
        """The error's code (``""`` for a success or an answer without one)."""
        if self.ok or not isinstance(self.data, dict):
            return ""
        return str(self.data.get("code") or "")

    @property
    def form_message(self) -> str:
        """The error's summary as a browser form shows it: `FORM_MESSAGES` for the codes it
        words, else the REST message (``""`` for a success)."""
        return FORM_MESSAGES.get(self.error_code, self.error_message)

    @property
    def details(self) -> dict[str, str]:
        """Per-field messages of a ``rest_invalid_param`` error (``data.details``/``params``)."""
        if self.ok or not isinstance(self.data, dict):
            return {}
        data = self.data.get("data") or {}
        found: dict[str, str] = {}
        for source in (data.get("params") or {}, data.get("details") or {}):
            for name, value in source.items():
                message = value.get("message") if isinstance(value, dict) else value
                found[str(name).split("[", 1)[0]] = str(message)
        return found


def call_rest(
    server: RestServer,
    browser: Request,
    method: str,
    route: str,
    nonce: str,
    body: Any = None,
    query: dict[str, Any] | None = None,
) -> RestAnswer:
    """Answer ``method route`` as the REST API answers the browser's session sending ``nonce``.

    ``route`` is the REST route (``/site-cache/v1/settings``); ``body`` is sent as JSON when
    not ``None``. The answer is what a script in the page would have received.
    """
    builder = EnvironBuilder(
        path=f"/{server.settings.prefix}{route}",
        method=method,
        query_string=query,
        data=None if body is None else json.dumps(body),
        content_type=None if body is None else "application/json",
        headers=[("X-Site-Nonce", nonce)],
    )
    try:
        environ = builder.get_environ()
    finally:
        builder.close()
    for key in _KEPT_ENVIRON:
        if key in browser.environ:
            environ[key] = browser.environ[key]
    request = Request(environ)
    response = serve_request(server, request, route)
    raw = response.get_data()
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        data = None
    return RestAnswer(response.status_code, data, dict(response.headers.items()))
