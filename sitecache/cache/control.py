"""Per-view control: what a view tells the page cache through its response headers.

`PageCache` reads a response's HTTP caching fields as RFC 9111 says, whatever framework made
it (`sitecache.cache.capture.response_facts`, `sitecache.cache.freshness`); the ones a view
most often sets are:

- ``Cache-Tag: a, b``: the purge tags of the page (`Purger.purge_tags` removes it);
- ``Cache-Control: s-maxage=N`` (or ``max-age=N``, ``Expires``, ``CDN-Cache-Control``): it
  stays fresh ``N`` seconds instead of the ``max_age`` setting (``s-maxage=0`` or ``no-cache``:
  revalidated with the view before every use, so never stored without an ``ETag`` or
  ``Last-Modified``);
- ``Vary: Accept-Language``: one copy per value of those request headers (``Vary`` on
  ``Cookie``, ``Authorization`` or ``*``: never stored);
- ``Cache-Control: no-store, private``: never stored (nor kept by browsers or proxies).

`CacheDirectives` holds such a choice. `cache_headers` gives it as a header list (a Flask view
returns it as its third value; Django's ``response[name] = value`` takes each pair),
`CacheDirectives.apply` merges it into headers a view already made, and `cache_control` is a
decorator for WSGI callables (``(environ, start_response) -> body``). Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sitecache.cache.capture import StartResponse, WSGIApp
from sitecache.cache.directives import split_list

__all__ = [
    "NEVER_STORE",
    "CacheDirectives",
    "cache_control",
    "cache_headers",
    "never_store_headers",
]

#: The ``Cache-Control`` value of a page that nobody may keep.
NEVER_STORE: Final = "no-store, private"

#: A tag or a header name: visible ASCII without the separators of a comma-separated header
#: (SECURITY: no CR, LF, comma or space can reach a header through it).
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z:/@=]+")
_HEADER_NAME: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")

Headers = list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class CacheDirectives:
    """What a view asks of the page cache (every field optional).

    Attributes:
        tags: purge tags (``post-42``, ``author:7``; letters, digits and ``-._:/@=`` and the
            like; no comma, space or control character).
        s_maxage: seconds the page stays fresh in the cache (``None``: the ``max_age``
            setting; ``0``: revalidated before every use, never stored without a validator).
        vary: request header names the page depends on (``Accept-Language``).
        no_store: never store the page (it wins over everything else).

    Raises:
        ValueError: a tag or header name holds a character a header cannot carry, or
            ``s_maxage`` is negative.
    """

    tags: tuple[str, ...] = ()
    s_maxage: int | None = None
    vary: tuple[str, ...] = ()
    no_store: bool = False

    def __post_init__(self) -> None:
        for tag in self.tags:
            if not isinstance(tag, str) or not _TOKEN.fullmatch(tag):
                raise ValueError(f"cache tag {tag!r} is not a token (no comma, space, control)")
        for name in self.vary:
            if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"Vary name {name!r} is not a header name")
        if self.s_maxage is not None and (
            isinstance(self.s_maxage, bool) or not isinstance(self.s_maxage, int)
        ):
            raise ValueError(f"s_maxage {self.s_maxage!r} is not an integer")
        if self.s_maxage is not None and self.s_maxage < 0:
            raise ValueError(f"s_maxage {self.s_maxage} is negative")

    @classmethod
    def of(
        cls,
        *,
        tags: Iterable[str] = (),
        s_maxage: int | None = None,
        vary: Iterable[str] = (),
        no_store: bool = False,
    ) -> CacheDirectives:
        """The directives of these arguments (any iterables; a single string is one tag).

        Raises:
            ValueError: see the class.
        """
        return cls(
            tags=(tags,) if isinstance(tags, str) else tuple(dict.fromkeys(tags)),
            s_maxage=s_maxage,
            vary=(vary,) if isinstance(vary, str) else tuple(dict.fromkeys(vary)),
            no_store=no_store,
        )

    def headers(self) -> Headers:
        """The response headers that say it: ``Cache-Tag``, ``Cache-Control``, ``Vary`` (only
        those with something to say)."""
        return self.apply([])

    def apply(self, headers: Sequence[tuple[str, str]]) -> Headers:
        """``headers`` with these directives merged in: tags and ``Vary`` names added to any
        the view set; ``s-maxage`` replacing one the view set (its other ``Cache-Control``
        directives kept); ``no_store`` replacing ``Cache-Control`` with `NEVER_STORE`."""
        tags = list(self.tags)
        vary = list(self.vary)
        control: list[str] = []
        kept: Headers = []
        for name, value in headers:
            lower = name.lower()
            if lower == "cache-tag":
                tags = [*_items(value), *tags]
            elif lower == "vary":
                vary = [*_items(value), *vary]
            elif lower == "cache-control":
                control.extend(_items(value))
            else:
                kept.append((name, value))
        if tags:
            kept.append(("Cache-Tag", ", ".join(_unique(tags, str.lower))))
        value = self._cache_control(control)
        if value:
            kept.append(("Cache-Control", value))
        if vary:
            kept.append(("Vary", ", ".join(_unique(vary, str.lower))))
        return kept

    def _cache_control(self, directives: list[str]) -> str:
        if self.no_store:
            return NEVER_STORE
        if self.s_maxage is not None:
            directives = [d for d in directives if _name(d) != "s-maxage"]
            directives.append(f"s-maxage={self.s_maxage}")
        return ", ".join(directives)


def _items(value: str) -> list[str]:
    """The items of a comma-separated field (commas in quoted strings kept: `split_list`)."""
    return split_list(value)


def _name(directive: str) -> str:
    """A ``Cache-Control`` item's directive name, lower case."""
    return directive.partition("=")[0].strip().lower()


def _unique(items: Iterable[str], key: Callable[[str], str]) -> list[str]:
    seen: dict[str, str] = {}
    for item in items:
        seen.setdefault(key(item), item)
    return list(seen.values())


def cache_headers(
    *,
    tags: Iterable[str] = (),
    s_maxage: int | None = None,
    vary: Iterable[str] = (),
    no_store: bool = False,
) -> Headers:
    """The response headers that tell the page cache these directives (see `CacheDirectives`).

    ``dict(cache_headers(...))`` is the same as a mapping (each name appears once).

    Raises:
        ValueError: a tag or header name a header cannot carry, a negative ``s_maxage``.
    """
    return CacheDirectives.of(tags=tags, s_maxage=s_maxage, vary=vary, no_store=no_store).headers()


def never_store_headers() -> Headers:
    """``[("Cache-Control", "no-store, private")]``: the page cache never stores the page."""
    return [("Cache-Control", NEVER_STORE)]


def cache_control(
    *,
    tags: Iterable[str] = (),
    s_maxage: int | None = None,
    vary: Iterable[str] = (),
    no_store: bool = False,
) -> Callable[[WSGIApp], WSGIApp]:
    """Decorate a WSGI callable so that every response it starts carries these directives
    (merged into its own headers by `CacheDirectives.apply`).

    Raises:
        ValueError: at decoration time, as `CacheDirectives`.
    """
    directives = CacheDirectives.of(tags=tags, s_maxage=s_maxage, vary=vary, no_store=no_store)

    def decorate(view: WSGIApp) -> WSGIApp:
        @functools.wraps(view)
        def controlled(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
            def directed_start_response(
                status: str, headers: list[tuple[str, str]], exc_info: Any = None
            ) -> Any:
                return start_response(status, directives.apply(headers), exc_info)

            return view(environ, directed_start_response)

        return controlled

    return decorate
