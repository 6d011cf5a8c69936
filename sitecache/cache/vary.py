"""``Vary``: pages keyed by the request headers their response names, through pointer entries.

A page whose response says ``Vary: Accept-Language`` is stored under a key that holds the
request's ``Accept-Language`` value (`sitecache.cache.keys.vary_key`; a request without the
header and one with an empty value are different variants). Under the URL's base key
the cache stores a *pointer* (`pointer_entry`: a `CacheEntry` with status 0) naming those
headers, so that a later request finds its own variant in two reads: the pointer, then the key
built from its values of the named headers (`variant_key`). ``Accept-Encoding`` is never part
of the key: the cache negotiates gzip itself from one entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from sitecache.cache.entry import CacheEntry
from sitecache.cache.keys import vary_key

__all__ = ["keyed_vary", "pointer_entry", "variant_key", "vary_values", "with_vary"]

#: Request headers whose values are case-insensitive (language tags, codings, charsets): keyed
#: in lower case, so ``en, DE`` and ``en, de`` share a variant.
_CASE_INSENSITIVE: Final = frozenset({"accept-language", "accept-encoding", "accept-charset"})
#: Request headers that PEP 3333 (CGI) keeps without the ``HTTP_`` prefix.
_UNPREFIXED_HEADERS: Final = frozenset({"CONTENT_TYPE", "CONTENT_LENGTH"})


def keyed_vary(vary: Iterable[str], *, encoded: bool = False) -> tuple[str, ...]:
    """The headers of a response's ``Vary`` (lower case) that are part of the key: all but
    ``accept-encoding``, which the cache negotiates itself from an identity body; a body the
    application encoded itself is keyed on it too (whether or not its ``Vary`` says so)."""
    names = tuple(name for name in vary if name != "accept-encoding")
    return (*names, "accept-encoding") if encoded else names


def vary_values(environ: Mapping[str, Any], names: Iterable[str]) -> list[str | None]:
    """The request's values of the ``Vary`` headers ``names`` (lower case), normalized:
    list members stripped and joined by ``", "`` (``" 1,2 "`` and ``"1, 2"``, and two field
    lines ``1`` and ``2``, are one value), `_CASE_INSENSITIVE` ones in lower case; ``None``
    when absent, which is not the empty value (RFC 9111 §4.1)."""
    values: list[str | None] = []
    for name in names:
        variable = name.upper().replace("-", "_")
        if variable not in _UNPREFIXED_HEADERS:
            variable = "HTTP_" + variable
        value = environ.get(variable)
        if value is None:
            values.append(None)
        else:
            text = ", ".join(item.strip() for item in str(value).split(",")).strip()
            values.append(text.lower() if name in _CASE_INSENSITIVE else text)
    return values


def variant_key(base: str, names: tuple[str, ...], environ: Mapping[str, Any]) -> str:
    """The key of this request's variant of the page under ``base`` that varies on ``names``."""
    return vary_key(base, names, vary_values(environ, names))


def pointer_entry(entry: CacheEntry, names: tuple[str, ...]) -> CacheEntry:
    """The pointer stored under the base key of ``entry`` (which varies on ``names``): no
    status, no headers, no body, the same URL, variant and expiry."""
    return CacheEntry(
        url=entry.url,
        host=entry.host,
        path=entry.path,
        variant=entry.variant,
        status=0,
        headers=(),
        body=b"",
        gzip_body=b"",
        created=entry.created,
        expires=entry.expires,
        vary=names,
    )


def with_vary(headers: list[tuple[str, str]], name: str) -> list[tuple[str, str]]:
    """``headers`` whose ``Vary`` names ``name`` too: appended to the last ``Vary`` header, or
    a new one; ``headers`` itself when a ``Vary`` already names it or says ``*``. Only the
    answer changes: the key never holds ``name``'s value (`keyed_vary` reads the response the
    application gave)."""
    wanted = name.lower()
    last = -1
    for index, (header, value) in enumerate(headers):
        if header.lower() != "vary":
            continue
        last = index
        names = {item.strip().lower() for item in value.split(",")}
        if wanted in names or "*" in names:
            return headers
    if last < 0:
        return [*headers, ("Vary", name)]
    changed = list(headers)
    header, value = changed[last]
    changed[last] = (header, f"{value}, {name}" if value.strip() else name)
    return changed
