"""The cache key: which stored page answers a request.

A key is built from the scheme, the host (lower case, default port dropped), the path as the
app routes it, the sorted query without ignored parameters (only when query strings are
cached), the variant (``mobile`` or none), and the values of the request headers the stored
response named in ``Vary``. The canonical text is hashed to a fixed-length hexadecimal name that
every backend can use as a file name or a Redis key.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import quote, unquote_to_bytes, urlencode

__all__ = [
    "base_key",
    "canonical_url",
    "hash_key",
    "normalize_host",
    "normalize_path",
    "normalize_url_path",
    "vary_key",
]

_PATH_SAFE = "/:@!$&'()*+,;=-._~"
#: A path `quote` leaves as it is: ASCII letters, digits and `_PATH_SAFE` only.
_UNQUOTED: Final = re.compile(r"[A-Za-z0-9/:@!$&'()*+,;=\-._~]+")


def normalize_host(host: str, scheme: str) -> str:
    """``host`` lower-cased, without a trailing dot or the scheme's default port."""
    host = host.strip().lower()
    name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not name:
        name, port = host, ""
    if (scheme == "http" and port == "80") or (scheme == "https" and port == "443"):
        host = name
    return host.rstrip(".") if not port else host


def normalize_path(path: str) -> str:
    """A WSGI ``PATH_INFO`` (the request's bytes decoded as latin-1) percent-encoded."""
    if _UNQUOTED.fullmatch(path):  # PERF: most paths have nothing to encode
        return path
    try:
        raw = path.encode("latin-1")
    except UnicodeEncodeError:  # a server that decoded as UTF-8 (or left surrogates)
        raw = path.encode("utf-8", "surrogateescape")
    return quote(raw or b"/", safe=_PATH_SAFE)


def normalize_url_path(path: str) -> str:
    """A path as people write it (``/café/`` or ``/caf%C3%A9/``) in the same spelling as
    `normalize_path` gives the request for it."""
    return quote(unquote_to_bytes(path) or b"/", safe=_PATH_SAFE)


def canonical_url(scheme: str, host: str, path: str, query: Iterable[tuple[str, str]]) -> str:
    """``scheme://host/path?sorted-query`` (no ``?`` when the query is empty).

    Query pairs are latin-1 text (each character one byte of the request), so distinct bytes
    never collapse into one key."""
    # Stable sort by name: the order of repeated names' values is kept (it may matter).
    pairs = sorted(query, key=lambda pair: pair[0])
    url = f"{scheme}://{host}{path}"
    return f"{url}?{urlencode(pairs, encoding='latin-1')}" if pairs else url


def hash_key(text: str) -> str:
    """A 32-character hexadecimal name for ``text``."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def base_key(url: str, variant: str) -> str:
    """The key of a URL's variant before any ``Vary`` header is applied."""
    return hash_key(f"{variant}|{url}")


def vary_key(base: str, names: Iterable[str], values: Iterable[str | None]) -> str:
    """The key of one ``Vary`` combination under ``base`` (``None``: the request has no
    such header, which is not the empty value)."""
    joined = "\n".join(
        name if value is None else f"{name}:{value}"
        for name, value in zip(names, values, strict=True)
    )
    return hash_key(f"{base}|{joined}")
