"""The site's pages: home, posts, pages, archives, search, feed, sitemap and the comment form.

Every page carries the API discovery ``Link`` header and ``<link>`` tag (SPEC.md §4
behaviour 7), plus an ``alternate`` link to the REST resource it shows (a post, a term, an
author). For the page cache, every page says what it shows in ``Cache-Tag`` (``post-<id>``,
``term-<id>``, ``author-<id>``, ``home``, ``archive``, ``feed``, ``sitemap``; term and author
archives also ``term-archive-<id>`` / ``author-archive-<id>``) and what kind
of page it is in ``X-Site-Page-Type`` (single, page, home, frontpage, category, tag, author,
archives, search, feed; 404). No page sets a cookie except the answer to a comment POST.
Pages are rendered from Jinja2 templates with autoescaping on.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from typing import Any, Final
from urllib.parse import urlencode

from jinja2 import Environment
from markupsafe import Markup
from werkzeug.wrappers import Request, Response

from sitecache.auth.roles import SiteUser
from sitecache.auth.users import UserRepository
from sitecache.domain_errors import DomainError, ForbiddenError, NotFoundError
from sitecache.rest.discovery import discovery_link_header, discovery_link_tags
from sitecache.rest.server import RestServer
from sitecache.site.commenting import (
    AWAITING_MODERATION,
    COOKIE_LIFETIME,
    comment_author_cookie_name,
    cookie_value,
    moderation_hash,
    parse_submission,
    same_origin,
    valid_moderation_hash,
)
from sitecache.site.content import CommentQuery, ContentService, PostQuery, TermQuery
from sitecache.site.dates import format_php_date
from sitecache.site.models import Comment, Post, Term, sanitize_title
from sitecache.site.permalinks import Permalinks
from sitecache.site.render import excerpt_text, paragraphs
from sitecache.templating import make_template_environment

__all__ = ["COMMENT_POST_PATH", "FrontSite"]

COMMENT_POST_PATH: Final = "/comment-post"
_PAGED = r"(?:page/(?P<page>\d{1,6})/)?"
_ROUTES: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(pattern), name)
    for pattern, name in (
        (r"^/(?:index\.php)?\Z", "home"),
        (r"^/page/(?P<page>\d{1,6})/\Z", "home"),
        (r"^/feed/\Z", "feed"),
        (r"^/sitemap\.xml\Z", "sitemap"),
        (rf"^/category/(?P<slug>[^/]+)/{_PAGED}\Z", "category"),
        (rf"^/tag/(?P<slug>[^/]+)/{_PAGED}\Z", "tag"),
        (rf"^/author/(?P<slug>[^/]+)/{_PAGED}\Z", "author"),
        (rf"^/search/(?P<term>[^/]+)/{_PAGED}\Z", "search"),
        (
            rf"^/(?P<year>\d{{4}})/(?:(?P<month>\d{{1,2}})/(?:(?P<day>\d{{1,2}})/)?)?{_PAGED}\Z",
            "date",
        ),
    )
)
_PAGE_PATH: Final = re.compile(r"^/(?P<path>[a-z0-9-]+(?:/[a-z0-9-]+)*)/\Z")
_REST_BASES: Final[Mapping[str, str]] = {"post": "posts", "page": "pages"}
_TERM_BASES: Final[Mapping[str, str]] = {"category": "categories", "post_tag": "tags"}


@dataclass
class _View:
    """What one page shows: its template, context and the cache contract's headers."""

    template: str
    context: dict[str, Any]
    types: tuple[str, ...]
    tags: list[str] = field(default_factory=list)
    resource_route: str = ""
    status: int = 200
    mimetype: str = "text/html"
    private: bool = False


