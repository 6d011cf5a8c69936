"""What every ``site/v2`` controller shares: arguments, pagination, permissions, dates, links
and the routes of a collection and its items (the post types share more:
`sitecache.site.rest.post_types`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol, TypeVar, cast

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer, authorization_required_status
from sitecache.rest.collection_args import collection_params, context_param, id_list_param
from sitecache.rest.pagination import check_page_number, page_count, paginated_response
from sitecache.schema import get_date_with_gmt, get_endpoint_args_for_schema, parse_date
from sitecache.site.content import ContentService
from sitecache.site.dates import rfc3339_local

__all__ = [
    "CONTEXT_PARAM",
    "NAMESPACE",
    "CollectionController",
    "CrudChecks",
    "CrudController",
    "CrudPermissions",
    "RoutedController",
    "add_item_links",
    "collection_params",
    "context_param",
    "created",
    "date_field",
    "deleted",
    "denied",
    "edit_context_check",
    "id_list_param",
    "id_param",
    "int_columns",
    "int_list",
    "int_param",
    "listing_args",
    "order_params",
    "page_args",
    "paginated",
    "path_id",
    "raw_text",
    "register_crud_routes",
    "require_capability",
    "require_force",
    "require_found",
    "rest_dates",
    "timestamp_param",
]

NAMESPACE: Final = "site/v2"
T = TypeVar("T")
CONTEXT_PARAM: Final = context_param()


def int_list(value: Any) -> tuple[int, ...]:
    """A sanitized integer-array argument as a tuple (``()`` when absent)."""
    if isinstance(value, list | tuple):
        return tuple(
            int(item) for item in value if isinstance(item, int) and not isinstance(item, bool)
        )
    return ()


#: The largest id the store holds (SQLite's and PostgreSQL's 64-bit integers).
MAX_ID: Final = 2**63 - 1


def path_id(value: Any) -> int:
    """An id from the path or the query (an integer argument, or the digits of a placeholder
    no argument declares), clamped to 64 bits as the store's integers; 0 when it is neither.

    Never raises: the query's ``id`` overrides the path's (WordPress reads GET before the URL),
    so a permission callback may see ``?id=x`` before validation refuses it (the ``Allow``
    header is computed for error answers too); 0 names no row, as WordPress's ``(int)`` cast.
    """
    if isinstance(value, bool):
        return 0
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    return min(value, MAX_ID) if isinstance(value, int) else 0


def id_param(request: RestRequest, name: str = "id") -> int:
    """The id the request names in ``name`` (`path_id` of its value: 0 when not an id)."""
    return path_id(request.get_param(name))


def int_columns(request: RestRequest, columns: Iterable[tuple[str, str]]) -> dict[str, int]:
    """The integer arguments ``request`` gives among ``columns`` (``(argument, column)``
    pairs), by column; an argument absent or not an integer is left out."""
    given = {column: int_param(request.get_param(name)) for name, column in columns}
    return {column: value for column, value in given.items() if value is not None}


def int_param(value: Any) -> int | None:
    """An integer argument's value, ``None`` when absent or not an integer (a bool is not)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def raw_text(value: Any) -> str | None:
    """A rendered-or-raw text argument's raw text (a string as given, an object's ``raw``);
    ``None`` when absent or not text."""
    if isinstance(value, dict):
        value = value.get("raw")
    return value if isinstance(value, str) else None


def timestamp_param(value: Any) -> int | None:
    """The UTC timestamp of a ``date-time`` argument (``after``, ``before``), ``None`` when
    absent or not a date."""
    if not isinstance(value, str):
        return None
    stamp = parse_date(value)
    return None if isinstance(stamp, bool) else int(stamp)


def page_args(request: RestRequest) -> tuple[int, int, int | None]:
    """``(page, per_page, offset)`` of a collection request (1, 10 and ``None`` when absent)."""
    offset = request.get_param("offset")
    return (
        int(request.get_param("page") or 1),
        int(request.get_param("per_page") or 10),
        int(offset) if isinstance(offset, int) else None,
    )


