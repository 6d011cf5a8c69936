"""What a URL given to a purge (or to the cache test) names: pure, no storage.

A purge names pages by absolute URL (every variant of that URL) or by ``/path`` (that path on
every host, with any query). `resolve_url` checks the value as ``POST /cache`` does (only hosts
the site serves, no path escaping the cache) and gives the canonical URL the storage indexes.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

from sitecache.cache.keys import canonical_url, normalize_host, normalize_url_path
from sitecache.cache.policy import CacheRules
from sitecache.domain_errors import InvalidURL

__all__ = ["resolve_url"]


def resolve_url(url: object, rules: CacheRules) -> tuple[str | None, str]:
    """``(canonical URL, or None for every host; normalized path)`` of an absolute URL or a
    ``/path``.

    Raises:
        InvalidURL: not a URL, not http(s), a host the site does not serve (``rules``), a
            path escaping the site (dot segments, backslashes, control characters), or a
            query without a host.
    """
    if not isinstance(url, str) or not url.strip():
        raise InvalidURL(url, "is empty")
    try:
        parts = urlsplit(url.strip())
        netloc_host = parts.hostname  # raises on a malformed IPv6 literal or port
        del netloc_host
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise InvalidURL(url, "is not a valid URL") from None
    if parts.scheme and parts.scheme not in ("http", "https"):
        raise InvalidURL(url, "is not an http or https URL")
    path = parts.path or "/"
    if not path.startswith("/"):
        raise InvalidURL(url, "must be an absolute URL or start with /")
    decoded = unquote(path)
    segments = decoded.split("/")
    if ".." in segments or "." in segments or "\\" in decoded:
        raise InvalidURL(url, "escapes the cache (dot segments are not allowed)")
    if any(ord(char) < 32 for char in decoded):
        raise InvalidURL(url, "contains control characters")
    normalized = normalize_url_path(path)
    if not parts.netloc:
        if parts.query:
            raise InvalidURL(url, "needs a scheme and host when it has a query string")
        return None, normalized
    host = normalize_host(parts.netloc, parts.scheme)
    if not rules.serves_host(host):
        raise InvalidURL(url, f"is on a host this site does not serve ({host})")
    query = parse_qsl(parts.query, keep_blank_values=True, encoding="latin-1")
    return canonical_url(parts.scheme, host, normalized, query), normalized
