"""``site/v2/posts/<parent>/revisions`` and ``site/v2/pages/<parent>/revisions``: the revisions
controller (WordPress's ``WP_REST_Revisions_Controller``).

Revisions are never public: reading them needs the right to edit the parent (``edit_post``,
else ``rest_cannot_read``: 401 anonymous, 403 logged in, even for a published parent),
deleting them the right to delete it, with ``force=true`` (no trash: 501
``rest_trash_not_supported``). Restoring one is an ordinary update of the post with the
revision's title, content and excerpt, which stores a revision itself.
"""

from __future__ import annotations

from typing import Any, Final

from markupsafe import escape

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.rest.pagination import check_page_number, paginated_response
from sitecache.site.content import ContentService, PostQuery
from sitecache.site.models import Post
from sitecache.site.render import excerpt_text, paragraphs
from sitecache.site.rest.base import (
    CONTEXT_PARAM,
    NAMESPACE,
    RoutedController,
    deleted,
    denied,
    int_list,
    path_id,
    require_force,
    rest_dates,
)
from sitecache.site.rest.posts import PostsController
from sitecache.site.rest.revisions_schema import (
    REVISION_ITEM_ARGS,
    revision_collection_params,
    revision_schema,
)

__all__ = ["RevisionsController", "relevance_rank", "revision_response"]

_ORDERBY: Final = {
    "date": "date",
    "id": "id",
    "include": "include",
    "slug": "slug",
    "title": "title",
    # Revisions have no slugs to list (no ``slug`` argument): WordPress falls back on the date.
    "include_slugs": "date",
    # Ranked in Python after the date order (`relevance_rank`).
    "relevance": "date",
}


def relevance_rank(post: Post, search: str) -> int:
    """How well ``post`` matches ``search`` (lower is better), WordPress's order for
    ``orderby=relevance``: the whole phrase in the title, every word in the title, any word
    in the title, the phrase in the excerpt, the phrase in the content, the rest."""
    phrase = search.lower().strip()
    words = phrase.split()
    title = post.title.lower()
    checks = (
        phrase in title,
        bool(words) and all(word in title for word in words),
        any(word in title for word in words),
        phrase in post.excerpt.lower(),
        phrase in post.content.lower(),
    )
    return next((rank for rank, hit in enumerate(checks) if hit), len(checks))


