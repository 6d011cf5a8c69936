"""What every ``site/v2`` controller shares: arguments, pagination, permissions, dates, and
what the post-type controllers (posts, pages, media) share on top: their collection arguments,
query, statuses, fields and links."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol
from urllib.parse import urlencode

from markupsafe import escape

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer, authorization_required_status
from sitecache.rest.collection_args import collection_params, context_param, id_list_param
from sitecache.rest.request_memo import shared_memo
from sitecache.schema import get_date_with_gmt, get_endpoint_args_for_schema, parse_date
from sitecache.site.content import ContentService, PostQuery
from sitecache.site.dates import rfc3339_local
from sitecache.site.models import Post

__all__ = [
    "CONTEXT_PARAM",
    "NAMESPACE",
    "CrudChecks",
    "CrudController",
    "CrudPermissions",
    "RoutedController",
    "add_item_links",
    "add_post_links",
    "check_statuses",
    "collection_params",
    "context_param",
    "created",
    "deleted",
    "denied",
    "edit_context_check",
    "id_list_param",
    "id_param",
    "int_list",
    "int_param",
    "order_params",
    "page_args",
    "paginated",
    "paginated_posts",
    "path_id",
    "post_collection_params",
    "post_fields",
    "post_query",
    "raw_text",
    "read_post",
    "register_crud_routes",
    "requested_statuses",
    "rest_dates",
    "timestamp_from_request",
    "timestamp_param",
    "title_field",
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


_POSTS: Final = "site_posts"
"""The key in the shared memo of a request of the posts read for it, by id."""


def read_post(request: RestRequest, content: ContentService, post_id: int) -> Post | None:
    """The post ``post_id`` as the store has it, read once per request (``None``: no post).

    The permission callback, the handler, the ``Allow`` header's other permission callbacks
    and the target hints of the answer's ``self`` link all ask for the same post: the first
    read is kept in the memo the request shares with its internal requests (`shared_memo`:
    state of the request objects, gone with them), and read again once a write committed
    since (the content service's ``generation`` moved), so what runs after a handler changed
    the post judges it as it now is.
    """
    posts: dict[int, tuple[int, Post | None]] = shared_memo(request).setdefault(_POSTS, {})
    generation = content.generation
    known = posts.get(post_id)
    if known is not None and known[0] == generation:
        return known[1]
    post = content.get_post(post_id)
    posts[post_id] = (generation, post)
    return post


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
    (keeping the request's query string).

    Raises:
        RestError: 400 ``invalid_page_code`` for a page past the end, unless ``check_page``
            is false (the caller checked it its own way).
    """
    pages = math.ceil(total / per_page) if per_page else 0
    if check_page and page > max(pages, 1):
        raise RestError(
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
) -> int | None:
    """The UTC timestamp a write asks for (``date_gmt`` wins over ``date``), ``None`` if none.

    Raises:
        RestError: 400 ``rest_invalid_date`` when the date given is not one.
    """
    for key, is_utc in ((gmt_key, True), (local_key, False)):
        value = request.get_param(key)
        if value is None:
            continue
        dates = get_date_with_gmt(value, is_utc, timezone=content.timezone())
        stamp = False if dates is None else parse_date(dates[1])
        if isinstance(stamp, bool):
            raise RestError("rest_invalid_date", "Invalid date.", {"status": 400})
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


# ---------------------------------------------------------------- post-type controllers
def post_collection_params(
    *,
    orderby: list[str],
    statuses: list[str],
    default_status: str,
    date_words: str,
    filters: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The collection arguments of a post type: `collection_params`, then ``after`` and
    ``before`` (described as "a given ``date_words`` date"), ``author``, ``author_exclude``,
    ``exclude``, ``include``, ``order``, ``orderby`` (one of ``orderby``, ``date`` by
    default), the type's own ``filters``, ``slug`` and ``status`` (some of ``statuses``,
    ``default_status`` by default), in that order."""
    params = collection_params()
    for name, when in (("after", "after"), ("before", "before")):
        params[name] = {
            "description": f"Limit response to posts published {when} a given {date_words} date.",
            "type": "string",
            "format": "date-time",
        }
    params.update(
        {
            "author": id_list_param("Limit result set to posts assigned to specific authors."),
            "author_exclude": id_list_param(
                "Ensure result set excludes posts assigned to specific authors."
            ),
            "exclude": id_list_param("Ensure result set excludes specific IDs."),
            "include": id_list_param("Limit result set to specific IDs."),
            **order_params(orderby, default="date", noun="post"),
            **(filters or {}),
            "slug": {
                "description": "Limit result set to posts with one or more specific slugs.",
                "type": "array",
                "items": {"type": "string"},
            },
            "status": {
                "default": default_status,
                "description": "Limit result set to posts assigned one or more statuses.",
                "type": "array",
                "items": {"enum": statuses, "type": "string"},
            },
        }
    )
    return params


def requested_statuses(request: RestRequest, default: str) -> tuple[str, ...]:
    """The statuses a post-type collection request asks for (``default`` when none)."""
    statuses = request.get_param("status")
    return tuple(statuses) if isinstance(statuses, list) else (str(statuses or default),)


def check_statuses(
    request: RestRequest, statuses: tuple[str, ...], capability_of: Callable[[str], str | None]
) -> None:
    """Pass when the caller has the capability each of ``statuses`` needs (``capability_of``
    names it; ``None``: the status is public).

    Raises:
        RestError: 400 ``rest_invalid_param`` on ``status`` otherwise.
    """
    for status in statuses:
        needed = capability_of(status)
        if needed is not None and not request.user.can(needed):
            raise RestError(
                "rest_invalid_param",
                "Invalid parameter(s): status",
                {"status": 400, "params": {"status": "Status is forbidden."}},
            )


def post_query(
    request: RestRequest, types: tuple[str, ...], statuses: tuple[str, ...]
) -> PostQuery:
    """The query of a post-type collection request: posts of ``types`` in ``statuses``, with
    the filters every post type takes from the request (``author``, ``author_exclude``,
    ``include``, ``exclude``, ``slug``, ``search``, ``after``, ``before``, ``orderby``,
    ``order``, ``page``, ``per_page``, ``offset``); a type adds its own with
    `dataclasses.replace`."""
    page, per_page, offset = page_args(request)
    return PostQuery(
        types=types,
        statuses=statuses,
        authors=int_list(request.get_param("author")),
        authors_exclude=int_list(request.get_param("author_exclude")),
        include=int_list(request.get_param("include")),
        exclude=int_list(request.get_param("exclude")),
        slugs=tuple(str(s) for s in request.get_param("slug") or ()),
        search=str(request.get_param("search") or ""),
        after=timestamp_param(request.get_param("after")),
        before=timestamp_param(request.get_param("before")),
        orderby=str(request.get_param("orderby") or "date"),
        order=str(request.get_param("order") or "desc"),
        page=page,
        per_page=per_page,
        offset=offset,
    )


def paginated_posts(
    server: RestServer, request: RestRequest, data: Any, total: int, query: PostQuery
) -> RestResponse:
    """`paginated` for a post-type collection: ``query``'s page and page size, and
    ``rest_post_invalid_page_number`` for a page past the end."""
    return paginated(
        server,
        request,
        data,
        total,
        query.per_page,
        query.page,
        "rest_post_invalid_page_number",
    )


def title_field(post: Post) -> dict[str, str]:
    """A post's ``title``: raw, and rendered (escaped)."""
    return {"raw": post.title, "rendered": str(escape(post.title))}


def post_fields(
    post: Post, content: ContentService, *, guid: str, link: str, texts: Mapping[str, Any]
) -> dict[str, Any]:
    """The fields every post type answers with, in WordPress's order: ``id``, the dates,
    ``guid``, ``slug``, ``status``, ``type``, ``link``, then the type's ``texts`` (its
    ``title``, ``content``…), then ``author``, ``featured_media``, the comment and ping
    statuses, ``template`` and ``meta``."""
    date, date_gmt = rest_dates(post.date_gmt, content)
    modified, modified_gmt = rest_dates(post.modified_gmt, content)
    return {
        "id": post.id,
        "date": date,
        "date_gmt": date_gmt,
        "guid": {"rendered": guid, "raw": guid},
        "modified": modified,
        "modified_gmt": modified_gmt,
        "slug": post.slug,
        "status": post.status,
        "type": post.type,
        "link": link,
        **texts,
        "author": post.author,
        "featured_media": post.featured_media,
        "comment_status": post.comment_status,
        "ping_status": post.ping_status,
        "template": "",
        "meta": {},
    }


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


def add_post_links(server: RestServer, response: RestResponse, rest_base: str, post: Post) -> None:
    """A post's (page's, attachment's) first links: ``self``, ``collection``, ``about`` (its
    type), the embeddable ``author`` when it has one and the embeddable ``replies`` (its
    comments)."""
    add_item_links(server, response, rest_base, post.id, author=post.author, about=post.type)
    response.add_link(
        "replies",
        server.rest_url(f"/{NAMESPACE}/comments?post={post.id}"),
        {"embeddable": True},
    )
