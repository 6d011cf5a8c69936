"""What the content service selects: the query values, and the SQL pieces they share.

Every query is assembled from fixed SQL fragments and ``?`` placeholders only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "COMMENT_ORDER",
    "POST_ORDER",
    "TERM_COUNT",
    "TERM_ORDER",
    "CommentQuery",
    "PostQuery",
    "TermQuery",
    "like_pattern",
    "placeholders",
]

POST_ORDER: Final[Mapping[str, str]] = {
    "date": "p.date_gmt {0}, p.id {0}",
    "id": "p.id {0}",
    "title": "lower(p.title) {0}, p.id {0}",
    "slug": "p.slug {0}, p.id {0}",
    "modified": "p.modified_gmt {0}, p.id {0}",
    "menu_order": "p.menu_order {0}, p.id {0}",
    "author": "p.author {0}, p.id {0}",
    "parent": "p.parent {0}, p.id {0}",
}
TERM_ORDER: Final[Mapping[str, str]] = {
    "name": "lower(t.name) {0}, t.id {0}",
    "id": "t.id {0}",
    "slug": "t.slug {0}, t.id {0}",
    "count": "count {0}, t.id {0}",
    "description": "t.description {0}, t.id {0}",
}
COMMENT_ORDER: Final[Mapping[str, str]] = {
    "date": "c.date_gmt {0}, c.id {0}",
    "date_gmt": "c.date_gmt {0}, c.id {0}",
    "id": "c.id {0}",
    "post": "c.post_id {0}, c.id {0}",
    "parent": "c.parent {0}, c.id {0}",
}
TERM_COUNT: Final = (
    "(SELECT COUNT(*) FROM term_relationships r JOIN posts cp ON cp.id = r.post_id"
    " WHERE r.term_id = t.id AND cp.status = 'publish') AS count"
)


def like_pattern(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere (``\\`` escapes the wildcards)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def placeholders(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


@dataclass(frozen=True, slots=True)
class PostQuery:
    """What `ContentService.query_posts` selects; every filter is optional."""

    types: tuple[str, ...] = ("post",)
    statuses: tuple[str, ...] = ("publish",)
    authors: tuple[int, ...] = ()
    authors_exclude: tuple[int, ...] = ()
    term_ids: tuple[int, ...] = ()
    """Posts carrying any of these terms."""
    term_groups: tuple[tuple[int, ...], ...] = ()
    """Posts carrying any term of each group, for every group (taxonomies ANDed)."""
    terms_exclude: tuple[int, ...] = ()
    search: str = ""
    year: int | None = None
    month: int | None = None
    day: int | None = None
    include: tuple[int, ...] = ()
    exclude: tuple[int, ...] = ()
    slugs: tuple[str, ...] = ()
    parents: tuple[int, ...] = ()
    parents_exclude: tuple[int, ...] = ()
    mime_types: tuple[str, ...] = ()
    """Attachments of any of these MIME types (``image/png``)."""
    mime_classes: tuple[str, ...] = ()
    """Attachments whose MIME type is of any of these classes (``image`` for ``image/*``)."""
    sticky: bool | None = None
    """Only sticky posts (true) or only posts that are not (false); ``None``: both."""
    public_parents_only: bool = False
    """Only posts without a parent or whose parent is published (media anybody may see)."""
    without_password: bool = False
    """Only posts without a password (searches anybody may run: WordPress's rule, so that a
    search cannot probe the words of a protected post)."""
    after: int | None = None
    before: int | None = None
    orderby: str = "date"
    order: str = "desc"
    page: int = 1
    per_page: int = 10
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class TermQuery:
    """What `ContentService.query_terms` selects."""

    taxonomy: str = "category"
    search: str = ""
    include: tuple[int, ...] = ()
    exclude: tuple[int, ...] = ()
    slugs: tuple[str, ...] = ()
    parent: int | None = None
    post: int | None = None
    hide_empty: bool = False
    orderby: str = "name"
    order: str = "asc"
    page: int = 1
    per_page: int = 10
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class CommentQuery:
    """What `ContentService.query_comments` selects."""

    statuses: tuple[str, ...] = ("approve",)
    posts: tuple[int, ...] = ()
    parents: tuple[int, ...] = ()
    authors: tuple[int, ...] = ()
    author_email: str = ""
    search: str = ""
    include: tuple[int, ...] = ()
    exclude: tuple[int, ...] = ()
    orderby: str = "date_gmt"
    order: str = "desc"
    page: int = 1
    per_page: int = 10
    offset: int | None = None
