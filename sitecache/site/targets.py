"""What a route match names, looked up but not rendered: a listing, a post or page, the feed.

`SiteTargets.load` turns a `sitecache.site.routing.Match` into a target (``None`` when it names
nothing: an unknown slug, a draft, an empty page of a listing, a permalink that is not the
post's own), running the queries the page needs; `SiteTargets.canonical_url` gives the URL a
redirecting match (an old ``/?p=ID`` link, a query-string search) points to. Rendering is
`sitecache.site.views`' job, so the site can redirect or answer 404 before rendering anything.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Final

from sitecache.site.content import ContentService, PostQuery
from sitecache.site.dates import format_php_date
from sitecache.site.links import SiteLinks, author_slug
from sitecache.site.models import Post, Term
from sitecache.site.reads import RequestReads
from sitecache.site.routing import Match

__all__ = [
    "REST_BASES",
    "SEARCH_TAG",
    "TERM_BASES",
    "Feed",
    "Listing",
    "Moved",
    "Single",
    "SiteTargets",
    "Sitemap",
]

REST_BASES: Final[Mapping[str, str]] = {"post": "posts", "page": "pages"}
"""The post types the site shows, and their ``site/v2`` route base."""
TERM_BASES: Final[Mapping[str, str]] = {"category": "categories", "post_tag": "tags"}
"""The taxonomies the site shows, and their ``site/v2`` route base."""
MAX_STICKY: Final = 100
"""The most sticky posts the home page puts first."""
SEARCH_TAG: Final = "search"
"""The tag of every search results page: any published post's change purges them all."""


@dataclass(frozen=True)
class Listing:
    """One page of a list of posts: home, a term, author or date archive, search results."""

    title: str
    description: str
    types: tuple[str, ...]
    tags: tuple[str, ...]
    endpoint: str
    values: Mapping[str, object]
    page_number: int
    posts: list[Post] = field(default_factory=list)
    pages: int = 1
    resource_route: str = ""


@dataclass(frozen=True)
class Single:
    """A post or a page; ``front``: the static front page, shown at the home URL."""

    post: Post
    front: bool = False


@dataclass(frozen=True)
class Moved:
    """What a match names lives at ``location`` (absolute): the static front page's own URL
    redirects to the home URL, as WordPress's canonical redirect does."""

    location: str


@dataclass(frozen=True)
class Feed:
    """The RSS feed of the latest posts."""


@dataclass(frozen=True)
class Sitemap:
    """``/sitemap.xml``."""


Target = Listing | Single | Feed | Sitemap


