"""What the post-type controllers of ``site/v2`` share (posts, pages, media): their collection
arguments, query, statuses, fields and links, and the post an item request names, read once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from markupsafe import escape

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.rest.collection_args import collection_params, id_list_param
from sitecache.rest.request_memo import shared_memo
from sitecache.site.content import ContentService, PostQuery
from sitecache.site.models import Post
from sitecache.site.rest.base import (
    NAMESPACE,
    add_item_links,
    int_list,
    listing_args,
    order_params,
    paginated,
    rest_dates,
    timestamp_param,
)

__all__ = [
    "add_post_links",
    "check_statuses",
    "paginated_posts",
    "post_collection_params",
    "post_fields",
    "post_query",
    "read_post",
    "requested_statuses",
    "title_field",
]

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
    return PostQuery(
        types=types,
        statuses=statuses,
        authors=int_list(request.get_param("author")),
        authors_exclude=int_list(request.get_param("author_exclude")),
        slugs=tuple(str(s) for s in request.get_param("slug") or ()),
        after=timestamp_param(request.get_param("after")),
        before=timestamp_param(request.get_param("before")),
        **listing_args(request, orderby="date"),
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
