"""``/site/v2/site-health/...``: the site-health tests (one route each, plus a list of them)
and ``directory-sizes``, for administrators (anonymous 401, others 403)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.rest.server import FORBIDDEN_MESSAGE
from sitecache.site.health import HEALTH_TESTS, HealthInputs, directory_sizes, run_health_test
from sitecache.site.rest.base import NAMESPACE, require_capability

__all__ = ["HEALTH_TEST_SCHEMA", "HealthRoutes"]

_READONLY: Final = {"readonly": True}

HEALTH_TEST_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-health-test",
    "type": "object",
    "properties": {
        "test": {"type": "string", "description": "The name of the test being run.", **_READONLY},
        "label": {"type": "string", "description": "A label describing the test.", **_READONLY},
        "status": {
            "type": "string",
            "description": "The status of the test.",
            "enum": ["good", "recommended", "critical"],
            **_READONLY,
        },
        "badge": {
            "type": "object",
            "description": "The category this test is grouped in.",
            "properties": {
                "label": {"type": "string", **_READONLY},
                "color": {
                    "type": "string",
                    "enum": ["blue", "orange", "red", "green", "purple", "gray"],
                    **_READONLY,
                },
            },
            **_READONLY,
        },
        "description": {
            "type": "string",
            "description": "What the test looks for and why it matters.",
            **_READONLY,
        },
        "actions": {
            "type": "string",
            "description": "HTML directing the user to where they can resolve the issue.",
            **_READONLY,
        },
    },
}

_SIZE: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", **_READONLY},
        "size": {"type": ["integer", "null"], **_READONLY},
        "files": {"type": "integer", **_READONLY},
        "truncated": {"type": "boolean", **_READONLY},
    },
    **_READONLY,
}

SIZES_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-health-directory-sizes",
    "type": "object",
    "properties": {"data_dir": _SIZE, "cache_dir": _SIZE, "uploads_dir": _SIZE},
}

TESTS_LIST_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "site-health-test-link",
    "type": "object",
    "properties": {
        "test": {"type": "string", **_READONLY},
        "href": {"type": "string", "format": "uri", **_READONLY},
    },
}


def _schema(schema: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    def callback() -> dict[str, Any]:
        return schema

    return callback


class HealthRoutes:
    """The site-health routes.

    Args:
        inputs: what the tests look at, built on demand by the app (its cache and config).
    """

    def __init__(self, inputs: Callable[[], HealthInputs]) -> None:
        self.inputs = inputs
        self.server: RestServer | None = None

    def register(self, server: RestServer) -> None:
        """Register the list, one route per test and ``directory-sizes`` (``rest_api_init``)."""
        self.server = server
        server.register_rest_route(
            NAMESPACE,
            "/site-health/tests",
            {"methods": "GET", "callback": self.list_tests, "permission_callback": self.check},
            schema=_schema(TESTS_LIST_SCHEMA),
        )
        for name in HEALTH_TESTS:
            server.register_rest_route(
                NAMESPACE,
                f"/site-health/tests/{name}",
                {
                    "methods": "GET",
                    "callback": self._test_callback(name),
                    "permission_callback": self.check,
                },
                schema=_schema(HEALTH_TEST_SCHEMA),
            )
        server.register_rest_route(
            NAMESPACE,
            "/site-health/directory-sizes",
            {"methods": "GET", "callback": self.sizes, "permission_callback": self.check},
            schema=_schema(SIZES_SCHEMA),
        )

    def check(self, request: RestRequest) -> bool:
        """Site health is for administrators (``manage_options``)."""
        return require_capability(request, "manage_options", "rest_forbidden", FORBIDDEN_MESSAGE)

    def _href(self, name: str) -> str:
        if self.server is None:
            raise RuntimeError("the site-health routes are not registered")
        return self.server.rest_url(f"/{NAMESPACE}/site-health/tests/{name}")

    def list_tests(self, request: RestRequest) -> list[dict[str, Any]]:
        """Every test's name and the URL answering it."""
        return [{"test": name, "href": self._href(name)} for name in HEALTH_TESTS]

    def _test_callback(self, name: str) -> Callable[[RestRequest], RestResponse]:
        def callback(request: RestRequest) -> RestResponse:
            response = RestResponse(run_health_test(name, self.inputs(), request.environ))
            response.add_link("self", self._href(name))
            return response

        return callback

    def sizes(self, request: RestRequest) -> dict[str, Any]:
        """The data, cache and uploads directories' sizes (bounded walks)."""
        return directory_sizes(self.inputs())
