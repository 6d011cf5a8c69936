"""The headers the site's pages carry, from the configuration alone.

Shared by the application (which adds them to every answer) and ``sitecache nginx-config``
(whose server block sends them with the static copies nginx serves), so a page looks the same
whoever serves it.
"""

from __future__ import annotations

from typing import Final

from sitecache.config import Config
from sitecache.rest.urls import RequestContext, RestSettings, rest_url

__all__ = ["EVERY_RESPONSE_HEADERS", "HTML_PAGE_HEADERS", "page_headers", "rest_settings"]

EVERY_RESPONSE_HEADERS: Final[dict[str, str]] = {"X-Content-Type-Options": "nosniff"}
"""Sent with every answer (unless the view set its own value)."""
HTML_PAGE_HEADERS: Final[dict[str, str]] = {
    "Content-Security-Policy": (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; "
        "object-src 'none'; base-uri 'self'; frame-ancestors 'self'"
    ),
    "X-Frame-Options": "SAMEORIGIN",
    "Referrer-Policy": "strict-origin-when-cross-origin",
}
"""Sent with the site's HTML pages (the login and admin pages send stricter ones)."""


def rest_settings(config: Config) -> RestSettings:
    """The REST server's settings from the application configuration."""
    return RestSettings(
        prefix=config.rest_prefix,
        site_url=config.site_url,
        permalink_structure=config.permalink_structure,
        debug=config.debug,
        api_root_rel=config.api_root_rel,
        force_ssl_admin=config.force_ssl_admin,
        help_url=config.help_url,
        site_name=config.site_name,
        site_description=config.site_description,
        timezone_string=config.timezone_string,
        gmt_offset=config.gmt_offset,
    )


def page_headers(config: Config) -> dict[str, str]:
    """The headers every HTML page of the site carries whatever it shows: the security headers
    and the API-root ``Link`` (a front web server serving static copies sends these)."""
    api_root = rest_url(rest_settings(config), RequestContext(), "/")
    return {
        **EVERY_RESPONSE_HEADERS,
        **HTML_PAGE_HEADERS,
        "Link": f'<{api_root}>; rel="{config.api_root_rel}"',
    }
