"""The ``site/v2`` routes of the content site: posts, pages, their revisions and autosaves,
categories, tags, comments, media, types, statuses, taxonomies, search, settings, block types and
the block renderer (users: `sitecache.auth`'s routes)."""

from __future__ import annotations

from collections.abc import Callable

from sitecache.rest import RestRequest, RestServer
from sitecache.site.blocks import BlockRenderer
from sitecache.site.content import ContentService
from sitecache.site.media_library import MediaLibrary
from sitecache.site.models import Post, Term
from sitecache.site.rest.autosaves import AutosavesController
from sitecache.site.rest.blocks import BlockRoutes
from sitecache.site.rest.comments import CommentsController
from sitecache.site.rest.media import MediaController
from sitecache.site.rest.meta import MetaRoutes
from sitecache.site.rest.posts import PostsController
from sitecache.site.rest.revisions import RevisionsController
from sitecache.site.rest.terms import TermsController

__all__ = ["SiteRoutes"]


class SiteRoutes:
    """Every content controller, registered together on ``rest_api_init``.

    Args:
        content: the content service.
        post_link, term_link: permalinks (the theme's).
        user_profile: ``(email, display name)`` of a user id, or ``None``.
        media: the attachments and their files (``/media``).
        blocks: the block renderer (block types and the renderer route).
    """

    def __init__(
        self,
        content: ContentService,
        post_link: Callable[[Post], str],
        term_link: Callable[[Term], str],
        user_profile: Callable[[int], tuple[str, str] | None],
        media: MediaLibrary,
        blocks: BlockRenderer,
    ) -> None:
        def render_content(post: Post) -> str:
            return str(blocks.render_content(post).html)

        self.posts = PostsController("post", content, post_link, render_content)
        self.pages = PostsController("page", content, post_link, render_content)
        self.revisions = [RevisionsController(c, content) for c in (self.posts, self.pages)]
        self.autosaves = [AutosavesController(c.posts, c, content) for c in self.revisions]
        self.categories = TermsController("category", content, term_link)
        self.tags = TermsController("post_tag", content, term_link)
        self.comments = CommentsController(content, post_link, user_profile)
        self.media = MediaController(content, media)
        self.meta = MetaRoutes(content, post_link, term_link)
        self.blocks = BlockRoutes(content, blocks, self._can_edit)

    def _can_edit(self, request: RestRequest, post: Post) -> bool:
        """``edit_post`` for a post of any type (pages by the pages' capabilities)."""
        controller = self.pages if post.type == "page" else self.posts
        return controller.can_edit(request, post)

    def register(self, server: RestServer) -> None:
        """The ``rest_api_init`` callback."""
        controllers: list[PostsController | RevisionsController | AutosavesController] = [
            self.posts,
            self.pages,
            *self.revisions,
            *self.autosaves,
        ]
        for controller in (
            *controllers,
            self.categories,
            self.tags,
            self.comments,
            self.media,
            self.meta,
            self.blocks,
        ):
            controller.register(server)
