"""The site's own pages: the front page and the not-found page.

Every page carries the API discovery ``Link`` header and ``<link>`` tag (SPEC.md §4
behaviour 7). Pages are rendered from Jinja2 templates with autoescaping on.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment
from markupsafe import Markup
from werkzeug.wrappers import Request, Response

from sitecache.rest.discovery import discovery_link_header, discovery_link_tags
from sitecache.rest.server import RestServer
from sitecache.templating import make_template_environment

__all__ = ["FrontSite"]


class FrontSite:
    """Serves the pages of the site that are not REST routes.

    Args:
        server: the REST server (for discovery links and the site's settings).
    """

    def __init__(self, server: RestServer, templates: Environment | None = None) -> None:
        self.server = server
        self.templates = templates or make_template_environment()

    def render(self, template: str, resource_route: str = "", **context: Any) -> str:
        """Render ``template`` with the site's common context."""
        settings = self.server.settings
        return self.templates.get_template(template).render(
            site_name=settings.site_name,
            site_description=settings.site_description,
            home_url=self.server.home_url(),
            api_root=self.server.rest_url("/"),
            # The tags are built from escaped values by discovery_link_tags.
            discovery_tags=Markup(discovery_link_tags(self.server, resource_route)),  # noqa: S704
            **context,
        )

    def page(self, body: str, status: int = 200, resource_route: str = "") -> Response:
        """An HTML response carrying the discovery ``Link`` header."""
        response = Response(body, status=status, mimetype="text/html")
        response.headers["Link"] = discovery_link_header(self.server, resource_route)
        return response

    def __call__(self, request: Request) -> Response:
        """Answer a page request."""
        if request.method not in ("GET", "HEAD"):
            response = Response("Method not allowed.\n", status=405, mimetype="text/plain")
            response.headers["Allow"] = "GET, HEAD"
            return response
        if request.path in ("/", "/index.php"):
            response = self.page(self.render("front.html"))
            # What the page shows and its type, for the page cache's purges and `pages` setting.
            response.headers["Cache-Tag"] = "home"
            response.headers["X-Site-Page-Type"] = "home, frontpage"
            return response
        return self.page(self.render("not_found.html", path=request.path), status=404)
