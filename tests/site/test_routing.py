"""The route table alone: every endpoint builds a URL that matches back to it, pretty or plain."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

import pytest

from sitecache.site.routing import Match, RouteTable

STRUCTURE = "/%year%/%monthnum%/%postname%/"
POST_VALUES = {
    "year": 2023, "monthnum": 11, "day": 14, "hour": 22, "minute": 13, "second": 20,
    "post_id": 12, "postname": "hello-world", "category": "news", "author": "alice", "id": 12,
}  # fmt: skip

# endpoint, values, page, pretty path, plain path
ROWS = [
    ("home", {}, 1, "/", "/"),
    ("home", {}, 3, "/page/3/", "/?paged=3"),
    ("feed", {}, 1, "/feed/", "/?feed=rss2"),
    ("sitemap", {}, 1, "/sitemap.xml", "/sitemap.xml"),
    ("category", {"slug": "news", "id": 4}, 1, "/category/news/", "/?cat=4"),
    ("category", {"slug": "news", "id": 4}, 2, "/category/news/page/2/", "/?cat=4&paged=2"),
    ("tag", {"slug": "big-ideas"}, 1, "/tag/big-ideas/", "/?tag=big-ideas"),
    ("author", {"slug": "alice", "id": 3}, 1, "/author/alice/", "/?author=3"),
    ("search", {"term": "a b&c"}, 1, "/search/a%20b%26c/", "/?s=a+b%26c"),
    ("search", {"term": "a b&c"}, 2, "/search/a%20b%26c/page/2/", "/?s=a+b%26c&paged=2"),
    ("date", {"year": 2023}, 1, "/2023/", "/?m=2023"),
    ("date", {"year": 2023, "month": 1, "day": None}, 1, "/2023/01/", "/?m=202301"),
    ("date", {"year": 2023, "month": 11, "day": 4}, 1, "/2023/11/04/", "/?m=20231104"),
    ("post", POST_VALUES, 1, "/2023/11/hello-world/", "/?p=12"),
    ("page", {"path": "about/team", "id": 7}, 1, "/about/team/", "/?page_id=7"),
]


@pytest.mark.parametrize(("endpoint", "values", "page", "pretty", "plain"), ROWS)
def test_each_endpoint_builds_its_pretty_and_plain_path(
    endpoint: str, values: dict[str, object], page: int, pretty: str, plain: str
) -> None:
    assert RouteTable(STRUCTURE).build(endpoint, values, page) == pretty
    assert RouteTable("").build(endpoint, values, page) == plain


def first_match(table: RouteTable, url: str) -> Match:
    """The first match of ``url`` as a server sees it (the path decoded, the query parsed)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return table.match(unquote(parts.path), query)[0]


@pytest.mark.parametrize(("endpoint", "values", "page", "pretty", "plain"), ROWS)
def test_what_is_built_matches_back_to_its_endpoint(
    endpoint: str, values: dict[str, object], page: int, pretty: str, plain: str
) -> None:
    for table, url in ((RouteTable(STRUCTURE), pretty), (RouteTable(""), plain)):
        found = first_match(table, url)
        assert found.endpoint == endpoint, url
        assert found.values.get("page", "1") == str(page), url
        assert not found.redirect, url


def test_a_fixed_shape_ends_the_search_and_a_post_permalink_falls_through_to_a_page() -> None:
    table = RouteTable("/%category%/%postname%/")
    assert [m.endpoint for m in table.match("/category/news/", {})] == ["category"]
    assert [(m.endpoint, m.final) for m in table.match("/news/hello/", {})] == [
        ("post", False),
        ("page", True),
    ]
    assert RouteTable("").match("/news/hello/", {}) == []


def test_query_variables_are_read_in_order_and_redirect_when_pretty() -> None:
    pretty, plain = RouteTable("/%postname%/"), RouteTable("")
    query = {"s": "x", "p": "3", "cat": "4"}
    assert pretty.match_query(query) == [Match("search", {"term": "x"}, redirect=True, final=False)]
    assert plain.match_query({"cat": "4", "tag": "t"}) == [
        Match("category", {"id": "4"}, final=False)
    ]
    assert pretty.match_query({"cat": "4"}) == []
    assert pretty.match_query({"s": " "}) == [Match("home", {}, redirect=True)]
    assert plain.match_query({"s": " ", "p": "3"}) == []
    assert plain.match_query({"p": "3", "paged": "2"}) == [
        Match("post", {"id": "3", "page": "2"}, final=True)
    ]
    assert plain.match_query({"m": "20231"}) == []


@pytest.mark.parametrize(
    ("structure", "endpoint", "values"),
    [
        ("/%postname%/", "post", {"id": 3}),
        ("/%postname%/", "category", {"id": 3}),
        ("/%postname%/", "nothing", {}),
        ("", "post", {"postname": "x"}),
        ("", "nothing", {}),
    ],
)
def test_building_without_the_values_a_shape_needs_is_refused(
    structure: str, endpoint: str, values: dict[str, object]
) -> None:
    with pytest.raises(LookupError):
        RouteTable(structure).build(endpoint, values)


def test_a_sitemap_and_old_post_types_build_the_same_way_in_both_modes() -> None:
    assert RouteTable("/%postname%/").build("sitemap", {}, plain=True) == "/sitemap.xml"
    assert RouteTable("/%postname%/").build("post", {"id": 5}, plain=True) == "/?p=5"