def listing_args(request: RestRequest, *, orderby: str, order: str = "desc") -> dict[str, Any]:
    """The arguments every listing query takes from a collection request, by query field:
    ``search``, ``include``, ``exclude``, ``orderby`` (``orderby`` when absent), ``order``
    (``order`` when absent), ``page``, ``per_page`` and ``offset`` (`page_args`)."""
    page, per_page, offset = page_args(request)
    return {
        "search": str(request.get_param("search") or ""),
        "include": int_list(request.get_param("include")),
        "exclude": int_list(request.get_param("exclude")),
        "orderby": str(request.get_param("orderby") or orderby),
        "order": str(request.get_param("order") or order),
        "page": page,
        "per_page": per_page,
        "offset": offset,
    }


def order_params(orderby: list[str], *, default: str, noun: str) -> dict[str, Any]:
    """``order`` (``asc`` or ``desc``, ``desc`` by default) and ``orderby`` (one of
    ``orderby``, ``default`` by default) of a collection of ``noun`` items."""
    return {
        "order": {
            "description": "Order sort attribute ascending or descending.",
            "type": "string",
            "default": "desc",
            "enum": ["asc", "desc"],
        },
        "orderby": {
            "description": f"Sort collection by {noun} attribute.",
            "type": "string",
            "default": default,
            "enum": orderby,
        },
    }


def denied(request: RestRequest, code: str, message: str) -> RestError:
    """A permission error: 401 for the anonymous caller, 403 for a logged-in one."""
    return RestError(code, message, {"status": authorization_required_status(request.user)})


def require_capability(request: RestRequest, capability: str, code: str, message: str) -> bool:
    """``True`` when the caller has ``capability`` (a permission callback's answer).

    Raises:
        RestError: ``code`` with ``message`` (401 for the anonymous caller, 403 for a
            logged-in one) otherwise.
    """
    if not request.user.can(capability):
        raise denied(request, code, message)
    return True


def require_found(item: T | None, code: str, message: str) -> T:
    """``item``, looked up by the id a request names.

    Raises:
        RestError: 404 ``code`` with ``message`` when there is none (``None``).
    """
    if item is None:
        raise RestError(code, message, {"status": 404})
    return item


def require_force(request: RestRequest, message: str) -> None:
    """Pass when the request deletes for good (``force=true``).

    Raises:
        RestError: 501 ``rest_trash_not_supported`` with ``message`` otherwise (the resource
            has no trash).
    """
    if not request.get_param("force"):
        raise RestError("rest_trash_not_supported", message, {"status": 501})


def edit_context_check(request: RestRequest, capability: str, *args: object) -> None:
    """Pass when ``context=edit`` is not asked or the caller has ``capability``.

    Raises:
        RestError: ``rest_forbidden_context`` (401 or 403) otherwise.
    """
    if request.get_param("context") == "edit" and not request.user.can(capability, *args):
        raise denied(
            request,
            "rest_forbidden_context",
            "Sorry, you are not allowed to edit posts in this post type.",
        )


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
) -> RestResponse:
    """A collection answer with ``X-Site-Total``, ``X-Site-TotalPages`` and ``Link`` prev/next
    (keeping the request's query string): `sitecache.rest.pagination`.

    Raises:
        RestError: 400 ``invalid_page_code`` for a page past the end, unless ``check_page``
            is false (the caller checked it its own way).
    """
    if check_page:
        check_page_number(page, max(page_count(total, per_page), 1), invalid_page_code)
    return paginated_response(server, request, data, total, per_page, page)


def rest_dates(timestamp: int, content: ContentService) -> tuple[str, str]:
    """``(date, date_gmt)`` of a UTC timestamp: local and UTC, ``YYYY-MM-DDTHH:MM:SS``."""
    local = datetime.fromtimestamp(timestamp, content.timezone())
    return rfc3339_local(local), rfc3339_local(datetime.fromtimestamp(timestamp, UTC))


