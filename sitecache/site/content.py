"""`ContentService`: the one way to read and write the site's content, and the hooks it fires.

Every write (posts, terms, comments, options) goes through this service, commits, then fires
the WordPress-named actions on the application's hooks:

==============================  ===========================================================
action                          arguments
==============================  ===========================================================
``transition_post_status``      ``(new_status, old_status, post)`` (old is ``"new"`` on insert)
``post_updated``                ``(post_id, post_after, post_before)`` on an update (the old
                                terms and author are in ``post_before``)
``save_post``                   ``(post_id, post, update)``
``delete_post``                 ``(post_id, post)`` before a post is deleted for good
``deleted_post``                ``(post_id, post)`` after it was (``post`` keeps its terms)
``created_term``                ``(term_id, taxonomy)``
``edited_term``                 ``(term_id, taxonomy, term_before)``
``delete_term``                 ``(term_id, taxonomy, term, object_ids)`` after a term was
                                deleted (``object_ids``: the posts that carried it)
``comment_post``                ``(comment_id, approved)`` with approved ``1``, ``0`` or ``"spam"``
``edit_comment``                ``(comment_id, comment)``
``transition_comment_status``   ``(new_status, old_status, comment)``
``deleted_comment``             ``(comment_id, comment)``
``updated_option``              ``(name, old_value, new_value)``
==============================  ===========================================================

Hooks run after the transaction commits, so a callback always reads the new state.
Reading posts lives in `sitecache.site.post_reads`; terms, comments and revisions in their own
stores, which this service joins.
Revisions (`sitecache.site.revision_store`) are written as a side effect of creating and
updating a post, in the same transaction, and fire no hooks of their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from sitecache.auth.db import DbConnection
from sitecache.auth.store import sql_values
from sitecache.domain_errors import GoneError, InvalidValueError, NotFoundError
from sitecache.site.comment_store import CommentStore
from sitecache.site.content_base import transactional
from sitecache.site.models import POST_STATUSES, POST_TYPES, Post, sanitize_title
from sitecache.site.post_reads import PostReads
from sitecache.site.queries import (
    CommentQuery,
    PostQuery,
    TermQuery,
    placeholders,
)
from sitecache.site.revision_store import REVISION_FIELDS, RevisionStore
from sitecache.site.term_store import TermStore

__all__ = ["CommentQuery", "ContentService", "PostQuery", "TermQuery"]

_POST_FIELDS: Final = (
    "type", "status", "author", "parent", "slug", "title", "content", "excerpt", "date_gmt",
    "modified_gmt", "comment_status", "ping_status", "password", "menu_order", "sticky",
    "mime_type", "featured_media",
)  # fmt: skip


class ContentService(PostReads, TermStore, CommentStore, RevisionStore):
    """The site's content in the site database, with hooks on every write.

    Args:
        store: the site database (the content migrations are applied on construction).
        hooks: the application's hooks.
        option_defaults: defaults of options taken from the configuration.
        clock: seconds since the epoch.
    """

    # ------------------------------------------------------------------ posts: writing
    def _unique_slug(self, db: DbConnection, post_type: str, slug: str, exclude: int = 0) -> str:
        """``slug``, or ``slug-2``, ``slug-3``… the first one no other post of the type uses."""
        if post_type in ("revision", "attachment"):
            return slug
        candidate, suffix = slug, 2
        while db.execute(
            "SELECT 1 FROM posts WHERE type = ? AND slug = ? AND id != ? AND status != 'trash'",
            (post_type, candidate, exclude),
        ).fetchone():
            candidate = f"{slug}-{suffix}"
            suffix += 1
        return candidate

    def _check_post_fields(self, fields: Mapping[str, Any]) -> None:
        unknown = set(fields) - set(_POST_FIELDS) - {"term_ids"}
        if unknown:
            raise TypeError(f"unknown post fields: {', '.join(sorted(unknown))}")
        if fields.get("type", "post") not in POST_TYPES:
            raise InvalidValueError("rest_invalid_post_type", "Invalid post type.")
        status = fields.get("status", "draft")
        if status not in POST_STATUSES and status != "inherit":
            raise InvalidValueError("rest_invalid_status", "Invalid post status.")

    def _check_term_ids(self, db: DbConnection, term_ids: Sequence[int]) -> None:
        if not term_ids:
            return
        found = db.execute(
            f"SELECT COUNT(*) FROM terms WHERE id IN ({placeholders(term_ids)})",
            tuple(term_ids),
        ).fetchone()[0]
        if int(found) != len(set(term_ids)):
            raise InvalidValueError("rest_invalid_term_id", "Invalid term ID.")

    def _scheduled_status(self, status: str, date_gmt: int) -> str:
        """``publish`` with a date in the future becomes ``future``, and back."""
        if status == "publish" and date_gmt > self.now():
            return "future"
        if status == "future" and date_gmt <= self.now():
            return "publish"
        return status

    @transactional
    def create_post(self, *, editor: int | None = None, **fields: Any) -> Post:
        """Insert a post; fires ``transition_post_status(new, "new", post)`` and
        ``save_post(id, post, False)``.

        Fields are the columns of `Post` plus ``term_ids``. Missing: ``type`` post, ``status``
        draft, dates now, the slug from the title, a ``post`` with no category gets the
        ``default_category`` when it exists. A post or page created with a title, content or
        excerpt gets its first revision, by ``editor`` (the author when ``None``).

        Raises:
            InvalidValueError: an invalid type, status or term.
        """
        self._check_post_fields(fields)
        values = self._new_post_defaults()
        values.update({key: value for key, value in fields.items() if key != "term_ids"})
        values["status"] = self._scheduled_status(values["status"], int(values["date_gmt"]))
        term_ids = list(fields.get("term_ids") or [])
        with self._write() as db:
            values["slug"] = self._unique_slug(
                db,
                values["type"],
                sanitize_title(str(values.get("slug") or values["title"]), "untitled"),
            )
            self._check_term_ids(db, term_ids)
            self._check_featured_media(db, int(values["featured_media"]))
            if values["type"] == "post" and not self._has_category(db, term_ids):
                term_ids += self._default_category(db)
            columns = list(values)
            cursor = db.execute(
                f"INSERT INTO posts ({', '.join(columns)}) VALUES ({placeholders(columns)})"
                " RETURNING id",
                [int(v) if isinstance(v, bool) else v for v in values.values()],
            )
            post_id = int(cursor.fetchone()[0])
            db.executemany(
                "INSERT INTO term_relationships (post_id, term_id) VALUES (?, ?)"
                " ON CONFLICT DO NOTHING",
                [(post_id, term_id) for term_id in term_ids],
            )
            post = self._must_get(post_id)
            if any(getattr(post, name) for name in REVISION_FIELDS):
                self._save_revision(db, post, editor)
        if post.type != "revision":
            self._fire("transition_post_status", post.status, "new", post)
            self._fire("save_post", post.id, post, False)
        return post

    def _new_post_defaults(self) -> dict[str, Any]:
        """The columns of a new post before its fields are applied (dates now)."""
        now = self.now()
        return {
            "type": "post",
            "status": "draft",
            "author": 0,
            "parent": 0,
            "title": "",
            "content": "",
            "excerpt": "",
            "date_gmt": now,
            "modified_gmt": now,
            "comment_status": str(self.get_option("default_comment_status")),
            "ping_status": "open",
            "password": "",
            "menu_order": 0,
            "sticky": False,
            "mime_type": "",
            "featured_media": 0,
        }

    def _default_category(self, db: DbConnection) -> list[int]:
        """``[default_category]`` when that category exists, else ``[]``."""
        default = int(self.get_option("default_category"))
        found = db.execute(
            "SELECT 1 FROM terms WHERE id = ? AND taxonomy = 'category'", (default,)
        ).fetchone()
        return [default] if found else []

    def _check_featured_media(self, db: DbConnection, media_id: int) -> None:
        """Refuse a featured image that is not an image attachment (0, none, passes), read
        inside the write's transaction (WordPress's ``set_post_thumbnail`` rule).

        Raises:
            InvalidValueError: ``rest_invalid_featured_media``.
        """
        if media_id == 0:
            return
        found = db.execute(
            "SELECT 1 FROM posts WHERE id = ? AND type = 'attachment' AND mime_type LIKE 'image/%'",
            sql_values([media_id]),
        ).fetchone()
        if found is None:
            raise InvalidValueError("rest_invalid_featured_media", "Invalid featured media ID.")

    def _has_category(self, db: DbConnection, term_ids: Sequence[int]) -> bool:
        if not term_ids:
            return False
        return (
            db.execute(
                "SELECT 1 FROM terms WHERE taxonomy = 'category'"
                f" AND id IN ({placeholders(term_ids)})",
                tuple(term_ids),
            ).fetchone()
            is not None
        )

    def _must_get(self, post_id: int) -> Post:
        post = self.get_post(post_id)
        if post is None:  # pragma: no cover - written in the transaction that just committed
            raise RuntimeError(f"post {post_id} vanished")
        return post

    @transactional
    def update_post(
        self,
        post_id: int,
        *,
        editor: int | None = None,
        keep_revision: bool = True,
        **fields: Any,
    ) -> Post:
        """Change a post; fires ``transition_post_status(new, old, post)`` and
        ``save_post(id, post, True)``. A post or page whose title, content or excerpt then
        differs from its newest revision (or that has none) gets a new revision by ``editor``
        (the author when ``None``) in the same transaction, unless ``keep_revision`` is false
        (an autosave of the author's own draft, as in WordPress). ``term_ids``, when given,
        replaces all the post's terms (`set_post_terms` replaces one taxonomy's).

        Raises:
            NotFoundError: ``rest_post_invalid_id``.
            InvalidValueError: an invalid status or term.
        """
        self._check_post_fields(fields)
        old = self.get_post(post_id)
        if old is None:
            raise NotFoundError("rest_post_invalid_id", "Invalid post ID.")
        values = {key: value for key, value in fields.items() if key != "term_ids"}
        values.setdefault("modified_gmt", self.now())
        if "slug" in values or "title" in values:
            wanted = values.get("slug") or (old.slug if "slug" not in values else "")
            values["slug"] = sanitize_title(str(wanted or values.get("title") or old.title))
        date_gmt = int(values.get("date_gmt", old.date_gmt))
        values["status"] = self._scheduled_status(str(values.get("status", old.status)), date_gmt)
        term_ids = fields.get("term_ids")
        with self._write() as db:
            if "slug" in values:
                values["slug"] = self._unique_slug(
                    db, old.type, values["slug"] or "untitled", exclude=post_id
                )
            if "featured_media" in values:
                self._check_featured_media(db, int(values["featured_media"]))
            assignments = ", ".join(f"{column} = ?" for column in values)
            db.execute(
                f"UPDATE posts SET {assignments} WHERE id = ?",
                [*(int(v) if isinstance(v, bool) else v for v in values.values()), post_id],
            )
            if term_ids is not None:
                term_ids = list(term_ids)
                self._check_term_ids(db, term_ids)
                self._replace_terms(db, post_id, term_ids)
            post = self._must_get(post_id)
            if keep_revision:
                self._save_revision(db, post, editor)
        if post.type != "revision":
            self._fire("post_updated", post.id, post, old)
            self._fire("transition_post_status", post.status, old.status, post)
            self._fire("save_post", post.id, post, True)
        return post

    def _replace_terms(self, db: DbConnection, post_id: int, term_ids: list[int]) -> None:
        db.execute("DELETE FROM term_relationships WHERE post_id = ?", (post_id,))
        db.executemany(
            "INSERT INTO term_relationships (post_id, term_id) VALUES (?, ?)"
            " ON CONFLICT DO NOTHING",
            [(post_id, term_id) for term_id in term_ids],
        )

    @transactional
    def set_post_terms(self, post_id: int, taxonomy: str, term_ids: Sequence[int]) -> Post:
        """Replace a post's terms of one taxonomy (``save_post`` fires)."""
        post = self.get_post(post_id)
        if post is None:
            raise NotFoundError("rest_post_invalid_id", "Invalid post ID.")
        keep = [
            term.id for term in self.get_terms(post.term_ids).values() if term.taxonomy != taxonomy
        ]
        with self._write() as db:
            self._check_term_ids(db, list(term_ids))
            db.execute("DELETE FROM term_relationships WHERE post_id = ?", (post_id,))
            db.executemany(
                "INSERT INTO term_relationships (post_id, term_id) VALUES (?, ?)"
                " ON CONFLICT DO NOTHING",
                [(post_id, term_id) for term_id in [*keep, *term_ids]],
            )
        updated = self._must_get(post_id)
        self._fire("post_updated", updated.id, updated, post)
        self._fire("transition_post_status", updated.status, post.status, updated)
        self._fire("save_post", updated.id, updated, True)
        return updated

    @transactional
    def delete_post(self, post_id: int, force: bool = False) -> Post:
        """Trash a post (status ``trash``; hooks as for an update) or, with ``force``, delete
        it and its comments, terms links and revisions for good (``delete_post`` before,
        ``deleted_post`` after). Returns the post as it was before.

        Raises:
            NotFoundError: ``rest_post_invalid_id``.
            GoneError: ``rest_already_trashed``.
        """
        post = self.get_post(post_id)
        if post is None:
            raise NotFoundError("rest_post_invalid_id", "Invalid post ID.")
        if not force:
            if post.status == "trash":
                raise GoneError("rest_already_trashed", "The post has already been deleted.")
            self.update_post(post_id, status="trash")
            return post
        # Before the post goes (WordPress's order), whatever the surrounding transaction.
        self.hooks.do_action("delete_post", post.id, post)
        with self._write() as db:
            db.execute("DELETE FROM posts WHERE parent = ? AND type = 'revision'", (post_id,))
            db.execute("DELETE FROM posts WHERE id = ?", (post_id,))
            if post.type == "attachment":  # no post keeps a deleted image as its featured one
                db.execute(
                    "UPDATE posts SET featured_media = 0 WHERE featured_media = ?", (post_id,)
                )
        self._fire("deleted_post", post.id, post)
        return post

    def install(self) -> None:
        """Answer the users layer's questions on the hooks: the ``published_author_ids``
        filter (users with published posts) and the ``delete_user`` action (their posts go to
        the ``reassign`` user, or are deleted when there is none)."""
        self.hooks.add_filter("published_author_ids", self._add_published_authors)
        self.hooks.add_action("delete_user", self.reassign_posts)

    def _add_published_authors(self, ids: Any) -> set[int]:
        known = {value for value in ids or () if isinstance(value, int)}
        return known | set(self.published_authors())

    def reassign_posts(self, user_id: int, reassign: int | None) -> int:
        """Give every post of ``user_id`` to ``reassign`` (hooks fire as for updates), or
        delete them for good when ``reassign`` is ``None``; their comments keep their text
        but lose the user id, and their autosaves of any post go. All in one transaction;
        returns how many posts moved or went."""
        rows = self.store.connection().execute(
            "SELECT id FROM posts WHERE author = ? AND type != 'revision' ORDER BY id", (user_id,)
        )
        post_ids = [int(row[0]) for row in rows.fetchall()]
        with self.batch():
            for post_id in post_ids:
                if reassign:
                    self.update_post(post_id, author=int(reassign))
                else:
                    self.delete_post(post_id, force=True)
            with self._write() as db:
                db.execute("UPDATE comments SET user_id = 0 WHERE user_id = ?", (user_id,))
                # Unsaved work nobody can take up again (one autosave per user and post).
                db.execute(
                    "DELETE FROM posts WHERE type = 'revision' AND status = 'autosave'"
                    " AND author = ?",
                    (user_id,),
                )
        return len(post_ids)

    def publish_due_posts(self) -> list[Post]:
        """Publish the scheduled (``future``) posts whose date has come; hooks fire for each."""
        rows = self.store.connection().execute(
            "SELECT id FROM posts WHERE status = 'future' AND date_gmt <= ?", (self.now(),)
        )
        return [self.update_post(int(row[0]), status="publish") for row in rows.fetchall()]
