"""The site's pages: `FrontSite` answers every request that is not a REST route or an admin page.

A request goes through the route table (`sitecache.site.routing`): its matches are looked up in
order (`sitecache.site.targets`) until one names something; a redirecting match (an old
``/?p=ID`` link, a query-string search with pretty permalinks, the static front page's own URL)
answers 301 to the canonical URL, and a path without its trailing slash answers 301 to the
slashed path when that names something, all before any page is rendered. Then the page is
rendered (`sitecache.site.views`, `sitecache.site.feeds`) and answered with the headers a page
cache reads (`sitecache.site.page`).
The comment form's POST is `sitecache.site.comment_form`'s; what a cache must purge or may
warm is `sitecache.site.cache_contract`'s. No page sets a cookie but the answers of the
comment form and of the password form (`sitecache.site.postpass_form`, which unlocks
password-protected posts).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlencode

from jinja2 import Environment
from werkzeug.wrappers import Request, Response

from sitecache.auth.throttle import LoginThrottle
from sitecache.auth.users import UserRepository
from sitecache.domain_errors import OutageError
from sitecache.rest.plain_responses import method_not_allowed
from sitecache.rest.server import RestServer
from sitecache.site.blocks import BlockRenderer, BlockTypeRegistry, core_block_types
from sitecache.site.cache_contract import CacheContract
from sitecache.site.comment_form import CommentForm
from sitecache.site.content import ContentService
from sitecache.site.feeds import SiteFeeds
from sitecache.site.links import SiteLinks
from sitecache.site.models import Post, Term
from sitecache.site.page import Page, PageRenderer, redirect
from sitecache.site.postpass import POSTPASS_PATH, is_unlocked
from sitecache.site.postpass_form import PostPassForm
from sitecache.site.reads import RequestReads
from sitecache.site.site_form import NO_STORE
from sitecache.site.targets import Feed, Listing, Moved, Single, Sitemap, SiteTargets, Target
from sitecache.site.views import COMMENT_POST_PATH, SiteViews
from sitecache.templating import make_template_environment

__all__ = ["COMMENT_POST_PATH", "POSTPASS_PATH", "FrontSite", "Redirect"]

#: The message page's title for each status an outage answers with.
_OUTAGE_TITLES: Final = {503: "Temporarily unavailable", 507: "Not saved: no space left"}

_NAMING: Final = frozenset({"p", "page_id", "paged"})
"""Query variables naming a post or a page of a listing: never carried to a new location."""


@dataclass(frozen=True, slots=True)
class Redirect:
    """A request answered by a permanent redirect to ``location``."""

    location: str
    keep_query: bool = False
    """Whether the request's query string goes along (the front page's own URL: a held
    comment's link still shows it to its author)."""


