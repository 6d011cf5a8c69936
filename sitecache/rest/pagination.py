"""Paginated collections: their totals headers, ``Link`` prev/next and the page bounds.

Every collection (posts, pages, media, comments, terms, users, revisions, search, the cache's
entries) answers one page at a time with WordPress's headers: ``X-Site-Total`` (how many items
match) and ``X-Site-TotalPages``, and a ``Link`` header naming the neighbouring pages with the
request's own query kept (only ``page`` changes, in place; array values as ``key[]``). A page
past the end links back to the last page as ``prev``. A collection that refuses a page past the
end says so with `check_page_number`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from sitecache.errors import RestError
from sitecache.rest.response import RestResponse

if TYPE_CHECKING:
    from sitecache.rest.request import RestRequest
    from sitecache.rest.server import RestServer

__all__ = ["check_page_number", "page_count", "paginated_response", "pagination_link_header"]


def page_count(total: int, per_page: int) -> int:
    """How many pages of ``per_page`` items ``total`` items fill (0 for no items, or for a
    page size of 0)."""
    return -(-total // per_page) if per_page > 0 else 0


def check_page_number(page: int, pages: int, code: str = "rest_invalid_page_number") -> None:
    """Pass when ``page`` is one of ``pages`` pages.

    Raises:
        RestError: 400 ``code`` ("The page number requested is larger than the number of
            pages available.") when ``page`` is past the last one.
    """
    if page > pages:
        raise RestError(
            code,
            "The page number requested is larger than the number of pages available.",
            {"status": 400},
        )


def paginated_response(
    server: RestServer, request: RestRequest, data: Any, total: int, per_page: int, page: int
) -> RestResponse:
    """``data`` (one page of a collection) answered with ``X-Site-Total``,
    ``X-Site-TotalPages`` and, when there is a neighbouring page, ``Link`` prev/next."""
    pages = page_count(total, per_page)
    response = RestResponse(data)
    response.header("X-Site-Total", str(total))
    response.header("X-Site-TotalPages", str(pages))
    links = pagination_link_header(server, request, page, pages)
    if links is not None:
        response.header("Link", links)
    return response


def pagination_link_header(
    server: RestServer, request: RestRequest, page: int, pages: int
) -> str | None:
    """``<…page=N-1>; rel="prev", <…page=N+1>; rel="next"`` for ``request``'s route, or
    ``None`` when there is no neighbouring page."""
    base = server.rest_url(request.get_route())
    query = {key: value for key, value in request.get_query_params().items() if key != "rest_route"}
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


def _with_page(base: str, query: dict[str, Any], page: int) -> str:
    """``base`` with ``query``, its ``page`` set to ``page`` (in place, else last)."""
    pairs = [pair for key, value in {**query, "page": page}.items() for pair in _pairs(key, value)]
    return f"{base}{'&' if '?' in base else '?'}{urlencode(pairs)}"
