"""What every ``site/v2`` controller shares: arguments, pagination, permissions, dates."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol
from urllib.parse import urlencode

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer, authorization_required_status
from sitecache.rest.collection_args import collection_params, context_param, id_list_param
from sitecache.schema import get_date_with_gmt, get_endpoint_args_for_schema, parse_date
from sitecache.site.content import ContentService
from sitecache.site.dates import rfc3339_local

__all__ = [
    "CONTEXT_PARAM",
    "NAMESPACE",
    "CrudController",
    "CrudPermissions",
    "RoutedController",
    "collection_params",
    "context_param",
    "created",
    "deleted",
    "denied",
    "edit_context_check",
    "id_list_param",
    "int_list",
    "paginated",
    "register_crud_routes",
    "rest_dates",
    "timestamp_from_request",
]

NAMESPACE: Final = "site/v2"
CONTEXT_PARAM: Final = context_param()


def int_list(value: Any) -> tuple[int, ...]:
    """A sanitized integer-array argument as a tuple (``()`` when absent)."""
    if isinstance(value, list | tuple):
        return tuple(
            int(item) for item in value if isinstance(item, int) and not isinstance(item, bool)
        )
    return ()


def denied(request: RestRequest, code: str, message: str) -> RestError:
    """A permission error: 401 for the anonymous caller, 403 for a logged-in one."""
    return RestError(code, message, {"status": authorization_required_status(request.user)})


def edit_context_check(request: RestRequest, capability: str, *args: object) -> RestError | None:
    """``rest_forbidden_context`` when ``context=edit`` is asked without ``capability``."""
    if request.get_param("context") == "edit" and not request.user.can(capability, *args):
        return denied(
            request,
            "rest_forbidden_context",
            "Sorry, you are not allowed to edit posts in this post type.",
        )
    return None


def paginated(
    server: RestServer,
    request: RestRequest,
    data: Any,
    total: int,
    per_page: int,
    page: int,
    invalid_page_code: str = "rest_invalid_page_number",
    *,
    check_page: bool = True,
) -> RestResponse | RestError:
    """A collection answer with ``X-Site-Total``, ``X-Site-TotalPages`` and ``Link`` prev/next
    (keeping the request's query string); a page past the end is a 400 unless ``check_page``
    is false (the caller checked it its own way)."""
    pages = math.ceil(total / per_page) if per_page else 0
    if check_page and page > max(pages, 1):
        return RestError(
            invalid_page_code,
            "The page number requested is larger than the number of pages available.",
            {"status": 400},
        )
    response = RestResponse(data)
    response.header("X-Site-Total", str(total))
    response.header("X-Site-TotalPages", str(pages))
    base = server.rest_url(request.get_route())
    query = {
        key: value
        for key, value in request.get_query_params().items()
        if isinstance(value, str | int) and key != "rest_route"
    }
    links = []
    if page > 1:
        links.append(f'<{_with_query(base, {**query, "page": min(page - 1, pages)})}>; rel="prev"')
    if page < pages:
        links.append(f'<{_with_query(base, {**query, "page": page + 1})}>; rel="next"')
    if links:
        response.header("Link", ", ".join(links))
    return response


def _with_query(base: str, query: Mapping[str, Any]) -> str:
    return f"{base}{'&' if '?' in base else '?'}{urlencode(query)}"


def rest_dates(timestamp: int, content: ContentService) -> tuple[str, str]:
    """``(date, date_gmt)`` of a UTC timestamp: local and UTC, ``YYYY-MM-DDTHH:MM:SS``."""
    local = datetime.fromtimestamp(timestamp, content.timezone())
    return rfc3339_local(local), rfc3339_local(datetime.fromtimestamp(timestamp, UTC))


def timestamp_from_request(
    request: RestRequest,
    content: ContentService,
    local_key: str = "date",
    gmt_key: str = "date_gmt",
) -> int | RestError | None:
    """The UTC timestamp a write asks for (``date_gmt`` wins over ``date``), ``None`` if none."""
    for key, is_utc in ((gmt_key, True), (local_key, False)):
        value = request.get_param(key)
        if value is None:
            continue
        dates = get_date_with_gmt(value, is_utc, timezone=content.timezone())
        if dates is None:
            return RestError("rest_invalid_date", "Invalid date.", {"status": 400})
        stamp = parse_date(dates[1])
        if isinstance(stamp, bool):
            return RestError("rest_invalid_date", "Invalid date.", {"status": 400})
        return int(stamp)
    return None


def created(server: RestServer, response: RestResponse, path: str) -> RestResponse:
    """``response`` made a 201 whose ``Location`` is ``path`` below the namespace."""
    response.set_status(201)
    response.header("Location", server.rest_url(f"/{NAMESPACE}{path}"))
    return response


def deleted(server: RestServer, previous: RestResponse) -> RestResponse:
    """The answer to a permanent delete: ``{"deleted": true, "previous": <the item as data>}``
    (build it before deleting: ``previous`` is turned into data here)."""
    return RestResponse({"deleted": True, "previous": server.response_to_data(previous, False)})


class RoutedController:
    """A controller that learns its server when it registers its routes (``self._server``)."""

    _server: RestServer | None = None

    @property
    def server(self) -> RestServer:
        """The server the routes were registered on."""
        if self._server is None:
            raise RuntimeError("the routes are not registered yet")
        return self._server


class CrudController(Protocol):
    """The five handlers a collection-and-item controller answers with."""

    def get_items(self, request: RestRequest) -> RestResponse | RestError: ...
    def create_item(self, request: RestRequest) -> RestResponse | RestError: ...
    def get_item(self, request: RestRequest) -> RestResponse | RestError: ...
    def update_item(self, request: RestRequest) -> RestResponse | RestError: ...
    def delete_item(self, request: RestRequest) -> RestResponse | RestError: ...


PermissionCheck = Callable[[RestRequest], "bool | RestError"]


@dataclass(frozen=True)
class CrudPermissions:
    """The permission callback of each of the five collection and item endpoints."""

    list: PermissionCheck
    create: PermissionCheck
    read: PermissionCheck
    update: PermissionCheck
    delete: PermissionCheck


def register_crud_routes(
    server: RestServer,
    route: str,
    controller: CrudController,
    permissions: CrudPermissions,
    *,
    schema: Callable[[], dict[str, Any]],
    collection_args: dict[str, Any],
    item_noun: str,
    force_description: str = "Whether to bypass Trash and force deletion.",
    read_args: dict[str, Any] | None = None,
) -> None:
    """Register ``/<route>`` (GET list, POST create) and ``/<route>/(?P<id>[\\d]+)`` (GET,
    POST/PUT/PATCH, DELETE with ``force``), every endpoint batchable, both answering
    ``OPTIONS`` with ``schema()``; the route table every ``site/v2`` CRUD controller shares.
    ``read_args`` are the item GET's arguments beside ``context`` (the posts' ``password``)."""
    server.register_rest_route(
        NAMESPACE,
        route,
        [
            {
                "methods": "GET",
                "callback": controller.get_items,
                "permission_callback": permissions.list,
                "args": collection_args,
                "allow_batch": {"v1": True},
            },
            {
                "methods": "POST",
                "callback": controller.create_item,
                "permission_callback": permissions.create,
                "args": get_endpoint_args_for_schema(schema(), "POST"),
                "allow_batch": {"v1": True},
            },
        ],
        schema=schema,
    )
    server.register_rest_route(
        NAMESPACE,
        f"{route}/(?P<id>[\\d]+)",
        _item_handlers(controller, permissions, schema, force_description, read_args or {}),
        route_args={
            "id": {"description": f"Unique identifier for the {item_noun}.", "type": "integer"}
        },
        schema=schema,
    )


def _item_handlers(
    controller: CrudController,
    permissions: CrudPermissions,
    schema: Callable[[], dict[str, Any]],
    force_description: str,
    read_args: dict[str, Any],
) -> list[dict[str, Any]]:
    """The GET, POST/PUT/PATCH and DELETE (``force``) handlers of one item, batchable."""
    return [
        {
            "methods": "GET",
            "callback": controller.get_item,
            "permission_callback": permissions.read,
            "args": {"context": CONTEXT_PARAM, **read_args},
            "allow_batch": {"v1": True},
        },
        {
            "methods": "POST, PUT, PATCH",
            "callback": controller.update_item,
            "permission_callback": permissions.update,
            "args": get_endpoint_args_for_schema(schema(), "POST, PUT, PATCH"),
            "allow_batch": {"v1": True},
        },
        {
            "methods": "DELETE",
            "callback": controller.delete_item,
            "permission_callback": permissions.delete,
            "args": {
                "force": {
                    "type": "boolean",
                    "default": False,
                    "description": force_description,
                }
            },
            "allow_batch": {"v1": True},
        },
    ]