class FrontSite:
    """Serves the pages of the site that are not REST routes.

    Args:
        server: the REST server (discovery links, URLs, the request's host).
        content: the content service (posts, terms, comments, options).
        templates: the Jinja2 environment (autoescaping on).
        users: the user repository (authors).
        secret: the site's secret key (moderation hashes, the postpass cookie).
        blocks: the block types post content may embed (a registry of the core blocks when
            not given).
        throttle: counts wrong post passwords (the login throttle; none: not counted).
    """

    def __init__(
        self,
        server: RestServer,
        content: ContentService,
        templates: Environment | None = None,
        users: UserRepository | None = None,
        secret: bytes = b"",
        blocks: BlockTypeRegistry | None = None,
        throttle: LoginThrottle | None = None,
    ) -> None:
        self.server = server
        self.secret = secret
        self.content = content
        self.users = users
        self.reads = RequestReads(content, users)
        self.links = SiteLinks(server, content, self.reads)
        self.targets = SiteTargets(content, self.links, self.reads)
        environment = templates or make_template_environment()
        self.renderer = PageRenderer(server, environment, self.reads, self.links)
        if blocks is None:
            blocks = BlockTypeRegistry()
            for block_type in core_block_types():
                blocks.register(block_type)
        self.blocks = BlockRenderer(blocks, content, self.links, self.reads, environment)
        self.views = SiteViews(content, self.links, self.reads, secret, self.blocks)
        self.feeds = SiteFeeds(content, self.links, self.reads, self.views)
        self.comment_form = CommentForm(server, content, self.links, self.renderer, secret)
        self.postpass_form = PostPassForm(
            server, content, self.links, self.renderer, secret, throttle
        )
        self.cache_contract = CacheContract(content, self.links)

    # ------------------------------------------------------------------ URLs and seams
    def post_url(self, post: Post, terms: Mapping[int, Term] | None = None) -> str:
        """A post's permalink (absolute); a child page's path names its ancestors."""
        return self.links.post_url(post, terms)

    def term_url(self, term: Term) -> str:
        """A term archive's URL (absolute)."""
        return self.links.term_url(term)

    def user_profile(self, user_id: int) -> tuple[str, str] | None:
        """``(email, display name)`` of a user, or ``None``."""
        user = self.users.get(user_id) if self.users is not None else None
        return None if user is None else (user.email, user.display_name)

    def related_tags(self, post_id: int | Post, *, comment: bool = False) -> list[str]:
        """The ``Cache-Tag`` tags of the pages to purge when a post changes
        (`CacheContract.related_tags`)."""
        return self.cache_contract.related_tags(post_id, comment=comment)

    def showing_tags(self, post_ids: Iterable[int]) -> list[str]:
        """The ``Cache-Tag`` tags of every page showing one of these posts
        (`CacheContract.showing_tags`)."""
        return self.cache_contract.showing_tags(post_ids)

    def preload_urls(
        self, limit_posts: int | None = None, taxonomies: bool = True
    ) -> Iterator[str]:
        """Absolute URLs to warm a cache with (`CacheContract.preload_urls`)."""
        return self.cache_contract.preload_urls(limit_posts, taxonomies)

    def front_page_keys(self) -> dict[str, object]:
        """The API index's front-page keys: ``show_on_front``, ``page_on_front`` and
        ``page_for_posts`` as the options hold them (one read of the options)."""
        options = self.content.options.all()
        return {
            name: options[name] for name in ("page_for_posts", "page_on_front", "show_on_front")
        }

    # ------------------------------------------------------------------ answering
    def __call__(self, request: Request) -> Response:
        """Answer a page request."""
        with self.reads.request():
            return self._answer(request)

    def bad_request(self, message: str) -> Response:
        """A 400 page (the site's message page, never stored) saying ``message``."""
        return self.error_page(400, "Bad request", message)

    def error_page(self, status: int, title: str, message: str) -> Response:
        """A page with ``status`` (the site's message page, never stored) titled ``title``
        and saying ``message``: what a visitor's form gets when the request itself is
        refused (too large, cut off, not UTF-8) before any page could answer it."""
        with self.reads.request():
            body = self.renderer.render("message.html", title=title, message=message)
        response = Response(body, status=status, mimetype="text/html")
        response.headers["Cache-Control"] = NO_STORE
        return response

    def outage_page(self, outage: OutageError) -> Response:
        """The page of a request that a service the site needs failed (503 while the
        database does not answer, 507 when its disk is full): the site's message page drawn
        from the configuration alone (the failing database holds the site's title), never
        stored, with ``Retry-After``."""
        status = self.server.error_handlers.to_rest_error(outage).status
        settings = self.server.settings
        body = self.renderer.templates.get_template("message.html").render(
            site_name=settings.site_name,
            home_url=self.server.home_url(),
            title=_OUTAGE_TITLES.get(status, "Temporarily unavailable"),
            message=outage.message,
        )
        response = Response(body, status=status, mimetype="text/html")
        response.headers["Cache-Control"] = NO_STORE
        response.headers["Retry-After"] = str(outage.retry_after)
        return response

    def _answer(self, request: Request) -> Response:
        if request.path == COMMENT_POST_PATH:
            return self.comment_form(request)
        if request.path == POSTPASS_PATH:
            return self.postpass_form(request)
        if request.method not in ("GET", "HEAD"):
            return method_not_allowed("GET, HEAD")
        found = self.resolve(request.path, request.args)
        if found is None and self._names_something_with_a_slash(request.path):
            query = request.query_string.decode("latin-1")
            return redirect(request.path + "/" + (f"?{query}" if query else ""))
        if found is None:
            return self.renderer.not_found(request.path)
        if isinstance(found, Redirect):
            query = ""
            if found.keep_query:  # all but what named the page (else it would name it again)
                kept = [(k, v) for k, v in request.args.items(multi=True) if k not in _NAMING]
                query = urlencode(kept)
            return redirect(found.location + (f"?{query}" if query else ""))
        return self.renderer.respond(self.page(found, request.args, request.cookies))

    def _names_something_with_a_slash(self, path: str) -> bool:
        """Whether ``path`` is a page's path without its trailing slash (canonical slashes,
        werkzeug's ``strict_slashes``; a file name such as ``sitemap.xml`` never is)."""
        if path.endswith("/") or "." in path:
            return False
        return self.resolve(path + "/", {}) is not None

    def resolve(self, path: str, query: Mapping[str, str]) -> Target | Redirect | None:
        """What ``path`` and ``query`` name, looked up but not rendered: a target, a redirect,
        or ``None`` for nothing there."""
        for match in self.links.table().match(path, query):
            if match.redirect:
                location = self.targets.canonical_url(match)
                if location is not None:
                    return Redirect(location)
            else:
                target = self.targets.load(match)
                if isinstance(target, Moved):
                    return Redirect(target.location, keep_query=True)
                if target is not None:
                    return target
            if match.final:
                return None
        return None

    def page(
        self,
        target: Target,
        query: Mapping[str, str],
        cookies: Mapping[str, str] | None = None,
    ) -> Page:
        """The page of ``target`` (``query`` may name a held comment for its author; the
        ``cookies`` may unlock a password-protected post, `sitecache.site.postpass`)."""
        if isinstance(target, Listing):
            return self.views.listing(target)
        if isinstance(target, Single):
            unlocked = is_unlocked(self.secret, target.post, cookies or {}, self.server.home_url())
            return self.views.single(target.post, query, unlocked=unlocked, front=target.front)
        if isinstance(target, Feed):
            return self.feeds.feed()
        if isinstance(target, Sitemap):
            return self.feeds.sitemap()
        raise TypeError(f"no view of {target!r}")  # pragma: no cover - Target is closed
