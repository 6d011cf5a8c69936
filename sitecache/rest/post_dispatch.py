"""`PostDispatchFilters`: the server's own ``rest_post_dispatch`` filters (part of `RestServer`).

After a handler answered, WordPress's server drops the fields the route's schema hides in the
request's ``context``, sends the ``Allow`` header of the matched route (the methods whose
permission callback lets the caller in) and applies ``_fields``. `post_dispatch` runs them in
that order, directly when no plugin added a filter of its own, else through the hooks.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

from sitecache.hooks import Hooks
from sitecache.rest.request import RestRequest
from sitecache.rest.request_memo import check_permission
from sitecache.rest.response import RestResponse
from sitecache.rest.routes import RouteRegistry
from sitecache.schema import filter_response_by_context, filter_response_fields

if TYPE_CHECKING:
    from sitecache.rest.server import RestServer

__all__ = ["PostDispatchFilters"]

logger = logging.getLogger("sitecache.rest")


class PostDispatchFilters:
    """The ``rest_post_dispatch`` callbacks of `RestServer`, which inherits them."""

    hooks: Hooks
    registry: RouteRegistry

    if TYPE_CHECKING:

        def runs_only_own(self, name: str) -> bool: ...

    def allowed_methods(self, route_pattern: str, request: RestRequest) -> list[str]:
        """Methods of the route whose permission callback returns exactly ``True`` for
        ``request`` (methods without a permission callback count), in first-seen order."""
        route = self.registry.routes.get(route_pattern)
        if route is None:
            return []
        verdicts: dict[str, bool] = {}
        for handler in route.handlers:
            callback = handler.get("permission_callback")
            allowed = True
            if callback:
                # One verdict per handler, for each of its methods (as WordPress asks).
                try:
                    allowed = check_permission(callback, request) is True
                except Exception:
                    logger.exception("Permission callback failed while computing Allow")
                    allowed = False
            for method in handler["methods"]:
                verdicts[method] = allowed
        return [method.upper() for method, allowed in verdicts.items() if allowed]

    def send_allow_header(
        self, response: RestResponse, server: RestServer, request: RestRequest
    ) -> RestResponse:
        """``rest_post_dispatch`` callback: the ``Allow`` header of the matched route."""
        if not isinstance(response, RestResponse) or not response.get_matched_route():
            return response
        allowed = self.allowed_methods(response.get_matched_route(), request)
        if allowed:
            response.header("Allow", ", ".join(allowed))
        return response

    def filter_response_by_context(
        self, response: RestResponse, server: RestServer, request: RestRequest
    ) -> RestResponse:
        """``rest_post_dispatch`` callback: drop fields the route's schema hides in ``context``.

        Applies when the matched route publishes a ``schema`` and the request has a ``context``
        (given or defaulted); a list response is filtered item by item against the schema.
        Errors and OPTIONS answers (route descriptions) are left alone.
        """
        if not isinstance(response, RestResponse) or response.is_error():
            return response
        if request.get_method() == "OPTIONS":
            return response
        context = request.get_param("context")
        route = self.registry.routes.get(response.get_matched_route())
        if not isinstance(context, str) or route is None:
            return response
        schema_callback = route.options.get("schema")
        if schema_callback is None:
            return response
        schema = schema_callback() if callable(schema_callback) else schema_callback
        if not isinstance(schema, Mapping):
            return response
        data = response.get_data()
        if isinstance(data, list) and schema.get("type") != "array":
            data = [filter_response_by_context(item, schema, context) for item in data]
        else:
            data = filter_response_by_context(data, schema, context)
        response.set_data(data)
        return response

    def filter_response_fields(
        self, response: RestResponse, server: RestServer, request: RestRequest
    ) -> RestResponse:
        """``rest_post_dispatch`` callback: apply ``_fields`` (never to errors)."""
        if not isinstance(response, RestResponse) or response.is_error():
            return response
        fields = request.get_param("_fields")
        if fields is None:
            return response
        response.set_data(filter_response_fields(response.get_data(), fields))
        return response

    def post_dispatch(self, response: RestResponse, request: RestRequest) -> RestResponse:
        """Run the ``rest_post_dispatch`` filters (Allow header, ``_fields``, plugins')."""
        server = cast("RestServer", self)
        if self.runs_only_own("rest_post_dispatch"):
            result = self.filter_response_by_context(response, server, request)
            result = self.send_allow_header(result, server, request)
            result = self.filter_response_fields(result, server, request)
        else:
            result = self.hooks.apply_filters("rest_post_dispatch", response, server, request)
        return result if isinstance(result, RestResponse) else response
