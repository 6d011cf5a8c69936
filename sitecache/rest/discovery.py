"""API discovery for pages: the ``Link`` header and ``<link>`` tags.

Every page points at the API root with relation ``{api_root_rel}``; a page showing one resource
(a post, a term, an author) also points at that resource's route with relation ``alternate``
and type ``application/json``.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sitecache.rest.server import RestServer

__all__ = ["discovery_link_header", "discovery_link_tags"]


def discovery_link_header(server: RestServer, resource_route: str = "") -> str:
    """The ``Link`` header value for a page (``rest_output_link_header``)."""
    links = [f'<{server.rest_url("/")}>; rel="{server.settings.api_root_rel}"']
    if resource_route:
        links.append(
            f'<{server.rest_url(resource_route)}>; rel="alternate"; title="JSON"; '
            'type="application/json"'
        )
    return ", ".join(links)


def discovery_link_tags(server: RestServer, resource_route: str = "") -> str:
    """The equivalent ``<link>`` tags for a page's ``<head>`` (``rest_output_link_wp_head``)."""
    tags = [
        f'<link rel="{escape(server.settings.api_root_rel)}" href="{escape(server.rest_url("/"))}">'
    ]
    if resource_route:
        tags.append(
            f'<link rel="alternate" title="JSON" type="application/json" '
            f'href="{escape(server.rest_url(resource_route))}">'
        )
    return "\n".join(tags)
