"""The URLs of what the site shows: posts, pages, terms, authors, searches, dates, the feed.

Every path comes from the route table (`sitecache.site.routing`) for the ``permalink_structure``
in force; this module supplies the values a post's or a page's path needs (its local date, its
first category, its author's slug, a page's ancestors) and makes URLs absolute for the request's
host.
"""

from __future__ import annotations

from collections.abc import Mapping

from sitecache.auth.roles import SiteUser
from sitecache.rest.server import RestServer
from sitecache.site.content import ContentService
from sitecache.site.models import Post, Term, sanitize_title
from sitecache.site.reads import RequestReads
from sitecache.site.routing import RouteTable

__all__ = ["MAX_PAGE_DEPTH", "SiteLinks", "author_slug"]

MAX_PAGE_DEPTH = 10
"""How many ancestors a page's path names at most."""


def author_slug(user: SiteUser) -> str:
    """An author's archive slug (the user's slug; their login as a slug for old rows)."""
    return user.slug or sanitize_title(user.login, f"user-{user.id}")


class SiteLinks:
    """Paths and absolute URLs of the site's pages.

    Args:
        server: the REST server (the home URL of the current request, the configured structure).
        content: the content service (a page's ancestors, a post's categories).
        reads: the per-request reads (the structure option, the timezone, the authors).
    """

    def __init__(self, server: RestServer, content: ContentService, reads: RequestReads) -> None:
        self.server = server
        self.content = content
        self.reads = reads
        self._table: RouteTable | None = None

    def table(self) -> RouteTable:
        """The route table of the structure now in force (rebuilt when it changes)."""
        fallback = self.server.settings.permalink_structure
        structure = str(self.reads.option("permalink_structure", fallback) or "")
        table = self._table
        if table is None or table.structure != structure:
            table = self._table = RouteTable(structure)
        return table

    def url(self, path: str) -> str:
        """The absolute URL of a site path."""
        return self.server.home_url() + path

    # ------------------------------------------------------------------ posts and pages
    def post_path(self, post: Post, terms: Mapping[int, Term] | None = None) -> str:
        """A post's path: its permalink; a page's names its ancestors; other types, and every
        post with plain permalinks, ``/?p=ID`` (``/?page_id=ID`` for pages)."""
        table = self.table()
        if post.type == "page":
            if post.id == self.front_page_ids()[0] and post.is_public:
                return "/"  # the static front page lives at the home URL
            if not table.pretty:
                return table.build("page", {"id": post.id})
            return table.build("page", {"path": self.page_path(post).strip("/")})
        if post.type != "post" or not table.pretty:
            return table.build("post", {"id": post.id}, plain=True)
        return table.build("post", self._structure_values(post, table.structure, terms))

    def front_page_ids(self) -> tuple[int, int]:
        """``(page_on_front, page_for_posts)`` as the options set them; both 0 unless
        ``show_on_front`` is ``page`` (the front page shows the latest posts then)."""
        if self.reads.option("show_on_front", "posts") != "page":
            return 0, 0
        on_front = int(self.reads.option("page_on_front", 0))
        for_posts = int(self.reads.option("page_for_posts", 0))
        # One page cannot be both: WordPress shows it as the front page.
        return on_front, 0 if for_posts == on_front else for_posts

    def post_url(self, post: Post, terms: Mapping[int, Term] | None = None) -> str:
        """A post's permalink (absolute)."""
        return self.url(self.post_path(post, terms))

    def page_path(self, page: Post) -> str:
        """``/<ancestor>/…/<slug>/`` of a page (at most `MAX_PAGE_DEPTH` ancestors; a cycle
        stops the walk)."""
        slugs = [page.slug]
        seen = {page.id}
        parent = page.parent
        while parent and parent not in seen and len(slugs) <= MAX_PAGE_DEPTH:
            ancestor = self.content.get_post(parent)
            if ancestor is None or ancestor.type != "page":
                break
            slugs.append(ancestor.slug)
            seen.add(ancestor.id)
            parent = ancestor.parent
        return "/" + "/".join(reversed(slugs)) + "/"

    def _structure_values(
        self, post: Post, structure: str, terms: Mapping[int, Term] | None
    ) -> dict[str, object]:
        """The values of the structure's tags for ``post`` (dates in the site's timezone;
        the category and author are looked up only when the structure names them)."""
        local = self.reads.local_time(post.date_gmt)
        category = "uncategorized"
        if "%category%" in structure:
            known = terms if terms is not None else self.content.get_terms(post.term_ids)
            found = [known[i] for i in post.term_ids if i in known]
            first = next((term for term in found if term.taxonomy == "category"), None)
            category = first.slug if first is not None else category
        author = "author"
        if "%author%" in structure:
            user = self.reads.authors().get(post.author)
            author = author_slug(user) if user else f"user-{post.author}"
        return {
            "year": local.year,
            "monthnum": local.month,
            "day": local.day,
            "hour": local.hour,
            "minute": local.minute,
            "second": local.second,
            "post_id": post.id,
            "postname": post.slug,
            "category": category,
            "author": author,
        }

    # ------------------------------------------------------------------ archives and the rest
    def term_path(self, term: Term) -> str:
        """The archive path of a category or tag."""
        endpoint = "category" if term.taxonomy == "category" else "tag"
        return self.table().build(endpoint, {"slug": term.slug, "id": term.id})

    def term_url(self, term: Term) -> str:
        """A term archive's URL (absolute)."""
        return self.url(self.term_path(term))

    def author_path(self, user: SiteUser) -> str:
        """The archive path of an author."""
        return self.table().build("author", {"slug": author_slug(user), "id": user.id})

    def search_path(self, term: str) -> str:
        """The path of the search results for ``term`` (no query string when pretty)."""
        return self.table().build("search", {"term": term})

    def feed_path(self) -> str:
        """The path of the posts feed."""
        return self.table().build("feed", {})
