"""What the front site's POST forms share (the comment form, the post-password form).

A form answers POST only (405 otherwise), refuses a post from another site's page (403, the
login form's check: `sitecache.auth.origin`), shows a refusal as a small page, and answers a
success with a redirect carrying a site cookie (HttpOnly, SameSite=Lax, Secure on an https
site). Refusals and redirects are ``no-store, private``: they belong to one visitor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Final

from werkzeug.wrappers import Request, Response

from sitecache.auth.origin import request_cross_site_reason
from sitecache.rest.plain_responses import method_not_allowed
from sitecache.rest.server import RestServer
from sitecache.site.content import ContentService
from sitecache.site.links import SiteLinks
from sitecache.site.page import PageRenderer, redirect

__all__ = ["NO_STORE", "SiteForm"]

NO_STORE: Final = "no-store, private"


@dataclass(eq=False, repr=False)
class SiteForm(ABC):
    """One POST form of the front site.

    Args:
        server: the REST server (the home URL; the status a domain refusal answers with).
        content: the content service.
        links: the site's URLs.
        renderer: renders the page of a refused form.
        secret: the site's secret key (the keyed hashes the form's cookies and links hold).
    """

    #: The title of a refusal's page.
    refused_title: ClassVar[str]
    #: What a post from another site's page is told.
    cross_site_message: ClassVar[str]
    #: ``Cache-Control`` of the 405 answered to another method (empty: none).
    not_allowed_cache_control: ClassVar[str] = NO_STORE

    server: RestServer
    content: ContentService
    links: SiteLinks
    renderer: PageRenderer
    secret: bytes

    def __call__(self, request: Request) -> Response:
        """Answer a request to the form's URL: POST only, from this site's own pages."""
        if request.method != "POST":
            return method_not_allowed("POST", self.not_allowed_cache_control)
        home = self.server.home_url()
        # SECURITY: a form posted from another site's page is refused (CSRF), by the same check
        # as the login form's (`sitecache.auth.origin`).
        if request_cross_site_reason(request, home) is not None:
            return self.refused(self.cross_site_message, 403)
        return self.take(request, home)

    @abstractmethod
    def take(self, request: Request, home: str) -> Response:
        """Answer a same-site POST (``home``: the site's home URL)."""

    def refused(self, message: str, status: int) -> Response:
        """The page of a refused form, with ``status``."""
        response = Response(
            self.renderer.render("message.html", title=self.refused_title, message=message),
            status=status,
            mimetype="text/html",
        )
        response.headers["Cache-Control"] = NO_STORE
        return response

    @staticmethod
    def redirect_with_cookie(
        location: str, status: int, home: str, cookie: tuple[str, str], max_age: int
    ) -> Response:
        """A ``no-store`` redirect to ``location`` setting ``cookie`` (name, value) for the
        whole site for ``max_age`` seconds."""
        response = redirect(location, status=status)
        response.headers["Cache-Control"] = NO_STORE
        name, value = cookie
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            path="/",
            secure=home.startswith("https://"),
            httponly=True,
            samesite="Lax",
        )
        return response
