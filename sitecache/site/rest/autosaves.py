"""``site/v2/posts/<id>/autosaves`` and ``site/v2/pages/<id>/autosaves``: the autosaves
controller (WordPress's ``WP_REST_Autosaves_Controller``).

``POST`` saves what an editor is typing without publishing it: the author of a draft updates
the draft itself (no revision is stored, as WordPress does while ``DOING_AUTOSAVE``); anybody
else, or any post that is not a draft, gets a per-user autosave (one per user and post,
overwritten by the next). Neither touches the published post, so neither purges a cached page.
Reading needs the right to edit the post (``rest_cannot_read`` otherwise), writing the right to
update it. The site has no previews, so ``preview_link`` (in the schema) is never sent.
"""

from __future__ import annotations

from typing import Any, Final

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.schema import get_endpoint_args_for_schema
from sitecache.site.content import ContentService
from sitecache.site.models import Post
from sitecache.site.rest.base import (
    CONTEXT_PARAM,
    NAMESPACE,
    RoutedController,
    path_id,
)
from sitecache.site.rest.posts import PostsController
from sitecache.site.rest.revisions import RevisionsController, revision_response
from sitecache.site.rest.revisions_schema import autosave_schema
from sitecache.site.revision_store import REVISION_FIELDS

__all__ = ["AutosavesController"]

_PARENT_ARG: Final = {"description": "The ID for the parent of the autosave.", "type": "integer"}


class AutosavesController(RoutedController):
    """The autosave routes of one post type.

    Args:
        posts: the post type's controller (capabilities, the fields a write sets).
        revisions: its revisions controller (the parent lookup).
        content: the content service.
    """

    def __init__(
        self, posts: PostsController, revisions: RevisionsController, content: ContentService
    ) -> None:
        self.posts = posts
        self.revisions = revisions
        self.content = content
        self.parent_base = posts.rest_base
        self.schema = autosave_schema(posts.post_type, posts.schema)

    # ------------------------------------------------------------------ registration
    def register(self, server: RestServer) -> None:
        """``/<base>/<id>/autosaves`` (GET, POST) and ``/<base>/<parent>/autosaves/<id>``
        (GET); the collection's placeholder is ``id`` while its arguments name ``parent``,
        as in WordPress."""
        self._server = server
        schema = self.get_schema
        server.register_rest_route(
            NAMESPACE,
            f"/{self.parent_base}/(?P<id>[\\d]+)/autosaves",
            [
                {
                    "methods": "GET",
                    "callback": self.get_items,
                    "permission_callback": self.get_items_permissions_check,
                    "args": {"context": CONTEXT_PARAM},
                },
                {
                    "methods": "POST",
                    "callback": self.create_item,
                    "permission_callback": self.create_item_permissions_check,
                    "args": get_endpoint_args_for_schema(self.posts.schema, "POST, PUT, PATCH"),
                },
            ],
            route_args={"parent": _PARENT_ARG},
            schema=schema,
        )
        server.register_rest_route(
            NAMESPACE,
            f"/{self.parent_base}/(?P<parent>[\\d]+)/autosaves/(?P<id>[\\d]+)",
            [
                {
                    "methods": "GET",
                    "callback": self.get_item,
                    "permission_callback": self.get_item_permissions_check,
                    "args": {"context": CONTEXT_PARAM},
                }
            ],
            route_args={
                "parent": _PARENT_ARG,
                "id": {"description": "The ID for the autosave.", "type": "integer"},
            },
            schema=schema,
        )

    def get_schema(self) -> dict[str, Any]:
        """The ``<type>-revision`` schema with ``preview_link``."""
        return self.schema

    # ------------------------------------------------------------------ permissions
    def _readable_parent(self, request: RestRequest, parent_id: Any) -> Post:
        return self.revisions.readable_parent(request, parent_id, "autosaves")

    def get_items_permissions_check(self, request: RestRequest) -> bool:
        """The right to edit the post (``rest_cannot_read`` otherwise)."""
        self._readable_parent(request, request.get_param("id"))
        return True

    def get_item_permissions_check(self, request: RestRequest) -> bool:
        """The right to edit the post the autosave belongs to."""
        self._readable_parent(request, request.get_param("parent"))
        return True

    def create_item_permissions_check(self, request: RestRequest) -> bool:
        """The right to update the post (the posts controller's check)."""
        if not request.get_param("id"):
            raise RestError("rest_post_invalid_id", "Invalid item ID.", {"status": 404})
        return self.posts.update_item_permissions_check(request)

    # ------------------------------------------------------------------ reading
    def get_items(self, request: RestRequest) -> RestResponse:
        """Every user's autosave of the post (not paginated, as in WordPress)."""
        parent = self.revisions.get_parent(request.get_param("id"))
        return RestResponse(
            [
                self.server.response_to_data(self.prepare(autosave), False)
                for autosave in self.content.get_autosaves(parent.id)
            ]
        )

    def get_item(self, request: RestRequest) -> RestResponse:
        """One autosave of the post."""
        try:
            parent = self.revisions.get_parent(request.get_param("parent"))
        except RestError:
            raise RestError(
                "rest_post_invalid_id", "Invalid post parent ID.", {"status": 404}
            ) from None
        autosave_id = path_id(request.get_param("id"))
        found = [a for a in self.content.get_autosaves(parent.id) if a.id == autosave_id]
        if not found:
            raise RestError(
                "rest_post_no_autosave",
                "There is no autosave revision for this post.",
                {"status": 404},
            )
        return self.prepare(found[0])

    def prepare(self, autosave: Post) -> RestResponse:
        """An autosave (or the draft an autosave updated) in the revision shape."""
        return revision_response(self.server, self.content, self.parent_base, autosave)

    # ------------------------------------------------------------------ writing
    def create_item(self, request: RestRequest) -> RestResponse:
        """Autosave: the author's own draft is updated in place (no revision); otherwise the
        caller's autosave of the post is created or overwritten. Answers in ``context=edit``."""
        parent = self.revisions.get_parent(request.get_param("id"))
        fields = self.posts.prepare_for_database(request, parent)
        fields.pop("featured_media", None)  # set by the posts route only, as in WordPress
        user_id = int(getattr(request.user, "id", 0))
        if parent.status == "draft" and parent.author == user_id:
            saved = self.content.update_post(
                parent.id, editor=user_id, keep_revision=False, **fields
            )
        else:
            text = {name: str(fields.get(name, getattr(parent, name))) for name in REVISION_FIELDS}
            saved = self.content.put_autosave(parent.id, user_id, **text)
        request.set_param("context", "edit")
        return self.prepare(saved)
