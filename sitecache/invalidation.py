"""The page cache wired to the content site: which pages each change purges, durably.

`sitecache.cache` and `sitecache.site` never import each other; this module (composition, like
`sitecache.app`) listens to the content service's transactions and calls the cache engine,
following the cache's invalidation rules (docs/explanation/purge-protocol.md):

- a post that is, or was, published purges its page, the home page and its pagination, its
  terms', author's and date archives, the feed and the sitemap (the site names them in
  ``Cache-Tag``; ``FrontSite.related_tags`` lists them). Unpublishing and deleting purge the
  same set; an edit also purges the archives of the terms and author the post had before.
  ``clear_on_post_edit`` purges the whole site instead; revisions and autosaves purge nothing
  (they fire no hooks), an autosave that updates a draft purges nothing (a draft is on no page);
- a page (of any status) whose slug or parent changes, or that is deleted, also purges the
  published pages below it (their paths name it: their own pages under the old URLs, and the
  sitemap and search pages listing them), or the whole site when more than
  `MAX_PURGED_POSTS` pages lie below it;
- an approved comment (new, edited, approved, unapproved or deleted) purges its post's related
  pages, only the post's own URL with ``refresh_single_only_on_comments``; a held comment purges
  nothing (its notice is shown only to its author, never stored);
- a deleted attachment purges its file's URL (``/uploads/...``: the cache may hold it);
- an edited or deleted term purges its archive, home, the feed, the date archives and the
  pages whose blocks list its taxonomy's terms (which a new term also purges). A new name or
  slug (`SHOWN_TERM_FIELDS`), or its deletion, also purges every page showing one of its
  published posts, since each shows the term's name and link next to the post, and with
  ``%category%`` permalinks a category's slug is in its posts' URLs: each post's page (under its
  old URL too) and every listing, feed, sitemap and search page carrying its ``post-<id>``, and
  the blocks listing posts (`FrontSite.showing_tags`); more than `MAX_PURGED_POSTS` posts purge
  the whole site instead. A new description or parent purges only the former;
- a changed option (title, tagline, ...) purges the whole site;
- a user whose display name or slug changes, or who is deleted, purges their author archive,
  their posts' pages and every listing and feed showing one of their posts (`user_changing`,
  in the user change's own transaction);
- ``lock_down`` stops every automatic purge (manual purges still work), except the purges of
  content taken away from the public: a published post made private, draft, pending,
  scheduled or trashed, given a (new) password, or deleted; an approved comment unapproved,
  marked spam, trashed or deleted; a deleted upload. Lock down keeps pages from being
  refreshed under a traffic spike; it never keeps withdrawn content on show. A renamed or
  deleted term and a moved page withdraw nothing: their purges wait for lock down to end.

A change and its purge cannot be separated: the purge is written to the site's outbox
(`sitecache.site.outbox`) in the change's own transaction, applied right after the commit
(before the request that made the change returns), and deleted once applied. When the cache's
storage fails (Redis down or hung, a full disk), the row stays, the engine's purge hold makes
every process of the node bypass the cache (fail closed: nothing older than the change is
served), and `ContentInvalidation.drain` retries on every timer tick until the storage answers;
then the hold is released. Purges delete (never soft-purge).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from sitecache.auth.db import DatabaseError, DbConnection
from sitecache.auth.roles import SiteUser
from sitecache.auth.users import UserRepository
from sitecache.cache import CacheEngine, StorageError
from sitecache.domain_errors import InvalidURL
from sitecache.site import ContentService, FrontSite
from sitecache.site.cache_contract import term_list_tag
from sitecache.site.content_base import HookCall
from sitecache.site.models import Comment, Post, Term
from sitecache.site.options import UNSHOWN_OPTIONS
from sitecache.site.outbox import Outbox

__all__ = ["MAX_PURGED_POSTS", "OUTBOX_KIND", "ContentInvalidation", "PurgeIntent"]

logger = logging.getLogger("sitecache.invalidation")

#: The outbox rows of this module.
OUTBOX_KIND: Final = "cache_purge"
#: What the pages show of a post's author: a change to one of these purges their pages.
SHOWN_USER_FIELDS: Final = ("display_name", "slug")
#: Statuses whose posts appear on public pages.
PUBLIC_STATUSES = frozenset({"publish"})
#: What the pages show of a term next to each post carrying it (a change of one of these
#: purges every page showing one of its posts; a description or parent change does not).
SHOWN_TERM_FIELDS: Final = ("name", "slug")
#: The most posts (a term's, or the pages below a moved page) whose pages one change purges
#: by tag; a change behind more purges the whole site (one purge, whatever the count).
MAX_PURGED_POSTS: Final = 500
#: Rows applied per drain round.
DRAIN_BATCH: Final = 50

#: What one change owes the cache, decided when the change is made and applied under the
#: settings of the moment it is applied: ``{"kind": "post"|"comment"|"term"|"site"|"url",
#: "tags": [...], "url": "...", "withdraws": true}``; ``withdraws`` marks a change that takes
#: content away from the public, which ``lock_down`` does not hold back.
PurgeIntent = dict[str, Any]


def withdrawing(intents: Iterable[PurgeIntent]) -> list[PurgeIntent]:
    """``intents`` marked as taking content away from the public (applied under lock down)."""
    return [{**intent, "withdraws": True} for intent in intents]


class ContentInvalidation:
    """Purges the cache when content changes (see the module docstring).

    Args:
        engine: the cache engine.
        site: the front site (tags and URLs of the pages that show a post).
        outbox: the outbox of the site database.
    """

    def __init__(self, engine: CacheEngine, site: FrontSite, outbox: Outbox) -> None:
        self.engine = engine
        self.site = site
        self.outbox = outbox
        self._recorded = threading.local()
        self._draining = threading.Lock()
        self._handlers: dict[str, Callable[..., Iterable[PurgeIntent]]] = {
            "transition_post_status": self._post_created,
            "post_updated": self._post_updated,
            "deleted_post": self._post_deleted,
            "comment_post": self._comment_posted,
            "edit_comment": self._comment_changed,
            "deleted_comment": self._comment_deleted,
            "transition_comment_status": self._comment_transition,
            "created_term": self._term_created,
            "edited_term": self._term_edited,
            "delete_term": self._term_deleted,
            "updated_option": self._option_updated,
            "deleted_upload_file": self._file_deleted,
        }

    def install(self, content: ContentService, users: UserRepository | None = None) -> None:
        """Listen to the content service's transactions (and to ``users``' changes: an
        author's name and archive URL show on every page of their posts)."""
        content.transaction_listeners.append(self)
        if users is not None:
            users.change_listeners.append(self)

    # ------------------------------------------------------------------ users
    def user_changing(
        self, db: DbConnection, before: SiteUser, changed: Mapping[str, str] | None
    ) -> None:
        """Record the purge of the pages showing ``before``'s name or archive link when they
        change or the user goes: their posts (each listing and feed carrying one), their
        single pages and their author archive (under its old URL too)."""
        if changed is not None and all(
            changed.get(name, getattr(before, name)) == getattr(before, name)
            for name in SHOWN_USER_FIELDS
        ):
            return
        rows = db.execute(
            "SELECT id FROM posts WHERE author = ? AND status = 'publish' AND type != 'revision'",
            (before.id,),
        ).fetchall()
        tags = [f"author-{before.id}", f"author-archive-{before.id}"]
        tags.extend(f"post-{row[0]}" for row in rows)
        self.outbox.add(db, OUTBOX_KIND, [{"kind": "author", "tags": tags}])
        self._recorded.owed = True

    def user_changed(self) -> None:
        """Apply what `user_changing` recorded."""
        self.after_commit(())

    # ------------------------------------------------------------------ transactions
    def before_commit(self, db: DbConnection, calls: Sequence[HookCall]) -> None:
        """Record what the change owes the cache in its own transaction."""
        intents = self.intents(calls)
        if intents:
            self.outbox.add(db, OUTBOX_KIND, intents)
            self._recorded.owed = True

    def after_commit(self, calls: Sequence[HookCall]) -> None:
        """Apply what was just recorded (and anything older still owed)."""
        if getattr(self._recorded, "owed", False):
            self._recorded.owed = False
            self.drain(wait=True)

    def intents(self, calls: Iterable[HookCall]) -> list[PurgeIntent]:
        """What the hook calls of one transaction owe the cache, in order."""
        found: list[PurgeIntent] = []
        for name, args in calls:
            handler = self._handlers.get(name)
            if handler is not None:
                found.extend(handler(*args))
        return found

    # ------------------------------------------------------------------ what a change owes
    def _post_intent(self, posts: Iterable[Post]) -> Iterable[PurgeIntent]:
        public = [post for post in posts if post.status in PUBLIC_STATUSES]
        if public:
            tags = {tag for post in public for tag in self.site.related_tags(post)}
            yield {"kind": "post", "tags": sorted(tags)}

    def _post_created(self, new: str, old: str, post: Post) -> Iterable[PurgeIntent]:
        # Updates are `_post_updated`, which knows the post's old state.
        return self._post_intent([post]) if old == "new" else ()

    def _descendants_intent(self, page: Post) -> Iterable[PurgeIntent]:
        """The pages below ``page`` (their paths name it) and every page showing them; the
        whole site when more than `MAX_PURGED_POSTS` pages lie below it."""
        if page.type != "page":
            return
        below = self.site.content.descendant_page_ids(page.id, MAX_PURGED_POSTS)
        if below is None:
            yield {"kind": "site"}
        elif below:
            yield {"kind": "post", "tags": self.site.showing_tags(below)}

    def _post_updated(self, post_id: int, after: Post, before: Post) -> Iterable[PurgeIntent]:
        intents = list(self._post_intent([after, before]))
        withdrawn = before.status in PUBLIC_STATUSES and (
            after.status not in PUBLIC_STATUSES
            or (after.password != "" and after.password != before.password)
        )
        if withdrawn:
            intents = withdrawing(intents)
        if after.slug != before.slug or after.parent != before.parent:
            # Moved, whatever its status: the pages below it moved too (not a withdrawal).
            intents.extend(self._descendants_intent(after))
        return intents

    def _post_deleted(self, post_id: int, post: Post) -> Iterable[PurgeIntent]:
        # The pages below a deleted page lose it from their paths (moved, not withdrawn).
        return [*withdrawing(self._post_intent([post])), *self._descendants_intent(post)]

    def _comment_intent(self, comment: Comment | None) -> Iterable[PurgeIntent]:
        if comment is None:
            return
        post = self.site.content.get_post(comment.post_id)
        if post is None or post.status not in PUBLIC_STATUSES:
            return
        yield {
            "kind": "comment",
            "tags": self.site.related_tags(post),
            "url": self.site.post_url(post),
        }

    def _comment_posted(self, comment_id: int, approved: Any) -> Iterable[PurgeIntent]:
        # Held comments appear nowhere (their notice is shown to their author, never stored).
        if approved != 1:
            return ()
        return self._comment_intent(self.site.content.get_comment(comment_id))

    def _comment_changed(self, comment_id: int, comment: Comment) -> Iterable[PurgeIntent]:
        return self._comment_intent(comment) if comment.status == "approve" else ()

    def _comment_deleted(self, comment_id: int, comment: Comment) -> Iterable[PurgeIntent]:
        return withdrawing(self._comment_changed(comment_id, comment))

    def _comment_transition(self, new: str, old: str, comment: Comment) -> Iterable[PurgeIntent]:
        if "approve" not in (new, old):
            return ()
        intents = self._comment_intent(comment)
        return withdrawing(intents) if old == "approve" else intents

    def _term_intent(
        self, term_id: int, taxonomy: str, posts: Sequence[int] | None = ()
    ) -> Iterable[PurgeIntent]:
        """The term's archive and the blocks listing its taxonomy; with ``posts``, every page
        showing one of them (their terms' names and links); ``None`` (too many posts or not
        known): the whole site."""
        if posts is None or len(posts) > MAX_PURGED_POSTS:
            yield {"kind": "site"}
            return
        tags = [f"term-{term_id}", f"term-archive-{term_id}", "home", "feed", "archive"]
        shown = self.site.showing_tags(posts) if posts else []
        yield {
            "kind": "term",
            "tags": list(dict.fromkeys([*tags, term_list_tag(taxonomy), *shown])),
        }

    def _term_edited(
        self, term_id: int, taxonomy: str, before: Term | None = None, *rest: Any
    ) -> Iterable[PurgeIntent]:
        after = self.site.content.get_term(term_id)
        shown = (
            before is None
            or after is None
            or any(getattr(after, name) != getattr(before, name) for name in SHOWN_TERM_FIELDS)
        )
        if not shown:
            # Its description (its archive) or parent (the blocks listing its taxonomy).
            return self._term_intent(term_id, taxonomy)
        return self._term_intent(
            term_id, taxonomy, self.site.content.term_post_ids(term_id, MAX_PURGED_POSTS)
        )

    def _term_deleted(
        self,
        term_id: int,
        taxonomy: str,
        term: Term | None = None,
        post_ids: Sequence[int] | None = None,
        *rest: Any,
    ) -> Iterable[PurgeIntent]:
        # Its posts lost it (their links with it are gone): the ids come with the hook.
        return self._term_intent(term_id, taxonomy, post_ids)

    def _term_created(self, term_id: int, taxonomy: str) -> Iterable[PurgeIntent]:
        # Only the blocks listing the taxonomy's terms can show a new (empty) term.
        yield {"kind": "term", "tags": [term_list_tag(taxonomy)]}

    def _file_deleted(self, post_id: int, path: str) -> Iterable[PurgeIntent]:
        # An uploaded file the cache may hold (it is static): its own URL only.
        yield {"kind": "url", "url": self.site.links.url(path), "withdraws": True}

    def _option_updated(self, name: str, old: Any, new: Any) -> Iterable[PurgeIntent]:
        # A site option shows on every page (title, tagline, date format, ...), except the
        # few no page shows (how many revisions to keep).
        return ({"kind": "site"},) if old != new and name not in UNSHOWN_OPTIONS else ()

    # ------------------------------------------------------------------ applying
    def apply(self, intents: Iterable[PurgeIntent]) -> None:
        """Purge what ``intents`` owe, under the current settings.

        Raises:
            StorageError: the storage failed (the caller keeps the intents for a retry).
        """
        settings = self.engine.settings()
        if settings.lock_down:
            # No automatic purges while locked down (manual ones still work), except of
            # content withdrawn from the public.
            intents = [intent for intent in intents if intent.get("withdraws")]
        whole_site = False
        tags: set[str] = set()
        urls: set[str] = set()
        for intent in intents:
            kind = intent.get("kind")
            if kind == "site" or (kind == "post" and settings.clear_on_post_edit):
                whole_site = True
            elif kind == "url":
                urls.add(str(intent["url"]))
            elif kind == "comment" and settings.refresh_single_only_on_comments:
                # Only the post's own page: its tag would also reach every page that lists it.
                urls.add(str(intent["url"]))
            else:
                tags.update(str(tag) for tag in intent.get("tags", ()))
        if whole_site:
            self.engine.purge_site()
            return
        if tags:
            self.engine.purge_tags(sorted(tags))
        if urls:
            try:
                self.engine.purge_urls(sorted(urls), scope="url")
            except InvalidURL as refused:  # a URL off the site's hosts: nothing cached
                logger.warning("comment purge skipped: %s", refused.message)

    def drain(self, *, wait: bool = False) -> bool:
        """Apply every owed purge, oldest first; whether none is left.

        On a storage failure the row stays, the purge hold is engaged (every process of the
        node bypasses the cache) and ``False`` is returned; once everything is applied, the
        hold is released. ``wait`` waits for a drain running in another thread of this
        process instead of leaving the work to it.
        """
        if not self._draining.acquire(blocking=wait):
            return False
        try:
            return self._drain()
        except DatabaseError as exc:
            logger.warning("owed cache purges not read: %s", exc)
            return False
        finally:
            self._draining.release()

    def _drain(self) -> bool:
        hold = self.engine.hold
        while True:
            rows = self.outbox.pending(OUTBOX_KIND, DRAIN_BATCH)
            for row in rows:
                try:
                    self.apply(row.payload)
                except StorageError as exc:
                    self.outbox.failed(row.id, str(exc))
                    owed = self.outbox.count(OUTBOX_KIND)
                    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(row.created))
                    hold.engage(
                        f"{owed} purge(s) owed to content changes since {since} are not "
                        f"applied yet ({exc}); pages are served uncached until they are."
                    )
                    self.engine.storage_warning(
                        "cache purge owed to a content change not applied yet: %s", exc
                    )
                    return False
                self.outbox.done(row.id)
            if len(rows) < DRAIN_BATCH:
                break
        if hold.active():
            # Decided under the database's write lock: no new row can commit meanwhile.
            with self.outbox.settled(OUTBOX_KIND) as settled:
                if settled:
                    hold.release()
                    logger.info("owed cache purges applied; caching resumes")
        return True
