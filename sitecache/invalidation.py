"""The page cache wired to the content site: which pages each change purges.

`sitecache.cache` and `sitecache.site` never import each other; this module (composition, like
`sitecache.app`) listens to the site's hooks and calls the cache engine, following CACHE_API.md
"Invalidation":

- a post that is, or was, published purges its page, the home page and its pagination, its
  terms', author's and date archives, the feed and the sitemap (the site names them in
  ``Cache-Tag``; ``FrontSite.related_tags`` lists them). Unpublishing and deleting purge the
  same set; an edit also purges the archives of the terms and author the post had before.
  ``clear_on_post_edit`` purges the whole site instead;
- an approved comment (new, edited, approved, unapproved or deleted) purges its post's related
  pages, only the post's own URL with ``refresh_single_only_on_comments``; a held comment purges
  nothing (its notice is shown only to its author, never stored);
- an edited or deleted term purges its archive and the pages that list it; a changed option
  (title, tagline, ...) purges the whole site;
- ``lock_down`` stops every automatic purge (manual purges still work).

Purges delete (never soft-purge), and run after the write committed, so no page older than the
change is served once the request that made it has returned.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from sitecache.cache import CacheEngine, StorageError
from sitecache.hooks import Hooks
from sitecache.site import FrontSite
from sitecache.site.models import Comment, Post

__all__ = ["ContentInvalidation"]

logger = logging.getLogger("sitecache.invalidation")

#: Statuses whose posts appear on public pages.
PUBLIC_STATUSES = frozenset({"publish"})


class ContentInvalidation:
    """Purges the cache when content changes (see the module docstring)."""

    def __init__(self, engine: CacheEngine, site: FrontSite) -> None:
        self.engine = engine
        self.site = site

    def install(self, hooks: Hooks) -> None:
        """Listen to the content hooks."""
        hooks.add_action("transition_post_status", self.on_transition_post_status)
        hooks.add_action("post_updated", self.on_post_updated)
        hooks.add_action("deleted_post", self.on_deleted_post)
        hooks.add_action("comment_post", self.on_comment_post)
        hooks.add_action("edit_comment", self.on_comment_changed)
        hooks.add_action("deleted_comment", self.on_comment_changed)
        hooks.add_action("transition_comment_status", self.on_transition_comment_status)
        hooks.add_action("edited_term", self.on_term_changed)
        hooks.add_action("delete_term", self.on_term_changed)
        hooks.add_action("updated_option", self.on_updated_option)

    # ------------------------------------------------------------------ purging
    def _automatic(self) -> bool:
        return not self.engine.settings().values.get("lock_down", False)

    def _purge(self, tags: Iterable[str], reason: str) -> None:
        wanted = sorted(set(tags))
        try:
            result = self.engine.purge_tags(wanted)
        except StorageError as exc:
            self.engine.storage_warning("cache not purged after %s: %s", reason, exc)
            return
        logger.debug("%s purged %d entries (tags %s)", reason, result.deleted, wanted)

    def _purge_site(self, reason: str) -> None:
        try:
            result = self.engine.purge_site()
        except StorageError as exc:
            self.engine.storage_warning("cache not purged after %s: %s", reason, exc)
            return
        logger.debug("%s purged the site (%d entries)", reason, result.deleted)

    def _post_changed(self, posts: Iterable[Post], reason: str) -> None:
        public = [post for post in posts if post.status in PUBLIC_STATUSES]
        if not public or not self._automatic():
            return
        if self.engine.settings().values.get("clear_on_post_edit", False):
            self._purge_site(reason)
            return
        self._purge((tag for post in public for tag in self.site.related_tags(post)), reason)

    # ------------------------------------------------------------------ posts
    def on_transition_post_status(self, new: str, old: str, post: Post) -> None:
        """A new post (updates are `on_post_updated`, which knows the post's old state)."""
        if old == "new":
            self._post_changed([post], f"post {post.id} created")

    def on_post_updated(self, post_id: int, after: Post, before: Post) -> None:
        """An edit, publish, unpublish or trash: the pages of the post before and after."""
        self._post_changed([after, before], f"post {post_id} updated")

    def on_deleted_post(self, post_id: int, post: Post) -> None:
        """A deleted post leaves the pages that listed it."""
        self._post_changed([post], f"post {post_id} deleted")

    # ------------------------------------------------------------------ comments
    def _comment_changed(self, comment: Comment | None, reason: str) -> None:
        if comment is None or not self._automatic():
            return
        post = self.site.content.get_post(comment.post_id)
        if post is None or post.status not in PUBLIC_STATUSES:
            return
        if self.engine.settings().values.get("refresh_single_only_on_comments"):
            # Only the post's own page: its tag would also reach every page that lists it.
            try:
                self.engine.purge_urls([self.site.post_url(post)], scope="url")
            except StorageError as exc:
                self.engine.storage_warning("cache not purged after %s: %s", reason, exc)
            return
        self._purge(self.site.related_tags(post), reason)

    def on_comment_post(self, comment_id: int, approved: Any) -> None:
        """A new comment: approved ones appear on the post's page; held ones nowhere."""
        if approved == 1:
            comment = self.site.content.get_comment(comment_id)
            self._comment_changed(comment, f"comment {comment_id} posted")

    def on_comment_changed(self, comment_id: int, comment: Comment) -> None:
        """An edited or deleted comment that was visible."""
        if comment.status == "approve":
            self._comment_changed(comment, f"comment {comment_id} changed")

    def on_transition_comment_status(self, new: str, old: str, comment: Comment) -> None:
        """Approved or unapproved: the post's page shows or hides it."""
        if "approve" in (new, old):
            self._comment_changed(comment, f"comment {comment.id} {old} -> {new}")

    # ------------------------------------------------------------------ terms and options
    def on_term_changed(self, term_id: int, taxonomy: str, *rest: Any) -> None:
        """A renamed or deleted term: its archive and the pages that name it."""
        if self._automatic():
            tags = [f"term-{term_id}", f"term-archive-{term_id}", "home", "feed", "archive"]
            self._purge(tags, f"{taxonomy} {term_id} changed")

    def on_updated_option(self, name: str, old: Any, new: Any) -> None:
        """A site option shows on every page (title, tagline, date format, ...)."""
        if old != new and self._automatic():
            self._purge_site(f"option {name} updated")
