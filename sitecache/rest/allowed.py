"""The methods of a route a request may use: the ``Allow`` header and ``targetHints``.

Each handler's permission callback answers for all of that handler's methods; a method listed
by several handlers takes the verdict of the last one, and methods keep their first-seen order,
as WordPress's ``get_allowed_methods`` works it out. What that takes from the routes (the
callbacks, and per method the handler deciding it) is worked out once per route and kept until
the routes change.
"""

from __future__ import annotations

import logging
from typing import Any

from sitecache.rest.request import RestRequest
from sitecache.rest.request_memo import check_permission
from sitecache.rest.routes import RouteRegistry

__all__ = ["AllowedMethods"]

logger = logging.getLogger("sitecache.rest")

_Plan = tuple[tuple[Any, ...], tuple[tuple[str, int], ...]]
"""Per handler its permission callback; per method (first-seen order) the handler deciding it."""


class AllowedMethods:
    """The allowed methods of the routes of ``registry``.

    Args:
        registry: the routes; a change to them (its ``version``) drops what was kept.
    """

    def __init__(self, registry: RouteRegistry) -> None:
        self.registry = registry
        self._plans: tuple[int, dict[str, _Plan]] = (-1, {})

    def methods(self, route_pattern: str, request: RestRequest) -> list[str]:
        """Methods of the route whose permission callback returns exactly ``True`` for
        ``request`` (methods without a permission callback count), in first-seen order; none
        for an unknown route. A callback that raises counts as a refusal (logged)."""
        plan = self._plan(route_pattern)
        if plan is None:
            return []
        callbacks, methods = plan
        verdicts: list[bool] = []
        for callback in callbacks:
            allowed = True
            if callback:
                # One verdict per handler, for each of its methods (as WordPress asks).
                try:
                    allowed = check_permission(callback, request) is True
                except Exception:
                    logger.exception("Permission callback failed while computing Allow")
                    allowed = False
            verdicts.append(allowed)
        return [method for method, deciding in methods if verdicts[deciding]]

    def _plan(self, route_pattern: str) -> _Plan | None:
        """The route's permission callbacks and its methods with the handler deciding each,
        kept until the routes change (a plan built while they change is dropped next call)."""
        plans = self._plans
        if plans[0] != self.registry.version:
            plans = self._plans = (self.registry.version, {})
        plan = plans[1].get(route_pattern)
        if plan is None:
            route = self.registry.routes.get(route_pattern)
            if route is None:
                return None
            deciding: dict[str, int] = {}
            for number, handler in enumerate(route.handlers):
                for method in handler["methods"]:
                    deciding[method] = number
            plan = plans[1][route_pattern] = (
                tuple(handler.get("permission_callback") for handler in route.handlers),
                tuple((method.upper(), number) for method, number in deciding.items()),
            )
        return plan
