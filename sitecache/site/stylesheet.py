"""The site's style sheet, served as a file of its own that browsers keep.

Every HTML page (the front site, login, account and dashboard pages: ``base.html``) links it
rather than carrying it inline, so a page is about 6 KB smaller and a visitor downloads the
style once. Its URL carries a version in its path, ``/site-style.<hash>.css``, the start of
the SHA-256 of what it serves, so a changed style sheet (a new release, another theme whose
``site_style.css`` overrides the built-in one) has a new URL and the old one can be kept for
ever. The version is in the path, not in a query string (WordPress's ``?ver=``), so the page
cache and proxies that skip query strings store it like any other file:

- the current version: ``Cache-Control: public, max-age=31536000, immutable``;
- any other version, or none (``/site-style.css``, also with the ``?ver=<hash>`` of earlier
  releases' pages: the current version there counts as current): the same bytes,
  ``no-cache`` (a page rendered by a node of another release, or before a theme switch, still
  gets a style, never stored under a wrong name);
- both with an ``ETag`` (the version), answered 304 to a matching ``If-None-Match``.

The text is the active theme's ``site_style.css`` template rendered once per template object
(a theme switch or an edited file gives a new one).
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass
from typing import Final

from jinja2 import Environment, Template
from werkzeug.wrappers import Request, Response

from sitecache.rest.plain_responses import method_not_allowed
from sitecache.rest.server import RestServer

__all__ = [
    "IMMUTABLE",
    "STYLESHEET_PATH",
    "STYLESHEET_TEMPLATE",
    "SiteStylesheet",
    "stylesheet_version",
]

#: Where the style sheet is served without a version (under the application's mount point).
STYLESHEET_PATH: Final = "/site-style.css"
#: A versioned style sheet path: ``/site-style.<hex>.css``.
_VERSIONED_PATH: Final = re.compile(r"/site-style\.([0-9a-f]{1,64})\.css")
#: The template that holds it (a theme may override it).
STYLESHEET_TEMPLATE: Final = "site_style.css"
#: The caching of the current version: a year, never revalidated.
IMMUTABLE: Final = "public, max-age=31536000, immutable"
_VERSION_LENGTH: Final = 16


def stylesheet_version(path: str) -> str | None:
    """The version a style sheet path names: ``""`` for the unversioned `STYLESHEET_PATH`,
    the hash of ``/site-style.<hash>.css``, ``None`` for a path that is no style sheet."""
    if path == STYLESHEET_PATH:
        return ""
    matched = _VERSIONED_PATH.fullmatch(path)
    return None if matched is None else matched.group(1)


@dataclass(frozen=True, slots=True)
class _Sheet:
    template: Template
    body: bytes
    version: str


class SiteStylesheet:
    """The style sheet of one application's templates.

    Args:
        templates: the application's Jinja2 environment (the active theme's loader).
        server: the REST server (the request's mount point).
    """

    def __init__(self, templates: Environment, server: RestServer) -> None:
        self.templates = templates
        self.server = server
        self._lock = threading.Lock()
        self._sheet: _Sheet | None = None

    def _current(self) -> _Sheet:
        """The style sheet of the active template, rendered once per template object."""
        template = self.templates.get_template(STYLESHEET_TEMPLATE)
        sheet = self._sheet
        if sheet is not None and sheet.template is template:
            return sheet
        with self._lock:
            body = template.render().encode("utf-8")
            version = hashlib.sha256(body).hexdigest()[:_VERSION_LENGTH]
            self._sheet = sheet = _Sheet(template, body, version)
        return sheet

    @property
    def version(self) -> str:
        """The current version (the start of the SHA-256 of the bytes served)."""
        return self._current().version

    def url(self) -> str:
        """The style sheet's URL for the page being rendered: ``/site-style.<hash>.css`` under
        the request's mount point (root-relative: the page's own origin)."""
        mount = self.server.request_context.script_root
        return f"{mount}/site-style.{self.version}.css"

    def respond(self, request: Request) -> Response:
        """``GET /site-style.<hash>.css`` (or ``/site-style.css``): the style sheet, immutable
        for a year under the current version, ``no-cache`` under any other or none; 304 to a
        matching ``If-None-Match``. ``request.path`` must be a style sheet path
        (`stylesheet_version` is not ``None``)."""
        if request.method not in ("GET", "HEAD"):
            return method_not_allowed("GET, HEAD")
        sheet = self._current()
        response = Response(sheet.body, mimetype="text/css")
        version = stylesheet_version(request.path) or request.args.get("ver")
        current = version == sheet.version
        response.headers["Cache-Control"] = IMMUTABLE if current else "no-cache"
        response.set_etag(sheet.version)
        return response.make_conditional(request)
