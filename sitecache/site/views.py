"""The theme's views of listings and single posts: what each page shows, as a `Page`.

A listing shows each post's title, date, author, terms, excerpt and comment count, and links
to its newer and older pages; a single post or page shows its content, its approved comments
(and a held comment to its author only, through a keyed moderation hash) and the comment form.
Cache tags: each post listed (``post-<id>``), the post's terms and author on a single page,
and the tags of what the blocks of its content list (`sitecache.site.blocks`). Excerpts show
the words of a post without its blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from sitecache.auth.roles import SiteUser
from sitecache.site.blocks import BlockRenderer, strip_blocks
from sitecache.site.commenting import AWAITING_MODERATION, valid_moderation_hash
from sitecache.site.content import CommentQuery, ContentService
from sitecache.site.dates import format_php_date
from sitecache.site.links import SiteLinks
from sitecache.site.models import PUBLIC_STATUSES, Comment, Post, Term
from sitecache.site.page import Page
from sitecache.site.postpass import (
    NO_EXCERPT,
    POSTPASS_PATH,
    PROTECTED_NOTICE,
    protected_title,
)
from sitecache.site.reads import RequestReads
from sitecache.site.render import excerpt_text, paragraphs
from sitecache.site.targets import REST_BASES, Listing, number

__all__ = ["COMMENT_POST_PATH", "SiteViews"]

COMMENT_POST_PATH = "/comment-post"
"""Where the comment form posts."""


@dataclass(eq=False, repr=False)
class SiteViews:
    """Listing and single-post pages.

    Args:
        content: the content service (terms, comments, comment counts).
        links: the site's URLs.
        reads: the per-request reads (options, authors, the timezone).
        secret: the key of the moderation hashes.
        blocks: renders the blocks of a post's content.
    """

    content: ContentService
    links: SiteLinks
    reads: RequestReads
    secret: bytes
    blocks: BlockRenderer

    # ------------------------------------------------------------------ listings
    def items(self, posts: list[Post]) -> list[dict[str, Any]]:
        """What a listing shows of each post (one query for the terms, one for comments)."""
        terms = self.content.get_terms(sorted({i for post in posts for i in post.term_ids}))
        counts = self.content.comment_counts([post.id for post in posts])
        authors = self.reads.authors()
        return [self._item(post, terms, authors, counts.get(post.id, 0)) for post in posts]

    def _item(
        self,
        post: Post,
        terms: Mapping[int, Term],
        authors: Mapping[int, SiteUser],
        comments: int,
    ) -> dict[str, Any]:
        date_format = str(self.reads.option("date_format", "F j, Y"))
        local = self.reads.local_time(post.date_gmt)
        author = authors.get(post.author)
        post_terms = [terms[i] for i in post.term_ids if i in terms]
        return {
            "post": post,
            "url": self.links.post_url(post, terms),
            "title": protected_title(post, post.title or "(no title)"),
            "date": format_php_date(local, date_format),
            "datetime": local.isoformat(timespec="seconds"),
            "author_name": author.display_name if author else "",
            "author_url": self.links.url(self.links.author_path(author)) if author else "",
            "categories": self._term_links(post_terms, "category"),
            "tags": self._term_links(post_terms, "post_tag"),
            # A protected post's excerpt is never shown (lists, feeds: pages anybody may cache).
            "excerpt": NO_EXCERPT
            if post.password
            else excerpt_text(post.excerpt, strip_blocks(post.content)),
            "comment_count": comments,
            "protected": bool(post.password),
        }

    def _term_links(self, terms: list[Term], taxonomy: str) -> list[dict[str, str]]:
        return [
            {"name": term.name, "url": self.links.term_url(term)}
            for term in terms
            if term.taxonomy == taxonomy
        ]

    def listing(self, listing: Listing) -> Page:
        """A page of a listing, with links to its newer and older pages."""
        table, number_ = self.links.table(), listing.page_number

        def page_url(page: int) -> str:
            return self.links.url(table.build(listing.endpoint, listing.values, page))

        return Page(
            "list.html",
            {
                "title": listing.title,
                "description": listing.description,
                "items": self.items(listing.posts),
                "page_number": number_,
                "pages": listing.pages,
                "newer_url": page_url(number_ - 1) if number_ > 1 else "",
                "older_url": page_url(number_ + 1) if number_ < listing.pages else "",
            },
            listing.types,
            [*listing.tags, *(f"post-{post.id}" for post in listing.posts)],
            listing.resource_route,
        )

    # ------------------------------------------------------------------ single posts and pages
    def single(
        self,
        post: Post,
        query: Mapping[str, str],
        *,
        unlocked: bool = False,
        front: bool = False,
    ) -> Page:
        """A post (``single``) or page (``page``) with its comments and the comment form; the
        query may name a held comment its author may see (``unapproved``, ``moderation-hash``).

        A post with a password shows the password form instead of its content and comments
        (a page anybody may cache) unless ``unlocked`` (the request carries the cookie of its
        password): then the content, on a ``no-store, private`` page for that visitor only.
        ``front``: the static front page at the home URL (page types ``frontpage`` and
        ``page``, tagged ``home`` as well as ``post-<id>``)."""
        item = self.items([post])[0]
        comments, _ = self.content.query_comments(
            CommentQuery(posts=(post.id,), order="asc", per_page=1000)
        )
        held = self._held_comment(query, post)
        if held is not None:
            comments = sorted([*comments, held], key=lambda c: (c.date_gmt, c.id))
        kind = "single" if post.type == "post" else "page"
        locked = bool(post.password) and not unlocked
        if locked:
            comments, held = [], None
        # The static front page is the home page too: a change of the home purges it.
        home = ("home",) if front else ()
        rendered = self.blocks.render_content(post) if not locked else None
        return Page(
            "single.html",
            {
                "item": item,
                "title": item["title"],
                "content": rendered.html if rendered is not None else None,
                "comments": [self._comment_item(c, held) for c in comments],
                # The comment form takes comments on published posts a visitor may read: public
                # ones, and protected ones this visitor unlocked (its page is private).
                "comments_open": post.comment_status == "open"
                and post.status in PUBLIC_STATUSES
                and not locked,
                "comment_action": self.links.url(COMMENT_POST_PATH),
                "locked": locked,
                "password_message": PROTECTED_NOTICE,
                "postpass_action": self.links.url(POSTPASS_PATH),
                "awaiting_moderation": Markup(AWAITING_MODERATION),  # noqa: S704 - a constant
            },
            ("frontpage", kind) if front else (kind,),
            [
                *home,
                f"post-{post.id}",
                *(f"term-{i}" for i in post.term_ids),
                f"author-{post.author}",
                *(rendered.tags if rendered is not None else ()),
            ],
            f"/site/v2/{REST_BASES[post.type]}/{post.id}",
            # SECURITY: a held comment is its author's; an unlocked post its visitor's.
            private=held is not None or (bool(post.password) and not locked),
        )

    def _held_comment(self, query: Mapping[str, str], post: Post) -> Comment | None:
        """The held comment the query names, if its keyed hash is right (its author's view)."""
        comment_id = number(query.get("unapproved", ""))
        given = query.get("moderation-hash", "")
        if not comment_id or not given or not self.secret:
            return None
        comment = self.content.get_comment(comment_id)
        if comment is None or comment.post_id != post.id or comment.status != "hold":
            return None
        return comment if valid_moderation_hash(self.secret, comment, given) else None

    def _comment_item(self, comment: Comment, held: Comment | None) -> dict[str, Any]:
        local = self.reads.local_time(comment.date_gmt)
        date_format = str(self.reads.option("date_format", "F j, Y"))
        time_format = str(self.reads.option("time_format", "g:i a"))
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
