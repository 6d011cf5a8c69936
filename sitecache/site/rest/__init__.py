"""The ``site/v2`` routes of the content site: posts, pages, categories, tags, comments,
media, types, statuses, taxonomies, search and settings (users: `sitecache.auth`'s routes)."""

from __future__ import annotations

from collections.abc import Callable

from sitecache.rest import RestServer
from sitecache.site.content import ContentService
from sitecache.site.media_library import MediaLibrary
from sitecache.site.models import Post, Term
from sitecache.site.rest.comments import CommentsController
from sitecache.site.rest.media import MediaController
from sitecache.site.rest.meta import MetaRoutes
from sitecache.site.rest.posts import PostsController
from sitecache.site.rest.terms import TermsController

__all__ = ["SiteRoutes"]


class SiteRoutes:
    """Every content controller, registered together on ``rest_api_init``.

    Args:
        content: the content service.
        post_link, term_link: permalinks (the theme's).
        user_profile: ``(email, display name)`` of a user id, or ``None``.
        media: the attachments and their files (``/media``).
    """

    def __init__(
        self,
        content: ContentService,
        post_link: Callable[[Post], str],
        term_link: Callable[[Term], str],
        user_profile: Callable[[int], tuple[str, str] | None],
        media: MediaLibrary,
    ) -> None:
        self.posts = PostsController("post", content, post_link)
        self.pages = PostsController("page", content, post_link)
        self.categories = TermsController("category", content, term_link)
        self.tags = TermsController("post_tag", content, term_link)
        self.comments = CommentsController(content, post_link, user_profile)
        self.media = MediaController(content, media)
        self.meta = MetaRoutes(content, post_link, term_link)

    def register(self, server: RestServer) -> None:
        """The ``rest_api_init`` callback."""
        for controller in (
            self.posts,
            self.pages,
            self.categories,
            self.tags,
            self.comments,
            self.media,
            self.meta,
        ):
            controller.register(server)
