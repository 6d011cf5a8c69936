"""``site/v2/comments``: the comments controller (WordPress's shapes).

Approved comments on readable posts are public. Other statuses, ``context=edit`` and every
change of someone else's comment need ``moderate_comments``. Logged-in users may comment
(anonymous REST comments are off, as in WordPress: 401 ``rest_comment_login_required``);
their comment's status follows the moderation rules unless a moderator sets it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Final

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer, is_logged_in
from sitecache.site.content import CommentQuery, ContentService
from sitecache.site.models import COMMENT_STATUSES, Comment, Post
from sitecache.site.render import paragraphs
from sitecache.site.rest.base import (
    NAMESPACE,
    CrudPermissions,
    RoutedController,
    add_item_links,
    collection_params,
    created,
    date_field,
    deleted,
    denied,
    edit_context_check,
    id_list_param,
    id_param,
    int_columns,
    int_list,
    listing_args,
    order_params,
    paginated,
    raw_text,
    register_crud_routes,
    require_found,
    rest_dates,
)
from sitecache.site.rest.comment_status import requested_status, status_for_response

__all__ = ["COMMENT_SCHEMA", "CommentsController", "avatar_urls"]

_ALL: Final = ["view", "edit", "embed"]
_VIEW_EDIT: Final = ["view", "edit"]
AVATAR_SIZES: Final = (24, 48, 96)

COMMENT_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "comment",
    "type": "object",
    "properties": {
        "id": {
            "description": "Unique identifier for the comment.",
            "type": "integer",
            "context": _ALL,
            "readonly": True,
        },
        "author": {
            "description": "The ID of the user object, if author was a user.",
            "type": "integer",
            "context": _ALL,
        },
        "author_email": {
            "description": "Email address for the comment author.",
            "type": "string",
            "oneOf": [{"type": "string", "format": "email"}, {"type": "string", "enum": [""]}],
            "context": ["edit"],
        },
        "author_ip": {
            "description": "IP address for the comment author.",
            "type": "string",
            "oneOf": [{"type": "string", "format": "ip"}, {"type": "string", "enum": [""]}],
            "context": ["edit"],
        },
        "author_name": {
            "description": "Display name for the comment author.",
            "type": "string",
            "context": _ALL,
        },
        "author_url": {
            "description": "URL for the comment author.",
            "type": "string",
            "format": "uri",
            "context": _ALL,
        },
        "author_user_agent": {
            "description": "User agent for the comment author.",
            "type": "string",
            "context": ["edit"],
        },
        "content": {
            "description": "The content for the comment.",
            "type": "object",
            "context": _ALL,
            "arg_options": {
                "type": ["string", "object"],
                "properties": {"raw": {"type": "string"}},
            },
            "properties": {
                "raw": {
                    "description": "Content for the comment, as it exists in the database.",
                    "type": "string",
                    "context": ["edit"],
                },
                "rendered": {
                    "description": "HTML content for the comment, transformed for display.",
                    "type": "string",
                    "context": _ALL,
                    "readonly": True,
                },
            },
        },
        "date": {
            "description": "The date the comment was published, in the site's timezone.",
            "type": "string",
            "format": "date-time",
            "context": _ALL,
        },
        "date_gmt": {
            "description": "The date the comment was published, as GMT.",
            "type": "string",
            "format": "date-time",
            "context": _VIEW_EDIT,
        },
        "link": {
            "description": "URL to the comment.",
            "type": "string",
            "format": "uri",
            "context": _ALL,
            "readonly": True,
        },
        "parent": {
            "description": "The ID for the parent of the comment.",
            "type": "integer",
            "context": _ALL,
            "default": 0,
        },
        "post": {
            "description": "The ID of the associated post object.",
            "type": "integer",
            "context": _VIEW_EDIT,
            "default": 0,
        },
        "status": {
            "description": "State of the comment.",
            "type": "string",
            "context": _VIEW_EDIT,
        },
        "type": {
            "description": "Type of the comment.",
            "type": "string",
            "context": _ALL,
            "readonly": True,
        },
        "author_avatar_urls": {
            "description": "Avatar URLs for the comment author.",
            "type": "object",
            "context": _ALL,
            "readonly": True,
            "properties": {
                str(size): {
                    "description": f"Avatar URL with image size of {size} pixels.",
                    "type": "string",
                    "format": "uri",
                    "context": _ALL,
                }
                for size in AVATAR_SIZES
            },
        },
        "meta": {
            "description": "Meta fields.",
            "type": "object",
            "context": _VIEW_EDIT,
            "properties": {},
        },
    },
}


def avatar_urls(email: str) -> dict[str, str]:
    """Gravatar URLs at 24, 48 and 96 pixels for an e-mail address (``get_avatar_url``)."""
    digest = hashlib.sha256(email.strip().lower().encode("utf-8")).hexdigest()
    return {
        str(size): f"https://secure.gravatar.com/avatar/{digest}?s={size}&d=mm&r=g"
        for size in AVATAR_SIZES
    }


class CommentsController(RoutedController):
    """The ``/comments`` routes.

    Args:
        content: the content service.
        post_link: the permalink of a post (the theme's).
        user_email: the e-mail address and display name of a user id, for logged-in commenters.
    """

    def __init__(
        self,
        content: ContentService,
        post_link: Callable[[Post], str],
        user_profile: Callable[[int], tuple[str, str] | None],
    ) -> None:
        self.content = content
        self.post_link = post_link
        self.user_profile = user_profile

    def collection_params(self) -> dict[str, Any]:
        """The collection's query arguments."""
        params = collection_params()
        params.update(
            {
                "author": id_list_param(
                    "Limit result set to comments assigned to specific user IDs."
                ),
                "author_email": {
                    "description": "Limit result set to that from a specific author email.",
                    "type": "string",
                    "format": "email",
                },
                "exclude": id_list_param("Ensure result set excludes specific IDs."),
                "include": id_list_param("Limit result set to specific IDs."),
                **order_params(
                    ["date", "date_gmt", "id", "include", "post", "parent"],
                    default="date_gmt",
                    noun="comment",
                ),
                "parent": id_list_param("Limit result set to comments of specific parent IDs."),
                "post": id_list_param(
                    "Limit result set to comments assigned to specific post IDs."
                ),
                "status": {
                    "default": "approve",
                    "description": "Limit result set to comments assigned a specific status.",
                    "type": "string",
                    "enum": [*COMMENT_STATUSES, "all"],
                },
            }
        )
        return params

    def register(self, server: RestServer) -> None:
        """Register the collection and item routes (``rest_api_init``)."""
        self._server = server

        def schema() -> dict[str, Any]:
            return COMMENT_SCHEMA

        register_crud_routes(
            server,
            "/comments",
            self,
            CrudPermissions(
                list=self.get_items_permissions_check,
                create=self.create_item_permissions_check,
                read=self.get_item_permissions_check,
                update=self.moderate_permissions_check,
                delete=self.moderate_permissions_check,
            ),
            schema=schema,
            collection_args=self.collection_params(),
            item_noun="comment",
        )

    # ------------------------------------------------------------------ permissions
    def _comment(self, request: RestRequest) -> Comment:
        return require_found(
            self.content.get_comment(id_param(request)),
            "rest_comment_invalid_id",
            "Invalid comment ID.",
        )

    def _post_is_public(self, post_id: int) -> bool:
        post = self.content.get_post(post_id)
        return post is not None and post.is_public

    def get_items_permissions_check(self, request: RestRequest) -> bool:
        """Approved comments are public; other statuses and ``context=edit`` need moderation."""
        edit_context_check(request, "moderate_comments")
        if request.get_param("status") != "approve" and not request.user.can("moderate_comments"):
            raise denied(request, "rest_forbidden_param", "Query parameter not permitted: status")
        return True

    def get_item_permissions_check(self, request: RestRequest) -> bool:
        """An approved comment on a public post is public; others need moderation."""
        comment = self._comment(request)
        if request.user.can("moderate_comments"):
            return True
        if request.get_param("context") == "edit":
            raise denied(
                request, "rest_forbidden_context", "Sorry, you are not allowed to edit comments."
            )
        if comment.status == "approve" and self._post_is_public(comment.post_id):
            return True
        raise denied(
            request, "rest_cannot_read", "Sorry, you are not allowed to read this comment."
        )

    def create_item_permissions_check(self, request: RestRequest) -> bool:
        """Logged-in users only; setting the author or status needs moderation."""
        if not is_logged_in(request.user):
            raise RestError(
                "rest_comment_login_required",
                "Sorry, you must be logged in to comment.",
                {"status": 401},
            )
        moderator = bool(request.user.can("moderate_comments"))
        author = request.get_param("author")
        if isinstance(author, int) and author != getattr(request.user, "id", 0) and not moderator:
            raise denied(
                request,
                "rest_comment_invalid_author",
                "Sorry, you are not allowed to edit 'author' for comments.",
            )
        if request.get_param("status") is not None and not moderator:
            raise denied(
                request,
                "rest_comment_invalid_status",
                "Sorry, you are not allowed to edit 'status' for comments.",
            )
        post_id = request.get_param("post")
        post = self.content.get_post(post_id) if isinstance(post_id, int) and post_id else None
        if post is None:
            raise RestError(
                "rest_comment_invalid_post_id",
                "Sorry, you are not allowed to create this comment without a post.",
                {"status": 403},
            )
        if post.comment_status != "open" and not moderator:
            raise RestError(
                "rest_comment_closed", "Sorry, comments are closed for this item.", {"status": 403}
            )
        if not post.is_public and not moderator:
            raise denied(
                request,
                "rest_cannot_read_post",
                "Sorry, you are not allowed to read the post for this comment.",
            )
        return True

    def moderate_permissions_check(self, request: RestRequest) -> bool:
        """Editing and deleting comments needs ``moderate_comments``."""
        self._comment(request)
        if not request.user.can("moderate_comments"):
            code = "rest_cannot_delete" if request.get_method() == "DELETE" else "rest_cannot_edit"
            raise denied(request, code, "Sorry, you are not allowed to edit this comment.")
        return True

    # ------------------------------------------------------------------ handlers
    def get_items(self, request: RestRequest) -> RestResponse:
        """One page of comments, with totals and prev/next links."""
        status = str(request.get_param("status") or "approve")
        query = CommentQuery(
            statuses=tuple(COMMENT_STATUSES) if status == "all" else (status,),
            posts=int_list(request.get_param("post")),
            parents=int_list(request.get_param("parent")),
            authors=int_list(request.get_param("author")),
            author_email=str(request.get_param("author_email") or ""),
            **listing_args(request, orderby="date_gmt"),
        )
        comments, total = self.content.query_comments(query)
        if not request.user.can("moderate_comments"):
            public = {c.post_id for c in comments if self._post_is_public(c.post_id)}
            comments = [c for c in comments if c.post_id in public]
        data = [self.server.response_to_data(self.prepare(c), False) for c in comments]
        return paginated(self.server, request, data, total, query.per_page, query.page)

    def get_item(self, request: RestRequest) -> RestResponse:
        """One comment."""
        return self.prepare(self._comment(request))

    def prepare(self, comment: Comment) -> RestResponse:
        """A comment's data with its links."""
        date, date_gmt = rest_dates(comment.date_gmt, self.content)
        post = self.content.get_post(comment.post_id)
        link = f"{self.post_link(post)}#comment-{comment.id}" if post is not None else ""
        data = {
            "id": comment.id,
            "author": comment.user_id,
            "author_email": comment.author_email,
            "author_ip": comment.author_ip,
            "author_name": comment.author_name,
            "author_url": comment.author_url,
            "author_user_agent": comment.author_agent,
            "content": {"raw": comment.content, "rendered": str(paragraphs(comment.content))},
            "date": date,
            "date_gmt": date_gmt,
            "link": link,
            "parent": comment.parent,
            "post": comment.post_id,
            "status": status_for_response(comment.status),
            "type": comment.type,
            "author_avatar_urls": avatar_urls(comment.author_email),
            "meta": {},
        }
        response = RestResponse(data)
        add_item_links(self.server, response, "comments", comment.id, author=comment.user_id)
        rest = self.server.rest_url
        if post is not None:
            base = "posts" if post.type == "post" else "pages"
            response.add_link(
                "up",
                rest(f"/{NAMESPACE}/{base}/{post.id}"),
                {"embeddable": True, "post_type": post.type},
            )
        if comment.parent:
            response.add_link(
                "in-reply-to", rest(f"/{NAMESPACE}/comments/{comment.parent}"), {"embeddable": True}
            )
        return response

    def _fields(self, request: RestRequest, current: Comment | None) -> dict[str, Any]:
        """The columns a create (``current`` is ``None``) or an update of ``current`` sets.

        Raises:
            InvalidFields: an unknown ``status`` (`requested_status`).
        """
        fields: dict[str, Any] = {}
        content = raw_text(request.get_param("content"))
        if content is not None:
            fields["content"] = content
        for name, column in (
            ("author_name", "author_name"),
            ("author_email", "author_email"),
            ("author_url", "author_url"),
            ("author_ip", "author_ip"),
            ("author_user_agent", "author_agent"),
        ):
            value = request.get_param(name)
            if isinstance(value, str):
                fields[column] = value
        status = request.get_param("status")
        if isinstance(status, str):
            stored = requested_status(status, current.status if current else None)
            if stored is not None:
                fields["status"] = stored
        numbers = (("author", "user_id"), ("parent", "parent"), ("post", "post_id"))
        fields.update(int_columns(request, numbers))
        fields.update(date_field(request, self.content))
        return fields

    def create_item(self, request: RestRequest) -> RestResponse:
        """Add a comment as the current user (201)."""
        fields = self._fields(request, None)
        fields.setdefault("user_id", int(getattr(request.user, "id", 0)))
        profile = self.user_profile(int(fields["user_id"]))
        if profile is not None:
            fields.setdefault("author_email", profile[0])
            fields.setdefault("author_name", profile[1])
        fields.setdefault("author_ip", str(request.environ.get("REMOTE_ADDR") or ""))
        moderator = request.user.can("moderate_comments") or request.user.can("manage_options")
        if request.user.can("moderate_comments"):
            fields.setdefault("status", "approve")
        # Flood control spares moderators and administrators, as WordPress's.
        comment = self.content.add_comment(check_flood=not moderator, **fields)
        return created(self.server, self.prepare(comment), f"/comments/{comment.id}")

    def update_item(self, request: RestRequest) -> RestResponse:
        """Update a comment (moderation included)."""
        comment = self._comment(request)
        fields = self._fields(request, comment)
        return self.prepare(self.content.update_comment(comment.id, **fields))

    def delete_item(self, request: RestRequest) -> RestResponse:
        """Trash a comment, or delete it for good with ``force``."""
        comment = self._comment(request)
        request.set_param("context", "edit")
        if request.get_param("force"):
            answer = deleted(self.server, self.prepare(comment))
            self.content.delete_comment(comment.id, force=True)
            return answer
        self.content.delete_comment(comment.id)
        trashed = self.content.get_comment(comment.id)
        return self.prepare(trashed if trashed is not None else comment)
