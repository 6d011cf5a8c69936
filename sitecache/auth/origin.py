"""Where a form POST comes from: the one cross-site (CSRF) check of every HTML form that changes
state (log in, log out, authorize an application, post a comment).

A browser says where a form was submitted from in three headers it does not let pages forge:
``Sec-Fetch-Site`` (its own verdict), ``Origin`` and ``Referer``. A POST is refused when the
browser calls it ``cross-site``, when its ``Origin`` is ``null`` or another site's, or, without
an ``Origin``, when its ``Referer`` is another site's. A request with none of them passes: curl,
scripts and old clients send none, and a browser that sends none cannot be made to carry a
victim's identity to another site's form either (every current browser sends ``Origin`` with a
POST).

"This site" is the site's home URL (``site_url``, or the request's host when it is unset) and
the address the request itself was sent to (its scheme and ``Host``, after `ProxyFix` when
``proxy_count`` is set): a cross-site page cannot choose the host a browser sends its request
to. Origins are compared as scheme, host (case-insensitive) and port, default ports filled in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import urlsplit

from werkzeug.wrappers import Request

__all__ = ["cross_site_reason", "origin_of", "request_cross_site_reason"]

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_FETCH_SITES_REFUSED: Final = frozenset({"cross-site"})
"""``Sec-Fetch-Site`` values refused outright; ``same-site`` is left to the ``Origin`` check
(a sibling subdomain's ``Origin`` is foreign), ``same-origin`` and ``none`` (typed, bookmarked)
pass on to it as well."""

Origin = tuple[str, str, int]


def origin_of(url: str) -> Origin | None:
    """``(scheme, host, port)`` of an http(s) URL, or ``None`` when it has no usable origin."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:  # a port out of range or not a number, a broken IPv6 literal
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return scheme, host, port if port is not None else _DEFAULT_PORTS[scheme]


def cross_site_reason(headers: Mapping[str, str], site_urls: Iterable[str]) -> str | None:
    """Why a form POST with these request headers is cross-site, or ``None`` when it is not.

    Args:
        headers: the request's headers (any capitalization of the names).
        site_urls: URLs of this site (the home URL, the URL the request was sent to); only their
            origins count.

    Returns:
        ``None`` when the POST may be taken; otherwise a short reason for the log (never shown
        to the client, never containing more than 200 characters of what the client sent).
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    fetch_site = lowered.get("sec-fetch-site", "").strip().lower()
    if fetch_site in _FETCH_SITES_REFUSED:
        return f"Sec-Fetch-Site is {fetch_site}"
    allowed = {origin for url in site_urls if (origin := origin_of(url)) is not None}
    for name in ("origin", "referer"):
        source = lowered.get(name, "")
        if not source:
            continue  # no Origin: fall back to the Referer; neither: a non-browser client
        # SECURITY: "null" (sandboxed frames, data: and file: pages, cross-site redirects)
        # and anything unparsable is foreign.
        if origin_of(source) not in allowed:
            return f"{name.capitalize()} {source[:200]!r} is not this site"
        return None
    return None


def request_cross_site_reason(request: Request, home_url: str) -> str | None:
    """`cross_site_reason` for a werkzeug request: this site is ``home_url`` and the address the
    request was sent to (its scheme and ``Host``)."""
    return cross_site_reason(dict(request.headers.items()), (home_url, request.host_url))