def date_field(request: RestRequest, content: ContentService) -> dict[str, int]:
    """``{"date_gmt": <UTC timestamp>}`` of the date a write asks for (``date_gmt`` wins over
    ``date``), ``{}`` when it asks for none.

    Raises:
        RestError: 400 ``rest_invalid_date`` when the date given is not one.
    """
    for key, is_utc in (("date_gmt", True), ("date", False)):
        value = request.get_param(key)
        if value is None:
            continue
        dates = get_date_with_gmt(value, is_utc, timezone=content.timezone())
        stamp = False if dates is None else parse_date(dates[1])
        if isinstance(stamp, bool):
            raise RestError("rest_invalid_date", "Invalid date.", {"status": 400})
        return {"date_gmt": int(stamp)}
    return {}


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


class CrudChecks(Protocol):
    """The five permission checks of a collection-and-item controller, by WordPress's names."""

    def get_items_permissions_check(self, request: RestRequest) -> bool | RestError: ...
    def create_item_permissions_check(self, request: RestRequest) -> bool | RestError: ...
    def get_item_permissions_check(self, request: RestRequest) -> bool | RestError: ...
    def update_item_permissions_check(self, request: RestRequest) -> bool | RestError: ...
    def delete_item_permissions_check(self, request: RestRequest) -> bool | RestError: ...


@dataclass(frozen=True)
class CrudPermissions:
    """The permission callback of each of the five collection and item endpoints."""

    list: PermissionCheck
    create: PermissionCheck
    read: PermissionCheck
    update: PermissionCheck
    delete: PermissionCheck

    @classmethod
    def of(cls, checks: CrudChecks) -> CrudPermissions:
        """The five checks of a controller that names them as WordPress does."""
        return cls(
            list=checks.get_items_permissions_check,
            create=checks.create_item_permissions_check,
            read=checks.get_item_permissions_check,
            update=checks.update_item_permissions_check,
            delete=checks.delete_item_permissions_check,
        )


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


class CollectionController(RoutedController):
    """A controller of one collection, ``/<rest_base>``, and its items, described by
    ``schema``, with the five handlers of a `CrudController`."""

    rest_base: str
    schema: dict[str, Any]

    def collection_params(self) -> dict[str, Any]:
        """The collection's GET arguments."""
        raise NotImplementedError

    def register_collection(
        self,
        server: RestServer,
        permissions: CrudPermissions,
        *,
        item_noun: str,
        force_description: str = "Whether to bypass Trash and force deletion.",
        read_args: dict[str, Any] | None = None,
    ) -> None:
        """Learn ``server`` and register the collection and its items there
        (`register_crud_routes`, ``OPTIONS`` answering ``self.schema``)."""
        self._server = server
        register_crud_routes(
            server,
            f"/{self.rest_base}",
            cast(CrudController, self),
            permissions,
            schema=lambda: self.schema,
            collection_args=self.collection_params(),
            item_noun=item_noun,
            force_description=force_description,
            read_args=read_args,
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


def add_item_links(
    server: RestServer,
    response: RestResponse,
    rest_base: str,
    item_id: int,
    *,
    author: int,
    about: str | None = None,
) -> None:
    """An item's ``self`` and ``collection`` links below ``/<namespace>/<rest_base>``, then
    ``about`` (``types/<about>``) when given, then the embeddable ``author`` when there is
    one (``author`` is a user id, 0 for none)."""
    rest = server.rest_url
    base = f"/{NAMESPACE}/{rest_base}"
    response.add_link("self", rest(f"{base}/{item_id}"))
    response.add_link("collection", rest(base))
    if about is not None:
        response.add_link("about", rest(f"/{NAMESPACE}/types/{about}"))
    if author:
        response.add_link("author", rest(f"/{NAMESPACE}/users/{author}"), {"embeddable": True})
