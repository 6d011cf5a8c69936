"""Fixtures of the ``site-cache/v1`` tests: a site with users of every role and a client."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from werkzeug.test import TestResponse
from werkzeug.wrappers import Request, Response

from tests.auth.conftest import FakeClock, Site, build_site
from tests.conftest import AppFactory

BASE = "/site-json/site-cache/v1"


@dataclass
class Api:
    """Calls the cache routes as a user of some role (an application password)."""

    site: Site

    def call(
        self,
        method: str,
        route: str,
        body: Any = None,
        *,
        role: str | None = "administrator",
        query: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> TestResponse:
        """One request; ``role=None`` is nobody."""
        sent = dict(headers or {})
        if role is not None:
            sent.update(self.site.basic(role))
        data = None
        if body is not None:
            data = json.dumps(body)
            sent["Content-Type"] = "application/json"
        return self.site.client().open(
            BASE + route,
            method=method,
            data=data,
            headers=sent,
            query_string=query,
            base_url="http://example.org",
        )

    def json(self, method: str, route: str, body: Any = None, **kwargs: Any) -> Any:
        """The decoded body of a 200 answer."""
        response = self.call(method, route, body, **kwargs)
        assert response.status_code == 200, response.get_data(as_text=True)
        return response.get_json()

    def page(self, path: str = "/", **headers: str) -> TestResponse:
        """An anonymous visit to a page of the site."""
        return self.site.client().get(path, base_url="http://example.org", headers=headers)


@pytest.fixture
def site(app_factory: AppFactory) -> Site:
    """A site at http://example.org with one user per role."""
    return build_site(app_factory(), FakeClock())


@pytest.fixture
def api(site: Site) -> Api:
    """The cache API as the site's administrator."""
    return Api(site)


def add_page(
    site: Site,
    path: str,
    body: str | None = None,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
    seen: list[dict[str, Any]] | None = None,
) -> None:
    """Serve an HTML page at ``path`` (``seen`` collects each request's environ)."""

    def view(request: Request) -> Response:
        if seen is not None:
            seen.append(dict(request.environ))
        text = body if body is not None else f"<html><body><p>{path}</p>{'x' * 300}</body></html>"
        response = Response(text, status=status, mimetype="text/html")
        for name, value in (headers or {}).items():
            response.headers[name] = value
        return response

    site.app.views[path] = view
