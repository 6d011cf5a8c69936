"""Password-protected posts: the ``sitecache_postpass_<hash>`` cookie that unlocks them.

A post or page with a password shows the password form instead of its content (WordPress's
``post_password_required``). The form posts to `POSTPASS_PATH`; a right password sets the
cookie, whose value is a keyed hash of the password (never the password: HMAC-SHA256 under the
site's secret key), and a request carrying it sees every post with that password. The page
cache treats the cookie's prefix as private (``AUTH_COOKIE_PREFIXES``): a visitor holding it
bypasses the cache, and the page that shows them the content is ``no-store, private``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Final

from sitecache.site.models import Post

__all__ = [
    "COOKIE_LIFETIME",
    "NO_EXCERPT",
    "POSTPASS_COOKIE_PREFIX",
    "POSTPASS_PATH",
    "PROTECTED_NOTICE",
    "PROTECTED_TITLE",
    "is_unlocked",
    "postpass_cookie_name",
    "postpass_token",
    "protected_title",
]

POSTPASS_PATH: Final = "/postpass"
"""Where the password form posts (WordPress's ``wp-login.php?action=postpass``)."""
POSTPASS_COOKIE_PREFIX: Final = "sitecache_postpass_"
COOKIE_LIFETIME: Final = 10 * 24 * 3600
"""Ten days, as WordPress keeps its ``wp-postpass_`` cookie."""
PROTECTED_NOTICE: Final = (
    "This content is password protected. To view it please enter your password below:"
)
NO_EXCERPT: Final = "There is no excerpt because this is a protected post."
"""What WordPress's ``get_the_excerpt`` gives for a protected post (lists and feeds)."""
PROTECTED_TITLE: Final = "Protected: {}"
"""WordPress's ``protected_title_format`` (the front site's titles; REST titles have none)."""
_CONTEXT: Final = b"sitecache-postpass\x00"


def postpass_cookie_name(home_url: str) -> str:
    """``sitecache_postpass_`` + the MD5 of the home URL (WordPress's ``COOKIEHASH``)."""
    digest = hashlib.md5(home_url.encode("utf-8"), usedforsecurity=False).hexdigest()
    return POSTPASS_COOKIE_PREFIX + digest


def postpass_token(secret: bytes, password: str) -> str:
    """The cookie's value for ``password``: an HMAC-SHA256 of it keyed with the site's secret
    (the cookie never holds the password, and nobody without the key can forge one)."""
    return hmac.new(secret, _CONTEXT + password.encode("utf-8"), hashlib.sha256).hexdigest()


def is_unlocked(secret: bytes, post: Post, cookies: Mapping[str, str], home_url: str) -> bool:
    """Whether the request's cookies unlock ``post``: it has a password, and the postpass
    cookie holds that password's keyed hash (compared in constant time). Never without a key."""
    if not post.password or not secret:
        return False
    given = cookies.get(postpass_cookie_name(home_url), "")
    if not given:
        return False
    # SECURITY: constant-time comparison of the keyed hash.
    return hmac.compare_digest(postpass_token(secret, post.password), given)


def protected_title(post: Post, title: str) -> str:
    """``title`` with WordPress's ``Protected: `` prefix when ``post`` has a password."""
    return PROTECTED_TITLE.format(title) if post.password else title
