"""The content values: posts, terms and comments, and the tables of their allowed states."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

__all__ = [
    "COMMENT_STATUSES",
    "POST_STATUSES",
    "POST_TYPES",
    "PUBLIC_STATUSES",
    "TAXONOMIES",
    "Comment",
    "Post",
    "Term",
    "sanitize_title",
]

POST_TYPES: Final = ("post", "page", "attachment", "revision")
POST_STATUSES: Final = ("publish", "future", "draft", "pending", "private", "trash")
PUBLIC_STATUSES: Final = frozenset({"publish"})
"""Statuses anybody may read (``private`` needs ``read_private_posts``)."""
TAXONOMIES: Final = ("category", "post_tag")
COMMENT_STATUSES: Final = ("hold", "approve", "spam", "trash")

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def sanitize_title(text: str, fallback: str = "") -> str:
    """A URL slug: ASCII-folded lowercase letters and digits joined by single hyphens
    (``sanitize_title``); ``fallback`` when nothing is left. At most 190 characters."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", folded.lower()).strip("-")[:190].strip("-")
    return slug or fallback


@dataclass(frozen=True, slots=True)
class Post:
    """A post of any type (post, page, attachment, revision); dates are Unix seconds, UTC."""

    id: int
    type: str
    status: str
    author: int
    parent: int
    slug: str
    title: str
    content: str
    excerpt: str
    date_gmt: int
    modified_gmt: int
    comment_status: str = "open"
    ping_status: str = "open"
    password: str = ""
    menu_order: int = 0
    sticky: bool = False
    mime_type: str = ""
    featured_media: int = 0
    term_ids: tuple[int, ...] = ()

    @property
    def is_published(self) -> bool:
        """Whether its page is on the site (published; a password shows the password form)."""
        return self.status in PUBLIC_STATUSES

    @property
    def is_public(self) -> bool:
        """Whether anybody may read it (published, no password)."""
        return self.status in PUBLIC_STATUSES and not self.password


@dataclass(frozen=True, slots=True)
class Term:
    """A term of a taxonomy; ``count`` is how many published posts carry it."""

    id: int
    taxonomy: str
    name: str
    slug: str
    description: str = ""
    parent: int = 0
    count: int = 0


@dataclass(frozen=True, slots=True)
class Comment:
    """A comment on a post; ``status`` is one of `COMMENT_STATUSES`."""

    id: int
    post_id: int
    parent: int
    user_id: int
    author_name: str
    author_email: str
    author_url: str
    author_ip: str
    author_agent: str
    content: str
    date_gmt: int
    status: str
    type: str = "comment"
