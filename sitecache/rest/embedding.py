"""``_links`` and ``_embedded``: the data of a response as the client receives it.

Links are compacted through the server's CURIEs and carry target hints; with ``_embed``, each
embeddable link is answered by an internal GET (``context=embed``, as the caller; the largest
``per_page`` of a collection), once per URL per response (``WP_REST_Server::embed_links``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sitecache.errors import RestError
from sitecache.rest.links import compact_links
from sitecache.rest.response import RestResponse
from sitecache.schema.php import is_numeric_array

if TYPE_CHECKING:
    from sitecache.rest.server import RestServer

__all__ = ["response_to_data"]


def response_to_data(server: RestServer, response: RestResponse, embed: bool | list[str]) -> Any:
    """The response data with ``_links`` and, when asked, ``_embedded``."""
    data = response.get_data()
    links: dict[str, Any] = {}
    if response.get_links():  # as WordPress: no links, no CURIEs (rest_response_link_curies)
        links = compact_links(response, server.curies(), server.target_hints)
    if links:
        if data is None:
            data = {}
        elif isinstance(data, list):
            data = {str(position): item for position, item in enumerate(data)}
        if isinstance(data, dict):
            data = {**data, "_links": links}
    if embed:
        cache: dict[str, Any] = {}
        if is_numeric_array(data) and isinstance(data, list):
            data = [_embed_links(server, item, embed, cache) for item in data]
        else:
            data = _embed_links(server, data, embed, cache)
    return data


def _embed_links(
    server: RestServer, data: Any, embed: bool | list[str], cache: dict[str, Any]
) -> Any:
    if not isinstance(data, dict) or not isinstance(data.get("_links"), dict):
        return data
    embedded: dict[str, list[Any]] = {}
    for rel, links in data["_links"].items():
        if isinstance(embed, list) and rel not in embed:
            continue
        if not isinstance(links, list):
            continue
        entries: list[Any] = []
        for link in links:
            if not isinstance(link, Mapping) or not link.get("embeddable"):
                entries.append({})
                continue
            href = link.get("href")
            if not isinstance(href, str):
                entries.append({})
                continue
            if href not in cache:
                cache[href] = _embedded_response(server, href)
            entries.append(cache[href])
        if any(entry for entry in entries):
            embedded[rel] = entries
    if embedded:
        data = {**data, "_embedded": embedded}
    return data


def _embedded_response(server: RestServer, href: str) -> Any:
    request = server.request_from_url(href)
    if request is None:
        return {}
    if not request.get_param("context"):
        request.set_param("context", "embed")
    if not request.get_param("per_page"):
        matched = server.registry.match(request.get_method(), request.get_route())
        if not isinstance(matched, RestError):
            per_page = (matched[1].get("args") or {}).get("per_page")
            if isinstance(per_page, Mapping) and per_page.get("maximum") is not None:
                request.set_param("per_page", int(per_page["maximum"]))
    response = server.post_dispatch(server.dispatch(request), request)
    return server.response_to_data(response, False)
