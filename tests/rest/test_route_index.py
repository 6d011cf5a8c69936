"""Route matching through the literal-prefix index picks what WordPress's one-by-one loop picks.

`RouteIndex` only leaves out routes that cannot match; these tests compare the registry's answers
with the loop it replaced (every route of the namespaces the path starts with, or every route,
tried in registration order) and check that the candidates do not grow with the route count.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitecache.errors import RestError
from sitecache.rest.route_index import RouteIndex, literal_prefix
from sitecache.rest.routes import Route, RouteRegistry
from tests.rest.support import public


def registry() -> RouteRegistry:
    return RouteRegistry(lambda function, message: None)


def linear_match(registry: RouteRegistry, method: str, path: str) -> Any:
    """The matching loop before the index: namespace pre-selection, then every route in turn."""
    probe = path.lstrip("/") + "/"
    names = {name for name in registry.namespaces if probe.startswith(name)}
    routes = [route for route in registry.routes.values() if not names or route.namespace in names]
    for route in routes:
        params = route.match(path)
        if params is None:
            continue
        for handler in route.handlers:
            checked = "GET" if method == "HEAD" and not handler["methods"].get("HEAD") else method
            if handler["methods"].get(checked):
                return route.pattern, id(handler), params
    return None


def outcome(registry: RouteRegistry, method: str, path: str) -> Any:
    matched = registry.match(method, path)
    if isinstance(matched, RestError):
        return None
    route, handler, params = matched
    return route.pattern, id(handler), params


def test_the_literal_prefix_stops_at_the_first_regular_expression_construct() -> None:
    assert literal_prefix("/ns/v1/items/(?P<id>\\d+)") == "/ns/v1/items/"
    assert literal_prefix("/ns/v1/items") == "/ns/v1/items"
    assert literal_prefix("/ns/v1/a.b") == "/ns/v1/a"
    assert literal_prefix("/ns/v1/\\d+") == "/ns/v1/"
    assert literal_prefix("/ns/v1/[ab]") == "/ns/v1/"


def test_a_character_under_a_quantifier_is_not_part_of_the_literal_prefix() -> None:
    assert literal_prefix("/ns/v1/items?") == "/ns/v1/item"
    assert literal_prefix("/ns/v1/ab*") == "/ns/v1/a"
    assert literal_prefix("/ns/v1/ab{2}") == "/ns/v1/a"
    assert literal_prefix("/ns/v1/ab+") == "/ns/v1/a"


def test_a_pattern_with_an_alternation_has_no_literal_prefix() -> None:
    assert literal_prefix("/ns/v1/a|/other") == ""
    assert literal_prefix("/ns/v1/(?:a|b)") == ""


def test_the_literal_prefix_is_lowered_like_an_ascii_case_insensitive_match() -> None:
    assert literal_prefix("/NS/V1/Items") == "/ns/v1/items"
    assert literal_prefix("/ns/ÄB") == "/ns/Äb"


def test_a_path_in_another_case_still_finds_its_route() -> None:
    routes = registry()
    routes.register_rest_route("ns/v1", "/Items/(?P<id>\\d+)", public())
    matched = routes.match("GET", "/NS/V1/ITEMS/7")
    assert not isinstance(matched, RestError)
    assert matched[0].pattern == "/ns/v1/Items/(?P<id>\\d+)"
    assert matched[2] == {"id": "7"}


def test_an_overriding_registration_is_matched_instead_of_the_old_route() -> None:
    routes = registry()
    first = public()
    second = public()
    routes.register_rest_route("ns/v1", "/thing", first)
    assert not isinstance(routes.match("GET", "/ns/v1/thing"), RestError)
    routes.register_rest_route("ns/v1", "/thing", second, override=True)
    matched = routes.match("GET", "/ns/v1/thing")
    assert not isinstance(matched, RestError)
    assert matched[1]["callback"] is second["callback"]
    assert len(routes.routes["/ns/v1/thing"].handlers) == 1


def test_a_route_registered_after_matching_began_is_found() -> None:
    routes = registry()
    routes.register_rest_route("ns/v1", "/a", public())
    assert isinstance(routes.match("GET", "/ns/v1/b"), RestError)
    routes.register_rest_route("ns/v1", "/b", public())
    assert not isinstance(routes.match("GET", "/ns/v1/b"), RestError)


def test_the_candidates_do_not_grow_with_the_number_of_routes() -> None:
    routes = registry()
    for number in range(2000):
        routes.register_rest_route("bench/v1", f"/things-{number}/(?P<id>\\d+)", public())
    routes.register_rest_route("other/v1", "/thing/(?P<id>\\d+)", public())
    # The last route of a crowded namespace, and a route of another namespace: only the
    # namespace index (whose pattern the path starts with) and the route itself are tried.
    assert [route.pattern for route in routes.candidate_routes("/bench/v1/things-1999/7")] == [
        "/bench/v1",
        "/bench/v1/things-1999/(?P<id>\\d+)",
    ]
    assert [route.pattern for route in routes.candidate_routes("/other/v1/thing/7")] == [
        "/other/v1",
        "/other/v1/thing/(?P<id>\\d+)",
    ]


def test_a_route_without_a_valid_regex_is_never_a_candidate() -> None:
    route = Route("/ns/v1/(", "ns/v1", None)
    assert RouteIndex([route]).candidates("/ns/v1/(") == []


SEGMENTS = ["a", "b", "A", "ab", "1", "12", "v1", "ns", "x", ""]
PIECES = [*SEGMENTS, "(?P<id>\\d+)", "[ab]+", "a?", "(?:a|b)", "x*", ".", "(?P<rest>.*)"]
NAMESPACES = ["ns", "ns/v1", "NS/v1", "ab", "a"]


@settings(max_examples=300, deadline=None)
@given(
    routes=st.lists(
        st.tuples(
            st.sampled_from(NAMESPACES),
            st.lists(st.sampled_from(PIECES), min_size=1, max_size=3),
            st.sampled_from(["GET", "POST", "GET, HEAD"]),
            st.booleans(),
        ),
        max_size=12,
    ),
    paths=st.lists(
        st.tuples(
            st.sampled_from(["GET", "POST", "HEAD"]),
            st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=5),
        ),
        min_size=1,
        max_size=8,
    ),
)
@example(routes=[("ns", ["a?"], "GET", False)], paths=[("GET", ["ns", ""])])
@example(routes=[("ns", ["ab", "x*"], "GET", False)], paths=[("GET", ["ns", "ab", ""])])
@example(routes=[("ns", ["(?:a|b)"], "POST", False)], paths=[("POST", ["NS", "b"])])
def test_matching_through_the_index_agrees_with_trying_every_route(
    routes: list[tuple[str, list[str], str, bool]], paths: list[tuple[str, list[str]]]
) -> None:
    registered = registry()
    for namespace, pieces, methods, override in routes:
        registered.register_rest_route(
            namespace, "/" + "/".join(pieces), public(methods), override=override
        )
    for method, segments in paths:
        path = "/" + "/".join(segments)
        assert outcome(registered, method, path) == linear_match(registered, method, path), path
        found = registered.match_route(path)
        expected = next(
            (route for route in registered.routes.values() if route.match(path) is not None), None
        )
        assert (found[0] if found else None) is expected


def test_an_index_built_while_the_routes_changed_is_not_kept(monkeypatch: Any) -> None:
    """A thread building the route index while another activates a plugin (its routes added
    in between) must not leave behind an index without them."""
    found = registry()
    found.register_rest_route("base/v1", "/item", public())
    built = RouteIndex.__init__

    def build_then_interleave(self: RouteIndex, routes: Any) -> None:
        built(self, routes)
        monkeypatch.setattr(RouteIndex, "__init__", built)  # once
        found.register_rest_route("plugin/v1", "/thing", public())  # the other thread's change

    monkeypatch.setattr(RouteIndex, "__init__", build_then_interleave)
    found.match("GET", "/base/v1/item")  # builds the index; the plugin's routes come meanwhile
    assert not isinstance(found.match("GET", "/plugin/v1/thing"), RestError)
    found.remove_routes(["/plugin/v1/thing"])
    assert isinstance(found.match("GET", "/plugin/v1/thing"), RestError)


def test_removing_routes_leaves_the_dictionaries_readers_hold_unchanged() -> None:
    found = registry()
    found.register_rest_route("plugin/v1", "/thing", public())
    held_routes, held_namespaces = found.routes, found.namespaces
    found.remove_routes(["/plugin/v1/thing"])
    assert "/plugin/v1/thing" in held_routes  # a reader iterating them is never disturbed
    assert "plugin/v1" in held_namespaces
    assert "/plugin/v1/thing" not in found.routes
    assert "plugin/v1" not in found.namespaces
