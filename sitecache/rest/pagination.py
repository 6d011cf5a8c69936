"""The ``Link`` header of a paginated collection: ``rel="prev"`` and ``rel="next"``.

WordPress's collections link the neighbouring pages with the request's own query kept (only
``page`` changes); a page past the end links back to the last page as ``prev``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

if TYPE_CHECKING:
    from sitecache.rest.request import RestRequest
    from sitecache.rest.server import RestServer

__all__ = ["pagination_link_header"]


def pagination_link_header(
    server: RestServer, request: RestRequest, page: int, pages: int
) -> str | None:
    """``<…page=N-1>; rel="prev", <…page=N+1>; rel="next"`` for ``request``'s route, or
    ``None`` when there is no neighbouring page."""
    base = server.rest_url(request.get_route())
    query = [
        pair
        for key, value in request.get_query_params().items()
        if key not in ("rest_route", "page")
        for pair in _pairs(key, value)
    ]
    links = []
    if page > 1 and pages:
        links.append(f'<{_with_page(base, query, min(page - 1, pages))}>; rel="prev"')
    if page < pages:
        links.append(f'<{_with_page(base, query, page + 1)}>; rel="next"')
    return ", ".join(links) or None


def _pairs(key: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, list):
        return [(f"{key}[]", str(item)) for item in value]
    if isinstance(value, dict):
        return [(f"{key}[{name}]", str(item)) for name, item in value.items()]
    return [(key, str(value))]


def _with_page(base: str, query: list[tuple[str, str]], page: int) -> str:
    return f"{base}{'&' if '?' in base else '?'}{urlencode([*query, ('page', str(page))])}"
