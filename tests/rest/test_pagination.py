"""The one pagination helper: totals headers, ``Link`` prev/next and the page bounds."""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestServer
from sitecache.rest.pagination import check_page_number, page_count, paginated_response
from tests.rest.support import body_of, public

BASE = "http://example.org/site-json/pages/v1/items"
ITEMS = list(range(1, 24))  # 23 items


@pytest.mark.parametrize(
    ("total", "per_page", "pages"), [(0, 10, 0), (1, 10, 1), (10, 10, 1), (11, 10, 2), (5, 0, 0)]
)
def test_the_page_count_rounds_up(total: int, per_page: int, pages: int) -> None:
    assert page_count(total, per_page) == pages


def test_a_page_past_the_end_is_refused_with_the_callers_code() -> None:
    check_page_number(3, 3)
    with pytest.raises(RestError) as refused:
        check_page_number(4, 3, "rest_post_invalid_page_number")
    assert refused.value.to_dict() == {
        "code": "rest_post_invalid_page_number",
        "message": "The page number requested is larger than the number of pages available.",
        "data": {"status": 400},
    }


@pytest.fixture
def paged(app: App) -> Client:
    """``/pages/v1/items``: the 23 items, ``per_page`` at a time."""

    def register(server: RestServer) -> None:
        def items(request: RestRequest) -> Any:
            per_page = int(request.get_param("per_page") or 10)
            page = int(request.get_param("page") or 1)
            data = ITEMS[(page - 1) * per_page : page * per_page]
            return paginated_response(server, request, data, len(ITEMS), per_page, page)

        server.register_rest_route("pages/v1", "/items", public(callback=items))

    app.hooks.add_action("rest_api_init", register)
    return Client(app)


def test_a_middle_page_links_both_neighbours_keeping_the_query_in_place(paged: Client) -> None:
    response = paged.get("/site-json/pages/v1/items?per_page=5&page=2&tag[]=a&tag[]=b&q=x")
    assert body_of(response) == [6, 7, 8, 9, 10]
    assert response.headers["X-Site-Total"] == "23"
    assert response.headers["X-Site-TotalPages"] == "5"
    query = "tag%5B%5D=a&tag%5B%5D=b&q=x"
    assert response.headers["Link"] == (
        f'<{BASE}?per_page=5&page=1&{query}>; rel="prev", '
        f'<{BASE}?per_page=5&page=3&{query}>; rel="next"'
    )


def test_the_first_page_adds_the_page_last_and_a_page_past_the_end_links_back(
    paged: Client,
) -> None:
    first = paged.get("/site-json/pages/v1/items?per_page=10")
    assert first.headers["Link"] == f'<{BASE}?per_page=10&page=2>; rel="next"'
    beyond = paged.get("/site-json/pages/v1/items?per_page=10&page=9")
    assert body_of(beyond) == []
    assert beyond.headers["Link"] == f'<{BASE}?per_page=10&page=3>; rel="prev"'


def test_a_single_page_has_no_link(paged: Client) -> None:
    response = paged.get("/site-json/pages/v1/items?per_page=50")
    assert response.headers["X-Site-TotalPages"] == "1"
    assert "rel=" not in response.headers.get("Link", "").replace('rel="https://api.w.org/"', "")