class RevisionsController(RoutedController):
    """The revision routes of one post type.

    Args:
        posts: the post type's controller (its capabilities, permalinks and schema).
        content: the content service.
    """

    def __init__(self, posts: PostsController, content: ContentService) -> None:
        self.posts = posts
        self.content = content
        self.post_type = posts.post_type
        self.rest_base = "revisions"
        self.parent_base = posts.rest_base
        self.schema = revision_schema(posts.post_type, posts.schema)

    # ------------------------------------------------------------------ registration
    def register(self, server: RestServer) -> None:
        """``/<base>/<parent>/revisions`` (GET) and ``.../revisions/<id>`` (GET, DELETE)."""
        self._server = server
        schema = self.get_schema
        route = f"/{self.parent_base}/(?P<parent>[\\d]+)/{self.rest_base}"
        server.register_rest_route(
            NAMESPACE,
            route,
            [
                {
                    "methods": "GET",
                    "callback": self.get_items,
                    "permission_callback": self.get_items_permissions_check,
                    "args": revision_collection_params(),
                }
            ],
            route_args={"parent": REVISION_ITEM_ARGS["parent"]},
            schema=schema,
        )
        server.register_rest_route(
            NAMESPACE,
            f"{route}/(?P<id>[\\d]+)",
            [
                {
                    "methods": "GET",
                    "callback": self.get_item,
                    "permission_callback": self.get_item_permissions_check,
                    "args": {"context": CONTEXT_PARAM},
                },
                {
                    "methods": "DELETE",
                    "callback": self.delete_item,
                    "permission_callback": self.delete_item_permissions_check,
                    "args": {
                        "force": {
                            "type": "boolean",
                            "default": False,
                            "description": (
                                "Required to be true, as revisions do not support trashing."
                            ),
                        }
                    },
                },
            ],
            route_args=REVISION_ITEM_ARGS,
            schema=schema,
        )

    def get_schema(self) -> dict[str, Any]:
        """The ``<type>-revision`` schema."""
        return self.schema

    # ------------------------------------------------------------------ lookups
    def get_parent(self, parent_id: Any) -> Post:
        """The post or page the revisions belong to.

        Raises:
            RestError: 404 ``rest_post_invalid_parent`` when there is none.
        """
        parent_id = path_id(parent_id)
        parent = self.content.get_post(parent_id) if parent_id > 0 else None
        if parent is None or parent.type != self.post_type:
            raise RestError("rest_post_invalid_parent", "Invalid post parent ID.", {"status": 404})
        return parent

    def get_revision(self, revision_id: Any) -> Post:
        """The revision (or autosave) with this id.

        Raises:
            RestError: 404 ``rest_post_invalid_id`` when there is none.
        """
        revision_id = path_id(revision_id)
        revision = self.content.get_post(revision_id) if revision_id > 0 else None
        if revision is None or revision.type != "revision":
            raise RestError("rest_post_invalid_id", "Invalid revision ID.", {"status": 404})
        return revision

    # ------------------------------------------------------------------ permissions
    def readable_parent(
        self, request: RestRequest, parent_id: Any, kind: str = "revisions"
    ) -> Post:
        """The parent post ``parent_id`` names, when the request may edit it.

        Raises:
            RestError: `get_parent`'s, or ``rest_cannot_read`` ("Sorry, you are not allowed to
                view <kind> of this post.") without the right to edit the parent.
        """
        parent = self.get_parent(parent_id)
        if not self.posts.can_edit(request, parent):
            message = f"Sorry, you are not allowed to view {kind} of this post."
            raise denied(request, "rest_cannot_read", message)
        return parent

    def get_items_permissions_check(self, request: RestRequest) -> bool:
        """The right to edit the parent (``rest_cannot_read`` otherwise)."""
        self.readable_parent(request, request.get_param("parent"))
        return True

    def get_item_permissions_check(self, request: RestRequest) -> bool:
        """As for the list."""
        return self.get_items_permissions_check(request)

    def delete_item_permissions_check(self, request: RestRequest) -> bool:
        """The right to delete the parent, an existing revision, and the right to read it."""
        parent = self.get_parent(request.get_param("parent"))
        if not self.posts.can_delete(request, parent):
            raise denied(
                request,
                "rest_cannot_delete",
                "Sorry, you are not allowed to delete revisions of this post.",
            )
        self.get_revision(request.get_param("id"))
        return self.get_items_permissions_check(request)

    # ------------------------------------------------------------------ reading
    def get_items(self, request: RestRequest) -> RestResponse:
        """The parent's revisions, newest first unless asked otherwise, with totals."""
        parent = self.get_parent(request.get_param("parent"))
        orderby = str(request.get_param("orderby") or "date")
        search = str(request.get_param("search") or "")
        include = int_list(request.get_param("include"))
        if orderby == "relevance" and not search:
            raise RestError(
                "rest_no_search_term_defined",
                "You need to define a search term to order by relevance.",
                {"status": 400},
            )
        if orderby == "include" and not include:
            raise RestError(
                "rest_orderby_include_missing_include",
                "You need to define an include parameter to order by include.",
                {"status": 400},
            )
        page = int(request.get_param("page") or 1)
        per_page_param = request.get_param("per_page")
        per_page = int(per_page_param) if isinstance(per_page_param, int) else None
        offset_param = request.get_param("offset")
        offset = max(int(offset_param), 0) if isinstance(offset_param, int) else 0
        revisions: list[Post] = []
        total = 0
        if self.content.revisions_to_keep() != 0:
            everything = PostQuery(
                types=("revision",),
                statuses=("inherit",),
                parents=(parent.id,),
                search=search,
                include=include,
                exclude=int_list(request.get_param("exclude")),
                orderby=_ORDERBY[orderby],
                order=str(request.get_param("order") or "desc"),
                per_page=max(self.content.count_revisions(parent.id), 1),
            )
            matches, total = self.content.query_posts(everything)
            if orderby == "relevance":
                matches.sort(key=lambda post: relevance_rank(post, search))
            start = offset if offset or per_page is None else (page - 1) * per_page
            revisions = matches[start : None if per_page is None else start + per_page]
        pages = (-(-total // per_page) if per_page else 1) if total else 0
        if total > 0:
            if offset >= total:
                raise RestError(
                    "rest_revision_invalid_offset_number",
                    "The offset number requested is larger than or equal to the number of "
                    "available revisions.",
                    {"status": 400},
                )
            if not offset:
                check_page_number(page, pages, "rest_revision_invalid_page_number")
        data = [
            self.server.response_to_data(self.prepare(item, request), False) for item in revisions
        ]
        return paginated_response(self.server, request, data, total, per_page or total, page)

    def get_item(self, request: RestRequest) -> RestResponse:
        """One revision of the parent."""
        parent = self.get_parent(request.get_param("parent"))
        revision = self.get_revision(request.get_param("id"))
        if revision.parent != parent.id:
            raise RestError(
                "rest_revision_parent_id_mismatch",
                f'The revision does not belong to the specified parent with id of "{parent.id}"',
                {"status": 404},
            )
        return self.prepare(revision, request)

    def prepare(self, revision: Post, request: RestRequest) -> RestResponse:
        """A revision's data (every field; the server filters by context) and its ``parent``
        link. An autosave that updated a draft is the post itself, in this shape."""
        return revision_response(self.server, self.content, self.parent_base, revision)

    # ------------------------------------------------------------------ deleting
    def delete_item(self, request: RestRequest) -> RestResponse:
        """Delete a revision for good (``force=true`` required)."""
        revision = self.get_revision(request.get_param("id"))
        require_force(request, "Revisions do not support trashing. Set 'force=true' to delete.")
        answer = deleted(self.server, self.prepare(revision, request))
        self.content.delete_revision(revision.id)
        return answer


def revision_response(
    server: RestServer, content: ContentService, parent_base: str, revision: Post
) -> RestResponse:
    """The data of a revision (or of a post shown as one) with its ``parent`` link."""
    date, date_gmt = rest_dates(revision.date_gmt, content)
    modified, modified_gmt = rest_dates(revision.modified_gmt, content)
    guid = f"{server.home_url()}/?p={revision.id}"
    data: dict[str, Any] = {
        "author": revision.author,
        "date": date,
        "date_gmt": date_gmt,
        "guid": {"rendered": guid, "raw": guid},
        "id": revision.id,
        "modified": modified,
        "modified_gmt": modified_gmt,
        "parent": revision.parent,
        "slug": revision.slug,
        "title": {"raw": revision.title, "rendered": str(escape(revision.title))},
        "content": {"raw": revision.content, "rendered": str(paragraphs(revision.content))},
        "excerpt": {
            "raw": revision.excerpt,
            "rendered": str(paragraphs(excerpt_text(revision.excerpt, revision.content))),
        },
        "meta": {},
    }
    response = RestResponse(data)
    if revision.parent:
        response.add_link(
            "parent", server.rest_url(f"/{NAMESPACE}/{parent_base}/{revision.parent}")
        )
    return response
