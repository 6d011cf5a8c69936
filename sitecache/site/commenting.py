"""The comment form's POST: validation, moderation, the commenter cookie and the redirect.

A held comment is shown, with the exact notice the cache's ``awaiting_moderation`` companion
strips, only through the redirect WordPress uses: ``?unapproved=ID&moderation-hash=HASH``,
where HASH is a keyed hash of the comment only the site can make. The answer to the POST is
the only response of the site that sets a cookie: ``sitecache_comment_author_<hash>``, which
names the commenter and tells the page cache to bypass its copies for them.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, urlsplit

from sitecache.domain_errors import InvalidValueError, NotFoundError
from sitecache.schema import is_email, sanitize_text_field, sanitize_url
from sitecache.site.models import Comment

__all__ = [
    "AWAITING_MODERATION",
    "COMMENT_AUTHOR_COOKIE_PREFIX",
    "CommentSubmission",
    "comment_author_cookie_name",
    "moderation_hash",
    "parse_submission",
]

AWAITING_MODERATION: Final = (
    '<p class="comment-awaiting-moderation">Your comment is awaiting moderation.</p>'
)
"""The notice a held comment's author sees, exactly as the cache companion plugin strips it."""
COMMENT_AUTHOR_COOKIE_PREFIX: Final = "sitecache_comment_author_"
MAX_CONTENT: Final = 65525
MAX_NAME: Final = 245
MAX_EMAIL: Final = 100
MAX_URL: Final = 200
COOKIE_LIFETIME: Final = 30 * 24 * 3600


def comment_author_cookie_name(home_url: str) -> str:
    """``sitecache_comment_author_`` + the MD5 of the home URL (WordPress's ``COOKIEHASH``)."""
    digest = hashlib.md5(home_url.encode("utf-8"), usedforsecurity=False).hexdigest()
    return COMMENT_AUTHOR_COOKIE_PREFIX + digest


def moderation_hash(secret: bytes, comment: Comment) -> str:
    """The keyed hash proving a visitor is the one who just posted ``comment``."""
    message = f"moderation:{comment.id}:{comment.date_gmt}:{comment.author_email}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:32]


def valid_moderation_hash(secret: bytes, comment: Comment, given: str) -> bool:
    """Whether ``given`` is ``comment``'s moderation hash (constant-time)."""
    # SECURITY: compared in constant time; the hash is the only key to a held comment.
    return hmac.compare_digest(moderation_hash(secret, comment), given)


@dataclass(frozen=True, slots=True)
class CommentSubmission:
    """A validated comment form."""

    post_id: int
    parent: int
    author_name: str
    author_email: str
    author_url: str
    content: str


def _field(form: Mapping[str, str], name: str) -> str:
    value = form.get(name, "")
    return value if isinstance(value, str) else ""


def _integer(text: str) -> int:
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else 0


def parse_submission(form: Mapping[str, str]) -> CommentSubmission:
    """The comment form's fields, checked (``wp_handle_comment_submission``'s rules).

    Raises:
        InvalidValueError: a missing name, e-mail or comment, an invalid e-mail, a field too
            long.
        NotFoundError: ``comment_id_not_found``: no post named.
    """
    post_id = _integer(_field(form, "comment_post_ID").strip())
    if not post_id:
        raise NotFoundError("comment_id_not_found", "The post does not exist.")
    name = sanitize_text_field(_field(form, "author"))
    email = sanitize_text_field(_field(form, "email"))
    url = _field(form, "url").strip()
    content = _field(form, "comment").replace("\r\n", "\n").strip()
    if not name or not email:
        raise InvalidValueError(
            "require_name_email", "Please fill the required fields (name, email)."
        )
    if len(name) > MAX_NAME or len(email) > MAX_EMAIL or len(url) > MAX_URL:
        raise InvalidValueError("comment_field_too_long", "A field is too long.")
    if not is_email(email):
        raise InvalidValueError("require_valid_email", "Please enter a valid email address.")
    if not content:
        raise InvalidValueError("require_valid_comment", "Please type your comment text.")
    if len(content) > MAX_CONTENT:
        raise InvalidValueError("comment_content_column_length", "Your comment is too long.")
    # SECURITY: only http(s) links are kept for the author's website.
    clean_url = sanitize_url(url) if url else ""
    if clean_url and urlsplit(clean_url).scheme not in ("http", "https"):
        clean_url = ""
    return CommentSubmission(
        post_id=post_id,
        parent=_integer(_field(form, "comment_parent").strip()),
        author_name=name,
        author_email=email,
        author_url=clean_url,
        content=content,
    )


def cookie_value(name: str) -> str:
    """The commenter cookie's value: the name, percent-encoded (no separators or quotes)."""
    return quote(name, safe="")