class FrontSite:
    """Serves the pages of the site that are not REST routes.

    Args:
        server: the REST server (discovery links, URLs, the request's host).
        content: the content service (posts, terms, comments, options).
        templates: the Jinja2 environment (autoescaping on).
        users: the user repository (authors).
        secret: the key of the moderation hashes.
    """

    def __init__(
        self,
        server: RestServer,
        content: ContentService,
        templates: Environment | None = None,
        users: UserRepository | None = None,
        secret: bytes = b"",
    ) -> None:
        self.server = server
        self.templates = templates or make_template_environment()
        self.content = content
        self.users = users
        self.secret = secret
        # What one request reads many times (options, authors), read once per request.
        self._request = threading.local()
        self.permalinks = Permalinks(
            lambda: str(self.option("permalink_structure", server.settings.permalink_structure)),
            self.timezone,
        )

    # ------------------------------------------------------------------ helpers
    def option(self, name: str, fallback: Any = None) -> Any:
        """A site option (``fallback`` when the site has no content store)."""
        options: dict[str, Any] | None = getattr(self._request, "options", None)
        value = options.get(name) if options is not None else self.content.get_option(name)
        return fallback if value is None else value

    def timezone(self) -> tzinfo:
        """The site's timezone (read once per request)."""
        zone: tzinfo | None = getattr(self._request, "timezone", None)
        if zone is None:
            zone = self.content.timezone()
            if getattr(self._request, "options", None) is not None:
                self._request.timezone = zone
        return zone

    def url(self, path: str) -> str:
        """The absolute URL of a site path."""
        return self.server.home_url() + path

    def authors(self) -> dict[int, SiteUser]:
        """Every user, by id (authors of posts)."""
        found: dict[int, SiteUser] | None = getattr(self._request, "authors", None)
        if found is None:
            found = {} if self.users is None else {user.id: user for user in self.users.all()}
            if getattr(self._request, "options", None) is not None:
                self._request.authors = found
        return found

    @staticmethod
    def author_slug(user: SiteUser) -> str:
        """An author's archive slug (the user's slug; their login as a slug for old rows)."""
        return user.slug or sanitize_title(user.login, f"user-{user.id}")

    def post_url(self, post: Post, terms: Mapping[int, Term] | None = None) -> str:
        """A post's permalink (absolute); a child page's path names its ancestors."""
        if post.type == "page" and self.permalinks.pretty:
            return self.url(self._page_path(post))
        category = None
        if "%category%" in self.permalinks.structure:
            known = terms if terms is not None else self.content.get_terms(post.term_ids)
            categories = [known[i] for i in post.term_ids if i in known]
            category = next((term for term in categories if term.taxonomy == "category"), None)
        author_slug = "author"
        if "%author%" in self.permalinks.structure:
            user = self.authors().get(post.author)
            author_slug = self.author_slug(user) if user else f"user-{post.author}"
        return self.url(self.permalinks.post_path(post, category, author_slug))

    def _page_path(self, page: Post) -> str:
        """``/<ancestor>/…/<slug>/`` of a page (at most 10 ancestors; a cycle stops the walk)."""
        slugs = [page.slug]
        seen = {page.id}
        parent = page.parent
        while parent and parent not in seen and len(slugs) <= 10:
            ancestor = self.content.get_post(parent)
            if ancestor is None or ancestor.type != "page":
                break
            slugs.append(ancestor.slug)
            seen.add(ancestor.id)
            parent = ancestor.parent
        return "/" + "/".join(reversed(slugs)) + "/"

    def term_url(self, term: Term) -> str:
        """A term archive's URL (absolute)."""
        return self.url(self.permalinks.term_path(term))

    def user_profile(self, user_id: int) -> tuple[str, str] | None:
        """``(email, display name)`` of a user, or ``None``."""
        user = self.users.get(user_id) if self.users is not None else None
        return None if user is None else (user.email, user.display_name)

    def local_time(self, timestamp: int) -> datetime:
        """A UTC timestamp in the site's timezone."""
        return datetime.fromtimestamp(timestamp, self.timezone())

    def render(self, template: str, resource_route: str = "", **context: Any) -> str:
        """Render ``template`` with the site's common context."""
        settings = self.server.settings
        return self.templates.get_template(template).render(
            site_name=self.option("title", settings.site_name),
            site_description=self.option("description", settings.site_description),
            home_url=self.server.home_url(),
            api_root=self.server.rest_url("/"),
            feed_url=self.url(self.permalinks.feed_path()),
            # The tags are built from escaped values by discovery_link_tags.
            discovery_tags=Markup(discovery_link_tags(self.server, resource_route)),  # noqa: S704
            **context,
        )

    def _respond(self, view: _View) -> Response:
        body = self.render(view.template, view.resource_route, **view.context)
        response = Response(body, status=view.status, mimetype=view.mimetype)
        response.headers["Link"] = discovery_link_header(self.server, view.resource_route)
        response.headers["X-Site-Page-Type"] = ", ".join(view.types)
        tags = list(dict.fromkeys(view.tags))
        if tags:
            response.headers["Cache-Tag"] = ",".join(tags)
        if view.private:
            # SECURITY: a page showing a held comment is for its author only.
            response.headers["Cache-Control"] = "no-store, private"
        return response

    def not_found(self, path: str) -> Response:
        """The 404 page."""
        return self._respond(
            _View("not_found.html", {"path": path, "title": "Page not found"}, ("404",), status=404)
        )

    @staticmethod
    def redirect(location: str, status: int = 301) -> Response:
        """A redirect (no body worth caching)."""
        response = Response("", status=status)
        response.headers["Location"] = location
        return response

    # ------------------------------------------------------------------ the cache contract
    def related_tags(self, post_id: int | Post, *, comment: bool = False) -> list[str]:
        """The ``Cache-Tag`` tags of the pages to purge when a post changes.

        With ``comment`` (a comment on it changed) only the post's own page; otherwise the
        post, the home page and its pagination, the feed, the date archives, the sitemap, each
        of its terms' archives and its author's archive. ``post_id`` may be the `Post` itself
        (for a post already deleted, as the ``deleted_post`` hook passes it).
        """
        post = post_id if isinstance(post_id, Post) else None
        if post is None and isinstance(post_id, int):
            post = self.content.get_post(post_id)
        number = post.id if post is not None else int(post_id)  # type: ignore[arg-type]
        tags = [f"post-{number}"]
        if comment:
            return tags
        tags += ["home", "feed", "archive", "sitemap"]
        if post is not None:
            # The archives that list the post, not every page that names its terms or author
            # (a single post names them too: purging those would purge the author's every post).
            tags += [f"term-archive-{term_id}" for term_id in post.term_ids]
            tags.append(f"author-archive-{post.author}")
        return tags

    def preload_urls(
        self, limit_posts: int | None = None, taxonomies: bool = True
    ) -> Iterator[str]:
        """Absolute URLs to warm a cache with: home, then published posts and pages newest
        first (at most ``limit_posts``), then category and tag archives with posts."""
        yield self.url("/")
        terms: dict[int, Term] = {}
        page_number, remaining = 1, limit_posts
        while remaining is None or remaining > 0:
            size = 100 if remaining is None else min(100, remaining)
            posts, _ = self.content.query_posts(
                PostQuery(types=("post", "page"), page=page_number, per_page=size)
            )
            if not posts:
                break
            needed = {i for post in posts for i in post.term_ids} - set(terms)
            terms.update(self.content.get_terms(sorted(needed)))
            for post in posts:
                yield self.post_url(post, terms)
            if remaining is not None:
                remaining -= len(posts)
            page_number += 1
        if taxonomies:
            for taxonomy in _TERM_BASES:
                found, _ = self.content.query_terms(
                    TermQuery(taxonomy=taxonomy, hide_empty=True, per_page=10_000)
                )
                for term in found:
                    yield self.url(self.permalinks.term_path(term))

    # ------------------------------------------------------------------ dispatch
    def __call__(self, request: Request) -> Response:
        """Answer a page request."""
        self._request.options = self.content.options.all()
        try:
            return self._answer(request)
        finally:
            self._request.options = None
            self._request.timezone = None
            self._request.authors = None

    def _answer(self, request: Request) -> Response:
        if request.path == COMMENT_POST_PATH:
            return self.post_comment(request)
        if request.method not in ("GET", "HEAD"):
            response = Response("Method not allowed.\n", status=405, mimetype="text/plain")
            response.headers["Allow"] = "GET, HEAD"
            return response
        self.content.publish_due_posts()
        view = self.resolve(request, request.path)
        if isinstance(view, Response):
            return view
        if (
            view is None
            and not request.path.endswith("/")
            and "." not in request.path
            and self.resolve(request, request.path + "/") is not None
        ):
            query = request.query_string.decode("latin-1")
            return self.redirect(request.path + "/" + (f"?{query}" if query else ""))
        if view is None:
            return self.not_found(request.path)
        return self._respond(view)

    def resolve(self, request: Request, path: str) -> _View | Response | None:
        """The view of ``path`` (a redirect, or ``None`` for nothing there)."""
        if path in ("/", "/index.php"):
            plain = self._plain_query(request)
            if plain is not None:
                return plain
        for pattern, name in _ROUTES:
            found = pattern.match(path)
            if found is not None:
                groups = {k: v for k, v in found.groupdict().items() if v is not None}
                handler: Callable[[Request, dict[str, str]], _View | Response | None] = getattr(
                    self, f"view_{name}"
                )
                return handler(request, groups)
        post_pattern = self.permalinks.post_pattern()
        if post_pattern is not None:
            found = post_pattern.match(path)
            if found is not None:
                view = self.view_post_permalink(request, path, found.groupdict())
                if view is not None:
                    return view
        found = _PAGE_PATH.match(path)
        if found is not None and self.permalinks.pretty:
            return self.view_page_path(request, found.group("path"))
        return None

    def _plain_query(self, request: Request) -> _View | Response | None:
        """The ``/?p=…`` family: rendered with plain permalinks, redirected when pretty."""
        args = request.args
        number = _number(args.get("paged", "")) or 1
        pretty = self.permalinks.pretty
        if "s" in args:
            term = args.get("s", "").strip()
            if not term:
                return self.redirect(self.url("/")) if pretty else None
            if pretty:
                return self.redirect(self.url(self.permalinks.search_path(term)))
            return self.view_search(request, {"term": term, "page": str(number)})
        for key in ("p", "page_id"):
            if key in args:
                post = self.content.get_post(_number(args.get(key, "")))
                if post is None or not post.is_public or post.type not in _REST_BASES:
                    return self.not_found(request.path)
                if pretty:
                    return self.redirect(self.post_url(post))
                return self.view_single(request, post)
        if pretty:
            return None
        simple: dict[str, Callable[[], _View | Response | None]] = {
            "cat": lambda: self._term_archive_by_id(request, _number(args.get("cat", "")), number),
            "tag": lambda: self.view_tag(
                request, {"slug": args.get("tag", ""), "page": str(number)}
            ),
            "author": lambda: self._author_archive(
                request, _number(args.get("author", "")), number
            ),
            "feed": lambda: self.view_feed(request, {}),
            "m": lambda: self._date_from_m(request, args.get("m", ""), number),
        }
        for key, view in simple.items():
            if key in args:
                return view()
        if number > 1:
            return self.view_home(request, {"page": str(number)})
        return None

    # ------------------------------------------------------------------ listings
    def _items(self, posts: list[Post]) -> list[dict[str, Any]]:
        """What a listing shows of each post (one query for the terms, one for comments)."""
        terms = self.content.get_terms(sorted({i for post in posts for i in post.term_ids}))
        counts = self.content.comment_counts([post.id for post in posts])
        authors = self.authors()
        return [self._item(post, terms, authors, counts.get(post.id, 0)) for post in posts]

    def _item(
        self,
        post: Post,
        terms: Mapping[int, Term],
        authors: Mapping[int, SiteUser],
        comments: int,
    ) -> dict[str, Any]:
        date_format = str(self.option("date_format", "F j, Y"))
        local = self.local_time(post.date_gmt)
        author = authors.get(post.author)
        post_terms = [terms[i] for i in post.term_ids if i in terms]
        return {
            "post": post,
            "url": self.post_url(post, terms),
            "title": post.title or "(no title)",
            "date": format_php_date(local, date_format),
            "datetime": local.isoformat(timespec="seconds"),
            "author_name": author.display_name if author else "",
            "author_url": self.url(self.permalinks.author_path(author.id, self.author_slug(author)))
            if author
            else "",
            "categories": [
                {"name": t.name, "url": self.url(self.permalinks.term_path(t))}
                for t in post_terms
                if t.taxonomy == "category"
            ],
            "tags": [
                {"name": t.name, "url": self.url(self.permalinks.term_path(t))}
                for t in post_terms
                if t.taxonomy == "post_tag"
            ],
            "excerpt": excerpt_text(post.excerpt, post.content),
            "comment_count": comments,
            "protected": bool(post.password),
        }

    def _listing(
        self,
        *,
        title: str,
        description: str,
        types: tuple[str, ...],
        tags: list[str],
        query: PostQuery,
        base_path: str,
        page_number: int,
        resource_route: str = "",
    ) -> _View | None:
        per_page = int(self.option("posts_per_page", 10))
        posts, total = self.content.query_posts(replace(query, page=page_number, per_page=per_page))
        if page_number > 1 and not posts:
            return None
        pages = max(1, math.ceil(total / per_page))
        return _View(
            "list.html",
            {
                "title": title,
                "description": description,
                "items": self._items(posts),
                "page_number": page_number,
                "pages": pages,
                "newer_url": self.url(self.permalinks.paged(base_path, page_number - 1))
                if page_number > 1
                else "",
                "older_url": self.url(self.permalinks.paged(base_path, page_number + 1))
                if page_number < pages
                else "",
            },
            types,
            [*tags, *(f"post-{post.id}" for post in posts)],
            resource_route,
        )

    def view_home(self, request: Request, groups: dict[str, str]) -> _View | None:
        """The home page and its pagination (``home, frontpage``)."""
        return self._listing(
            title=str(self.option("title", "")),
            description=str(self.option("description", "")),
            types=("home", "frontpage"),
            tags=["home"],
            query=PostQuery(),
            base_path="/",
            page_number=_number(groups.get("page", "1")) or 1,
        )

    def view_category(self, request: Request, groups: dict[str, str]) -> _View | None:
        """A category archive."""
        term = self.content.get_term_by_slug("category", groups["slug"])
        return self._term_archive(term, _number(groups.get("page", "1")) or 1)

    def view_tag(self, request: Request, groups: dict[str, str]) -> _View | None:
        """A tag archive."""
        term = self.content.get_term_by_slug("post_tag", groups["slug"])
        return self._term_archive(term, _number(groups.get("page", "1")) or 1)

    def _term_archive_by_id(self, request: Request, term_id: int, page: int) -> _View | None:
        return self._term_archive(self.content.get_term(term_id, "category"), page)

    def _term_archive(self, term: Term | None, page_number: int) -> _View | None:
        if term is None:
            return None
        kind = "category" if term.taxonomy == "category" else "tag"
        label = "Category" if kind == "category" else "Tag"
        return self._listing(
            title=f"{label}: {term.name}",
            description=term.description,
            types=(kind, "archives"),
            tags=[f"term-{term.id}", f"term-archive-{term.id}"],
            query=PostQuery(term_ids=(term.id,)),
            base_path=self.permalinks.term_path(term),
            page_number=page_number,
            resource_route=f"/site/v2/{_TERM_BASES[term.taxonomy]}/{term.id}",
        )

    def view_author(self, request: Request, groups: dict[str, str]) -> _View | None:
        """An author archive."""
        for user in self.authors().values():
            if self.author_slug(user) == groups["slug"]:
                return self._author_archive(request, user.id, _number(groups.get("page", "1")) or 1)
        return None

    def _author_archive(self, request: Request, user_id: int, page: int) -> _View | None:
        user = self.authors().get(user_id)
        if user is None:
            return None
        return self._listing(
            title=f"Author: {user.display_name}",
            description="",
            types=("author", "archives"),
            tags=[f"author-{user.id}", f"author-archive-{user.id}"],
            query=PostQuery(authors=(user.id,)),
            base_path=self.permalinks.author_path(user.id, self.author_slug(user)),
            page_number=page,
            resource_route=f"/site/v2/users/{user.id}",
        )

    def view_search(self, request: Request, groups: dict[str, str]) -> _View | None:
        """Search results (``/search/<term>/``; cacheable: no query string)."""
        term = groups["term"].strip()
        if not term:
            return None
        return self._listing(
            title=f"Search results for: {term}",
            description="",
            types=("search",),
            tags=[],
            query=PostQuery(types=("post", "page"), search=term),
            base_path=self.permalinks.search_path(term),
            page_number=_number(groups.get("page", "1")) or 1,
        )

    def view_date(self, request: Request, groups: dict[str, str]) -> _View | None:
        """A year, month or day archive."""
        year = _number(groups["year"])
        month = _number(groups["month"]) if "month" in groups else None
        day = _number(groups["day"]) if "day" in groups else None
        return self._date_archive(year, month, day, _number(groups.get("page", "1")) or 1)

    def _date_from_m(self, request: Request, value: str, page: int) -> _View | None:
        if not value.isdigit() or len(value) not in (4, 6, 8):
            return None
        year = int(value[:4])
        month = int(value[4:6]) if len(value) >= 6 else None
        day = int(value[6:8]) if len(value) == 8 else None
        return self._date_archive(year, month, day, page)

    def _date_archive(
        self, year: int, month: int | None, day: int | None, page_number: int
    ) -> _View | None:
        try:
            moment = datetime(year, month or 1, day or 1)
        except ValueError:
            return None
        if day is not None:
            label = format_php_date(moment, str(self.option("date_format", "F j, Y")))
        elif month is not None:
            label = format_php_date(moment, "F Y")
        else:
            label = str(year)
        return self._listing(
            title=f"Archives: {label}",
            description="",
            types=("archives",),
            tags=["archive"],
            query=PostQuery(year=year, month=month, day=day),
            base_path=self.permalinks.date_path(year, month, day),
            page_number=page_number,
        )

    # ------------------------------------------------------------------ single posts and pages
    def view_post_permalink(
        self, request: Request, path: str, groups: Mapping[str, str | None]
    ) -> _View | None:
        """The post a pretty permalink names (``None`` when it names none)."""
        post: Post | None = None
        if groups.get("post_id"):
            post = self.content.get_post(_number(str(groups["post_id"])))
        elif groups.get("postname"):
            post = self.content.get_post_by_slug("post", str(groups["postname"]))
        if post is None or post.type != "post" or not post.is_public:
            return None
        # Every part of the structure must agree with the post (no aliases for one post).
        if self.post_url(post) != self.url(path):
            return None
        return self.view_single(request, post)

    def view_page_path(self, request: Request, path: str) -> _View | None:
        """A page at ``/<slug>/`` (``/<parent>/<slug>/`` for child pages)."""
        page = self.content.get_post_by_slug("page", path.rsplit("/", 1)[-1])
        if page is None or not page.is_public or self._page_path(page) != f"/{path}/":
            return None
        return self.view_single(request, page)

    def view_single(self, request: Request, post: Post) -> _View:
        """A post (``single``) or page (``page``) with its comments and the comment form."""
        item = self._items([post])[0]
        comments, _ = self.content.query_comments(
            CommentQuery(posts=(post.id,), order="asc", per_page=1000)
        )
        held = self._held_comment(request, post)
        if held is not None:
            comments = sorted([*comments, held], key=lambda c: (c.date_gmt, c.id))
        kind = "single" if post.type == "post" else "page"
        return _View(
            "single.html",
            {
                "item": item,
                "title": item["title"],
                "content": paragraphs(post.content) if not post.password else None,
                "comments": [self._comment_item(c, held) for c in comments],
                "comments_open": post.comment_status == "open",
                "comment_action": self.url(COMMENT_POST_PATH),
                "awaiting_moderation": Markup(AWAITING_MODERATION),  # noqa: S704 - a constant
            },
            (kind,),
            [f"post-{post.id}", *(f"term-{i}" for i in post.term_ids), f"author-{post.author}"],
            f"/site/v2/{_REST_BASES[post.type]}/{post.id}",
            private=held is not None,
        )

    def _held_comment(self, request: Request, post: Post) -> Comment | None:
        number = _number(request.args.get("unapproved", ""))
        given = request.args.get("moderation-hash", "")
        if not number or not given or not self.secret:
            return None
        comment = self.content.get_comment(number)
        if comment is None or comment.post_id != post.id or comment.status != "hold":
            return None
        return comment if valid_moderation_hash(self.secret, comment, given) else None

    def _comment_item(self, comment: Comment, held: Comment | None) -> dict[str, Any]:
        local = self.local_time(comment.date_gmt)
        date_format = str(self.option("date_format", "F j, Y"))
        time_format = str(self.option("time_format", "g:i a"))
        return {
            "id": comment.id,
            "parent": comment.parent,
            "author_name": comment.author_name or "Anonymous",
            "author_url": comment.author_url,
            "date": format_php_date(local, date_format),
            "time": format_php_date(local, time_format),
            "datetime": local.isoformat(timespec="seconds"),
            "content": paragraphs(comment.content),
            "held": held is not None and comment.id == held.id,
        }

    # ------------------------------------------------------------------ feed and sitemap
    def view_feed(self, request: Request, groups: dict[str, str]) -> _View:
        """The RSS 2.0 feed of the latest posts."""
        posts, _ = self.content.query_posts(
            PostQuery(per_page=int(self.option("posts_per_rss", 10)))
        )
        items = self._items(posts)
        for item in items:
            item["rfc822"] = self.local_time(item["post"].date_gmt).strftime(
                "%a, %d %b %Y %H:%M:%S %z"
            )
            item["content"] = paragraphs(item["post"].content) if not item["protected"] else ""
        last = max((post.modified_gmt for post in posts), default=0)
        return _View(
            "feed.xml",
            {
                "items": items,
                "last_build": self.local_time(last).strftime("%a, %d %b %Y %H:%M:%S %z"),
                "self_url": self.url(self.permalinks.feed_path()),
            },
            ("feed",),
            ["feed", *(f"post-{post.id}" for post in posts)],
            mimetype="application/rss+xml",
        )

    def view_sitemap(self, request: Request, groups: dict[str, str]) -> _View:
        """``/sitemap.xml``: home, every published post and page, every non-empty term."""
        urls: list[dict[str, str]] = [{"loc": self.url("/"), "lastmod": ""}]
        posts, _ = self.content.query_posts(PostQuery(types=("post", "page"), per_page=50_000))
        terms = self.content.get_terms(sorted({i for post in posts for i in post.term_ids}))
        for post in posts:
            urls.append(
                {
                    "loc": self.post_url(post, terms),
                    "lastmod": self.local_time(post.modified_gmt).isoformat(timespec="seconds"),
                }
            )
        for term in sorted(terms.values(), key=lambda t: t.id):
            urls.append({"loc": self.url(self.permalinks.term_path(term)), "lastmod": ""})
        return _View(
            "sitemap.xml",
            {"urls": urls},
            ("sitemap",),
            ["sitemap", *(f"post-{post.id}" for post in posts)],
            mimetype="application/xml",
        )

    # ------------------------------------------------------------------ the comment form
    def post_comment(self, request: Request) -> Response:
        """Take a comment form POST: validate, store, set the commenter cookie, redirect."""
        if request.method != "POST":
            response = Response("Method not allowed.\n", status=405, mimetype="text/plain")
            response.headers["Allow"] = "POST"
            return response
        home = self.server.home_url()
        # SECURITY: a form posted from another site's page is refused (CSRF).
        if not same_origin(dict(request.headers.items()), home):
            return self._comment_error("Sorry, comments must be posted from this site.", 403)
        try:
            submission = parse_submission(request.form.to_dict(flat=True))
            post = self.content.get_post(submission.post_id)
            if post is None or not post.is_public or post.type not in _REST_BASES:
                raise NotFoundError("comment_id_not_found", "The post does not exist.")
            if post.comment_status != "open":
                raise ForbiddenError("comment_closed", "Sorry, comments are closed for this item.")
            comment = self.content.add_comment(
                post_id=post.id,
                parent=submission.parent,
                author_name=submission.author_name,
                author_email=submission.author_email,
                author_url=submission.author_url,
                author_ip=request.remote_addr or "",
                author_agent=(request.user_agent.string or "")[:254],
                content=submission.content,
            )
        except DomainError as error:
            # The status the REST API would answer this refusal with.
            status = self.server.error_handlers.to_rest_error(error).status
            return self._comment_error(error.message, status)
        location = self.post_url(post)
        if comment.status == "hold":
            query = urlencode(
                {"unapproved": comment.id, "moderation-hash": moderation_hash(self.secret, comment)}
            )
            location += f"?{query}"
        response = self.redirect(f"{location}#comment-{comment.id}", status=302)
        response.headers["Cache-Control"] = "no-store, private"
        response.set_cookie(
            comment_author_cookie_name(home),
            cookie_value(comment.author_name),
            max_age=COOKIE_LIFETIME,
            path="/",
            secure=home.startswith("https://"),
            httponly=True,
            samesite="Lax",
        )
        return response

    def _comment_error(self, message: str, status: int) -> Response:
        response = Response(
            self.render("message.html", title="Comment not posted", message=message),
            status=status,
            mimetype="text/html",
        )
        response.headers["Cache-Control"] = "no-store, private"
        return response


def _number(text: str) -> int:
    """A positive page or id number from a path or query string, else 0."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 12 else 0