def number(text: str) -> int:
    """A positive page or id number from a path or query string, else 0."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 12 else 0


def _page_of(values: Mapping[str, str]) -> int:
    return number(values.get("page", "1")) or 1


class SiteTargets:
    """Looks up what matches name.

    Args:
        content: the content service.
        links: the site's URLs (a permalink must be the post's own).
        reads: the per-request reads (options, authors).
    """

    def __init__(self, content: ContentService, links: SiteLinks, reads: RequestReads) -> None:
        self.content = content
        self.links = links
        self.reads = reads
        self._loaders: Mapping[str, Callable[[Match], Target | None]] = {
            "home": self._home,
            "feed": lambda match: Feed(),
            "sitemap": lambda match: Sitemap(),
            "category": self._category,
            "tag": self._tag,
            "author": self._author,
            "search": self._search,
            "date": self._date,
            "post": self._post,
            "page": self._page,
        }

    def load(self, match: Match) -> Target | Moved | None:
        """The target ``match`` names, `Moved` when it lives at another URL, or ``None``."""
        target = self._loaders[match.endpoint](match)
        if (
            isinstance(target, Single)
            and not target.front
            and target.post.type == "page"
            and target.post.id == self.links.front_page_ids()[0]
        ):
            return Moved(self.links.url("/"))
        return target

    def canonical_url(self, match: Match) -> str | None:
        """The URL a redirecting match points to (``None``: it names nothing)."""
        if match.endpoint in REST_BASES:
            post = self._public_by_id(match)
            return None if post is None else self.links.post_url(post)
        if match.endpoint == "search":
            return self.links.url(self.links.search_path(match.values["term"]))
        return self.links.url("/")

    # ------------------------------------------------------------------ posts and pages
    def _by_id(self, match: Match) -> Single | Listing | None:
        """``/?p=ID`` or ``/?page_id=ID``: any published post or page (the posts page's
        listing for the page of posts)."""
        post = self._public_by_id(match)
        return None if post is None else self._page_or_posts(post, match)

    def _public_by_id(self, match: Match) -> Post | None:
        """The published post or page ``id`` names (one with a password too: its page shows
        the password form)."""
        post = self.content.get_post(number(match.values.get("id", "")))
        if post is None or not post.is_published or post.type not in REST_BASES:
            return None
        return post

    def _page_or_posts(self, page: Post, match: Match) -> Single | Listing | None:
        """A page, or the listing of the latest posts when it is the posts page
        (``page_for_posts``); only the posts page has pages of its own (``page/<n>/``)."""
        if page.type == "page" and page.id == self.links.front_page_ids()[1]:
            return self._posts_index(
                Listing(
                    title=page.title,
                    description="",
                    types=("home",),
                    tags=("home", f"post-{page.id}"),
                    endpoint="page",
                    values={"path": self.links.page_path(page).strip("/"), "id": page.id},
                    page_number=_page_of(match.values),
                    resource_route=f"/site/v2/pages/{page.id}",
                )
            )
        if "page" in match.values and "id" not in match.values:
            return None  # /<page>/page/<n>/ of a page that lists nothing
        return Single(page)

    def _post(self, match: Match) -> Single | Listing | None:
        """The post a permalink names, if that permalink is its own (no aliases)."""
        if "id" in match.values:
            return self._by_id(match)
        values = match.values
        post: Post | None = None
        if values.get("post_id"):
            post = self.content.get_post(number(values["post_id"]))
        elif values.get("postname"):
            post = self.content.get_post_by_slug("post", values["postname"])
        if post is None or post.type != "post" or not post.is_published:
            return None
        return Single(post) if self.links.post_path(post) == match.path else None

    def _page(self, match: Match) -> Single | Listing | None:
        """A page at ``/<slug>/`` (``/<parent>/<slug>/`` for a child page)."""
        if "id" in match.values:
            return self._by_id(match)
        path = match.values["path"]
        page = self.content.get_post_by_slug("page", path.rsplit("/", 1)[-1])
        if page is None or not page.is_published or self.links.page_path(page) != f"/{path}/":
            return None
        return self._page_or_posts(page, match)

    # ------------------------------------------------------------------ listings
    def _home(self, match: Match) -> Listing | Single | None:
        """The static front page when one is set (``show_on_front`` ``page``, and
        ``page_on_front`` a published page; it has no further pages), else the latest posts."""
        front = self._front_page()
        if front is not None:
            return Single(front, front=True) if _page_of(match.values) == 1 else None
        return self._posts_index(
            Listing(
                title=str(self.reads.option("title", "")),
                description=str(self.reads.option("description", "")),
                types=("home", "frontpage"),
                tags=("home",),
                endpoint="home",
                values={},
                page_number=_page_of(match.values),
            )
        )

    def _front_page(self) -> Post | None:
        """The static front page, if the options name a published page."""
        front_id = self.links.front_page_ids()[0]
        page = self.content.get_post(front_id) if front_id else None
        return page if page is not None and page.type == "page" and page.is_public else None

    def _posts_index(self, listing: Listing) -> Listing | None:
        """The latest posts (the home page, or the posts page); on the first page only, the
        sticky posts first (WordPress's rule: every published sticky post, newest first, then
        the page's other posts)."""
        found = self._listing(listing, PostQuery())
        if found is None or found.page_number != 1:
            return found
        sticky = self.content.find_posts(PostQuery(sticky=True, per_page=MAX_STICKY))
        if not sticky:
            return found
        first = {post.id for post in sticky}
        return replace(
            found, posts=[*sticky, *(post for post in found.posts if post.id not in first)]
        )

    def _category(self, match: Match) -> Listing | None:
        if "id" in match.values:
            term = self.content.get_term(number(match.values["id"]), "category")
        else:
            term = self.content.get_term_by_slug("category", match.values["slug"])
        return self._term_archive(term, _page_of(match.values))

    def _tag(self, match: Match) -> Listing | None:
        term = self.content.get_term_by_slug("post_tag", match.values["slug"])
        return self._term_archive(term, _page_of(match.values))

    def _term_archive(self, term: Term | None, page_number: int) -> Listing | None:
        if term is None:
            return None
        kind = "category" if term.taxonomy == "category" else "tag"
        return self._listing(
            Listing(
                title=f"{kind.capitalize()}: {term.name}",
                description=term.description,
                types=(kind, "archives"),
                tags=(f"term-{term.id}", f"term-archive-{term.id}"),
                endpoint=kind,
                values={"slug": term.slug, "id": term.id},
                page_number=page_number,
                resource_route=f"/site/v2/{TERM_BASES[term.taxonomy]}/{term.id}",
            ),
            PostQuery(term_ids=(term.id,)),
        )

    def _author(self, match: Match) -> Listing | None:
        authors = self.reads.authors()
        if "id" in match.values:
            user = authors.get(number(match.values["id"]))
        else:
            slug = match.values["slug"]
            user = next((u for u in authors.values() if author_slug(u) == slug), None)
        if user is None:
            return None
        return self._listing(
            Listing(
                title=f"Author: {user.display_name}",
                description="",
                types=("author", "archives"),
                tags=(f"author-{user.id}", f"author-archive-{user.id}"),
                endpoint="author",
                values={"slug": author_slug(user), "id": user.id},
                page_number=_page_of(match.values),
                resource_route=f"/site/v2/users/{user.id}",
            ),
            PostQuery(authors=(user.id,)),
        )

    def _search(self, match: Match) -> Listing | None:
        """Search results (``/search/<term>/``: no query string, so a cache may keep them)."""
        term = match.values["term"].strip()
        if not term:
            return None
        return self._listing(
            Listing(
                title=f"Search results for: {term}",
                description="",
                types=("search",),
                tags=(SEARCH_TAG,),
                endpoint="search",
                values={"term": term},
                page_number=_page_of(match.values),
            ),
            # No protected post: its words must not be found by anybody's search.
            PostQuery(types=("post", "page"), search=term, without_password=True),
        )

    def _date(self, match: Match) -> Listing | None:
        """A year, month or day archive."""
        values = match.values
        year = number(values["year"])
        month = number(values["month"]) if "month" in values else None
        day = number(values["day"]) if "day" in values else None
        try:
            moment = datetime(year, month or 1, day or 1)
        except ValueError:
            return None
        if day is not None:
            label = format_php_date(moment, str(self.reads.option("date_format", "F j, Y")))
        elif month is not None:
            label = format_php_date(moment, "F Y")
        else:
            label = str(year)
        return self._listing(
            Listing(
                title=f"Archives: {label}",
                description="",
                types=("archives",),
                tags=("archive",),
                endpoint="date",
                values={"year": year, "month": month, "day": day},
                page_number=_page_of(values),
            ),
            PostQuery(year=year, month=month, day=day),
        )

    def _listing(self, listing: Listing, query: PostQuery) -> Listing | None:
        """``listing`` with the posts of its page (``None``: a page past the last)."""
        per_page = int(self.reads.option("posts_per_page", 10))
        posts, total = self.content.query_posts(
            replace(query, page=listing.page_number, per_page=per_page)
        )
        if listing.page_number > 1 and not posts:
            return None
        return replace(listing, posts=posts, pages=max(1, math.ceil(total / per_page)))
