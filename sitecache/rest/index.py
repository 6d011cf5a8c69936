"""Describing routes: route data, the API index, namespace indexes and OPTIONS responses.

Mirrors ``get_data_for_route``, ``get_index``, ``get_namespace_index`` and
``rest_handle_options_request``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from sitecache.errors import RestError
from sitecache.rest.request import RestRequest
from sitecache.rest.response import RestResponse
from sitecache.rest.routes import Route
from sitecache.schema.arguments import ALLOWED_SCHEMA_KEYWORDS
from sitecache.schema.response_filters import is_field_included, parse_fields

if TYPE_CHECKING:
    from sitecache.rest.server import RestServer

__all__ = [
    "FRONT_PAGE_DEFAULTS",
    "cached_data_for_routes",
    "get_data_for_route",
    "get_data_for_routes",
    "get_index",
    "get_namespace_index",
    "handle_options_request",
]

_ALLOWED_ARG_KEYS = frozenset(ALLOWED_SCHEMA_KEYWORDS)
FRONT_PAGE_DEFAULTS: Final[Mapping[str, Any]] = {
    "page_for_posts": 0,
    "page_on_front": 0,
    "show_on_front": "posts",
}
"""The index's front-page keys, in WordPress's order, with their values on a site that shows
its latest posts (`RestServer.front_page` gives the site's own)."""
CACHE_LIMIT: Final = 32
"""Most cached route descriptions kept per server (one per context, host and namespace)."""


def get_data_for_route(
    server: RestServer, route: Route, context: str = "view"
) -> dict[str, Any] | None:
    """``{namespace, methods, endpoints[, schema][, _links]}`` of one route, ``None`` if hidden.

    Handlers with ``show_in_index`` false are left out; argument definitions keep only the
    allowed schema keywords plus ``required``; the resource ``schema`` appears in the ``help``
    context; routes without variables get a ``self`` link.
    """
    data: dict[str, Any] = {"namespace": route.namespace, "methods": [], "endpoints": []}
    allow_batch = route.options.get("allow_batch", False)
    schema = route.options.get("schema")
    if schema is not None and context == "help":
        data["schema"] = schema() if callable(schema) else schema
    for handler in route.handlers:
        if not handler.get("show_in_index"):
            continue
        methods = list(handler["methods"])
        data["methods"].extend(methods)
        endpoint: dict[str, Any] = {"methods": methods}
        batch = handler.get("allow_batch", allow_batch)
        if batch:
            endpoint["allow_batch"] = batch
        args: dict[str, Any] = {}
        for name, options in (handler.get("args") or {}).items():
            if isinstance(options, str):
                options = {options: 0}
            elif not isinstance(options, Mapping):
                options = {}
            described = {key: value for key, value in options.items() if key in _ALLOWED_ARG_KEYS}
            described["required"] = bool(options.get("required"))
            args[name] = described
        endpoint["args"] = args
        data["endpoints"].append(endpoint)
        if not route.has_variables:
            data["_links"] = {"self": [{"href": server.rest_url(route.pattern)}]}
    if not data["methods"]:
        return None
    if "schema" in data:  # WordPress orders keys namespace, methods, endpoints, schema, _links
        data["schema"] = data.pop("schema")
        if "_links" in data:
            data["_links"] = data.pop("_links")
    return server.hooks.apply_filters("rest_route_data", data, route, context)  # type: ignore[no-any-return]


def get_data_for_routes(
    server: RestServer, routes: Mapping[str, Route], context: str = "view"
) -> dict[str, Any]:
    """Route data for every visible route, keyed by route pattern."""
    available: dict[str, Any] = {}
    for pattern, route in routes.items():
        data = get_data_for_route(server, route, context)
        if data is not None:
            available[pattern] = data
    return available


def cached_data_for_routes(
    server: RestServer, namespace: str | None, context: str
) -> dict[str, Any]:
    """`get_data_for_routes` of every route (or one namespace's), cached on the server.

    The cache is keyed by the registry's version (any route change invalidates it), the
    namespace, the context and the request's host and scheme (the ``self`` links depend on
    them). It is bypassed when it could change the answer: in the ``help`` context (route
    schemas come from callbacks) and while a ``rest_route_data`` or ``rest_url`` filter is
    registered (a filter may depend on the request). The caller gets its own top-level dict;
    the route descriptions inside are shared and must not be changed in place.
    """
    hooks = server.hooks
    registry = server.registry
    if context == "help" or hooks.has_filter("rest_route_data") or hooks.has_filter("rest_url"):
        return get_data_for_routes(server, registry.get_routes(namespace), context)
    cache = server.index_cache
    key = (registry.version, namespace, context, server.request_context)
    data = cache.get(key)
    if data is None:
        data = cache.keep(key, get_data_for_routes(server, registry.get_routes(namespace), context))
    return dict(data)


def get_index(server: RestServer, request: RestRequest) -> RestResponse:
    """The API index (``GET /``): site data, namespaces, authentication and every route."""
    context = request.get_param("context")
    if not isinstance(context, str):
        context = "view"
    settings = server.settings
    version = server.registry.version
    given = server.front_page()
    front_page = {name: given.get(name, value) for name, value in FRONT_PAGE_DEFAULTS.items()}
    available: dict[str, Any] = {
        "name": settings.site_name,
        "description": settings.site_description,
        "url": server.home_url(),
        "home": server.home_url(),
        "gmt_offset": settings.gmt_offset,
        "timezone_string": settings.timezone_string,
        **front_page,
        "namespaces": list(server.registry.namespaces),
        "authentication": server.hooks.apply_filters("rest_authentication_index", {}, request),
        "routes": cached_data_for_routes(server, None, context),
    }
    response = RestResponse(available)
    given_fields = request.get_param("_fields")
    fields = parse_fields(given_fields or "")
    if not fields:
        fields.append("_links")
    embed = request.has_param("_embed")
    if embed:
        fields.append("_embedded")
    if is_field_included("_links", fields) or is_field_included("_embedded", fields):
        response.add_link("help", settings.help_url)
    if given_fields is None and not embed and context != "help":
        # The body can be kept (sitecache.rest.index_body): it is decided by these alone.
        shape = (version, settings, server.request_context, context, *front_page.values())
        server.index_bodies.remember(request, available, shape)
    result = server.hooks.apply_filters("rest_index", response, request)
    return result if isinstance(result, RestResponse) else response


def get_namespace_index(server: RestServer, request: RestRequest) -> RestResponse | RestError:
    """The index of one namespace (``GET /<namespace>``): its routes and an ``up`` link."""
    namespace = request.get_param("namespace")
    if not isinstance(namespace, str) or namespace not in server.registry.namespaces:
        return RestError(
            "rest_invalid_namespace",
            "The specified namespace could not be found.",
            {"status": 404},
        )
    context = request.get_param("context")
    data = {
        "namespace": namespace,
        "routes": cached_data_for_routes(
            server, namespace, context if isinstance(context, str) else "view"
        ),
    }
    response = RestResponse(data)
    response.add_link("up", server.rest_url("/"))
    result = server.hooks.apply_filters("rest_namespace_index", response, request)
    return result if isinstance(result, RestResponse) else response


def handle_options_request(result: Any, server: RestServer, request: RestRequest) -> Any:
    """``rest_pre_dispatch`` callback answering OPTIONS with the matched route's help data.

    No permission callback, validation or handler runs. An unknown route answers 200 with
    empty data.
    """
    if result or request.get_method() != "OPTIONS":
        return result
    response = RestResponse({})
    matched = server.registry.match_route(request.get_route())
    if matched is not None:
        route, params = matched
        if route.handlers:
            request.set_url_params(params)
            request.set_attributes(route.handlers[-1])
        response.set_data(get_data_for_route(server, route, "help"))
        response.set_matched_route(route.pattern)
    return response
