"""A page of the site as data (`Page`), and its HTTP response with the headers a cache reads.

Every page carries the API discovery ``Link`` header and ``<link>`` tag, plus an ``alternate``
link to the REST resource it shows (a post, a term, an author). For the
page cache, every page says what it shows in ``Cache-Tag`` and what kind of page it is in
``X-Site-Page-Type``; a page showing a held comment to its author is ``no-store, private``.
Templates are Jinja2 with autoescaping on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment
from markupsafe import Markup
from werkzeug.wrappers import Response

from sitecache.rest.discovery import discovery_link_header, discovery_link_tags
from sitecache.rest.server import RestServer
from sitecache.site.links import SiteLinks
from sitecache.site.reads import RequestReads

__all__ = ["Page", "PageRenderer", "redirect"]


@dataclass
class Page:
    """What one page shows: its template, context and the cache contract's headers."""

    template: str
    context: dict[str, Any]
    types: tuple[str, ...]
    tags: list[str] = field(default_factory=list)
    resource_route: str = ""
    status: int = 200
    mimetype: str = "text/html"
    private: bool = False


def redirect(location: str, status: int = 301) -> Response:
    """A redirect (no body worth caching)."""
    response = Response("", status=status)
    response.headers["Location"] = location
    return response


class PageRenderer:
    """Renders templates with the site's common context and answers pages.

    Args:
        server: the REST server (discovery links, the home URL).
        templates: the Jinja2 environment (autoescaping on).
        reads: the per-request reads (the title and tagline options).
        links: the site's URLs (the feed's).
    """

    def __init__(
        self, server: RestServer, templates: Environment, reads: RequestReads, links: SiteLinks
    ) -> None:
        self.server = server
        self.templates = templates
        self.reads = reads
        self.links = links

    def render(self, template: str, resource_route: str = "", **context: Any) -> str:
        """Render ``template`` with the site's common context."""
        settings = self.server.settings
        return self.templates.get_template(template).render(
            site_name=self.reads.option("title", settings.site_name),
            site_description=self.reads.option("description", settings.site_description),
            home_url=self.server.home_url(),
            api_root=self.server.rest_url("/"),
            feed_url=self.links.url(self.links.feed_path()),
            # The tags are built from escaped values by discovery_link_tags.
            discovery_tags=Markup(discovery_link_tags(self.server, resource_route)),  # noqa: S704
            **context,
        )

    def respond(self, page: Page) -> Response:
        """The response of ``page``: its body, discovery links and cache contract headers."""
        body = self.render(page.template, page.resource_route, **page.context)
        response = Response(body, status=page.status, mimetype=page.mimetype)
        response.headers["Link"] = discovery_link_header(self.server, page.resource_route)
        response.headers["X-Site-Page-Type"] = ", ".join(page.types)
        tags = list(dict.fromkeys(page.tags))
        if tags:
            response.headers["Cache-Tag"] = ",".join(tags)
        if page.private:
            # SECURITY: a page showing a held comment is for its author only.
            response.headers["Cache-Control"] = "no-store, private"
        return response

    def not_found(self, path: str) -> Response:
        """The 404 page."""
        return self.respond(
            Page("not_found.html", {"path": path, "title": "Page not found"}, ("404",), status=404)
        )
