"""Where the application-password authorization screen may send a user back to.

As WordPress: a success or reject URL needs a scheme, never ``javascript:`` or ``data:``, and
plain ``http`` only for a loopback host, so a new password never crosses a network in clear
text (`redirect_url_problem`); the answer's fields are added to its query (`with_query`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["is_loopback_host", "redirect_url_problem", "with_query"]


def with_query(url: str, params: Mapping[str, str]) -> str:
    """``url`` with ``params`` added to its query."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True) + list(params.items())
    return urlunsplit(parts._replace(query=urlencode(query)))


def redirect_url_problem(url: str, allow_plain_http_host: Callable[[str], bool]) -> str | None:
    """Why ``url`` may not receive an application password, or ``None`` when it may.

    As WordPress: a scheme is required; ``javascript:`` and ``data:`` are refused; plain
    ``http`` only for loopback hosts (so the password never crosses a network in clear text).
    """
    if not url:
        return None
    scheme = urlsplit(url).scheme.lower()
    if not scheme or not url[0].isalpha():
        return "Invalid URL format."
    if scheme in ("javascript", "data", "vbscript"):
        return "Invalid URL scheme."
    if scheme == "http" and not allow_plain_http_host(urlsplit(url).hostname or ""):
        return "The URL must be served over a secure connection."
    return None


def is_loopback_host(host: str) -> bool:
    """``localhost`` or a loopback IP literal; never a name that merely starts with ``127.``."""
    # SECURITY: "127.attacker.example" is a public host name, not a loopback address.
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
