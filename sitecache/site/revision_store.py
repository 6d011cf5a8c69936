"""`RevisionStore`: the revisions and autosaves of posts and pages (part of the content service).

A revision is a row of type ``revision`` (status ``inherit``) whose ``parent`` is the post and
whose slug is ``<parent>-revision-v1``; it keeps the post's title, content and excerpt as they
were after a change, dated with the post's modification date. The post service stores one in
the change's own transaction whenever a post or page is created with some text, or updated so
that its text differs from its newest revision (or it has none yet), then keeps only the
newest ``revisions_to_keep`` (-1 keeps all, 0 none). So the newest revision always equals the
post's current text, unless revisions are off or the author's autosave of a draft changed the
draft since (WordPress stores no revision then; the next save does).

An autosave is the same kind of row with the status ``autosave`` and the slug
``<parent>-autosave-v1``: one per user and post (a unique index says so), overwritten by the
next autosave of that user, never counted against the limit, deleted with its post. Neither
fires hooks: they are on no public page, so they purge nothing from the page cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from sitecache.auth.db import DbConnection, Row
from sitecache.domain_errors import NotFoundError
from sitecache.site.content_base import ContentBase, transactional
from sitecache.site.models import Post
from sitecache.site.queries import placeholders

__all__ = [
    "REVISIONED_TYPES",
    "REVISION_FIELDS",
    "RevisionStore",
    "autosave_slug",
    "revision_slug",
]

REVISION_FIELDS: Final = ("title", "content", "excerpt")
"""What a revision keeps of its post (WordPress's ``_wp_post_revision_fields``)."""
REVISIONED_TYPES: Final = frozenset({"post", "page"})
"""The post types that keep revisions and take autosaves."""


def revision_slug(parent_id: int) -> str:
    """The slug of every revision of ``parent_id``."""
    return f"{int(parent_id)}-revision-v1"


def autosave_slug(parent_id: int) -> str:
    """The slug of every autosave of ``parent_id``."""
    return f"{int(parent_id)}-autosave-v1"


def same_text(first: Post, second: Post) -> bool:
    """Whether two posts have the same title, content and excerpt."""
    return all(getattr(first, name) == getattr(second, name) for name in REVISION_FIELDS)


_NEWEST_FIRST: Final = " ORDER BY date_gmt DESC, id DESC"


class RevisionStore(ContentBase):
    """Revisions and autosaves (see the module docstring)."""

    if TYPE_CHECKING:  # provided by ContentService

        def get_post(self, post_id: int) -> Post | None: ...
        def _posts_from_rows(self, rows: Sequence[Row]) -> list[Post]: ...

    # ------------------------------------------------------------------ reading
    def revisions_to_keep(self) -> int:
        """How many revisions a post keeps (option ``revisions_to_keep``; -1: every one)."""
        return int(self.get_option("revisions_to_keep"))

    def get_revisions(self, post_id: int) -> list[Post]:
        """The revisions of a post (not its autosaves), newest first."""
        rows = self.store.connection().execute(
            "SELECT * FROM posts WHERE parent = ? AND type = 'revision' AND status = 'inherit'"
            + _NEWEST_FIRST,
            (post_id,),
        )
        return self._posts_from_rows(rows.fetchall())

    def count_revisions(self, post_id: int) -> int:
        """How many revisions a post has (not counting autosaves)."""
        row = (
            self.store.connection()
            .execute(
                "SELECT COUNT(*) FROM posts"
                " WHERE parent = ? AND type = 'revision' AND status = 'inherit'",
                (post_id,),
            )
            .fetchone()
        )
        return int(row[0])

    def revision_summary(self, post_id: int) -> tuple[int, int | None]:
        """``(count, newest id)`` of a post's revisions (``(0, None)`` while revisions are
        off, as WordPress's ``wp_get_latest_revision_id_and_total_count``)."""
        if self.revisions_to_keep() == 0:
            return 0, None
        rows = self.store.connection().execute(
            "SELECT id FROM posts WHERE parent = ? AND type = 'revision' AND status = 'inherit'"
            + _NEWEST_FIRST,
            (post_id,),
        )
        ids = [int(row[0]) for row in rows.fetchall()]
        return len(ids), (ids[0] if ids else None)

    def latest_revision(self, post_id: int) -> Post | None:
        """The newest revision of a post, or ``None``."""
        rows = self.store.connection().execute(
            "SELECT * FROM posts WHERE parent = ? AND type = 'revision' AND status = 'inherit'"
            + _NEWEST_FIRST
            + " LIMIT 1",
            (post_id,),
        )
        found = self._posts_from_rows(rows.fetchall())
        return found[0] if found else None

    def get_autosaves(self, post_id: int) -> list[Post]:
        """Every user's autosave of a post, newest first."""
        rows = self.store.connection().execute(
            "SELECT * FROM posts WHERE parent = ? AND type = 'revision' AND status = 'autosave'"
            + _NEWEST_FIRST,
            (post_id,),
        )
        return self._posts_from_rows(rows.fetchall())

    def get_autosave(self, post_id: int, user_id: int) -> Post | None:
        """The autosave of a post by ``user_id``, or ``None``."""
        rows = self.store.connection().execute(
            "SELECT * FROM posts WHERE parent = ? AND type = 'revision' AND status = 'autosave'"
            " AND author = ?",
            (post_id, user_id),
        )
        found = self._posts_from_rows(rows.fetchall())
        return found[0] if found else None

    # ------------------------------------------------------------------ writing
    def _save_revision(self, db: DbConnection, post: Post, editor: int | None) -> None:
        """Inside a post's write transaction: store ``post``'s text as a revision by
        ``editor`` (the post's author when ``None``) unless it equals the newest revision,
        then keep only the newest ``revisions_to_keep``."""
        if post.type not in REVISIONED_TYPES:
            return
        keep = self.revisions_to_keep()
        latest = self.latest_revision(post.id)
        if keep != 0 and (latest is None or not same_text(latest, post)):
            db.execute(
                "INSERT INTO posts (type, status, author, parent, slug, title, content, excerpt,"
                " date_gmt, modified_gmt) VALUES ('revision', 'inherit', ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    post.author if editor is None else int(editor),
                    post.id,
                    revision_slug(post.id),
                    post.title,
                    post.content,
                    post.excerpt,
                    post.modified_gmt,
                    post.modified_gmt,
                ),
            )
        if keep >= 0:
            self._trim_revisions(db, post.id, keep)

    def _trim_revisions(self, db: DbConnection, post_id: int, keep: int) -> None:
        """Delete all but the newest ``keep`` revisions of a post (autosaves stay)."""
        stale = [revision.id for revision in self.get_revisions(post_id)[keep:]]
        if stale:
            db.execute(f"DELETE FROM posts WHERE id IN ({placeholders(stale)})", stale)

    @transactional
    def put_autosave(
        self, post_id: int, user_id: int, title: str, content: str, excerpt: str
    ) -> Post:
        """Create or overwrite ``user_id``'s autosave of a post with this text (one per user
        and post). As in WordPress, text equal to the post's own leaves an existing autosave
        as it is (and returns it).

        Raises:
            NotFoundError: ``rest_post_invalid_id`` when the post does not exist.
        """
        post = self.get_post(post_id)
        if post is None or post.type not in REVISIONED_TYPES:
            raise NotFoundError("rest_post_invalid_id", "Invalid post ID.")
        existing = self.get_autosave(post_id, user_id)
        text = {"title": title, "content": content, "excerpt": excerpt}
        if existing is not None and all(text[name] == getattr(post, name) for name in text):
            return existing
        now = self.now()
        with self._write() as db:
            row = db.execute(
                "INSERT INTO posts (type, status, author, parent, slug, title, content, excerpt,"
                " date_gmt, modified_gmt) VALUES ('revision', 'autosave', ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (parent, author) WHERE type = 'revision' AND status = 'autosave'"
                " DO UPDATE SET title = excluded.title, content = excluded.content,"
                " excerpt = excluded.excerpt, date_gmt = excluded.date_gmt,"
                " modified_gmt = excluded.modified_gmt"
                " RETURNING id",
                (user_id, post_id, autosave_slug(post_id), title, content, excerpt, now, now),
            ).fetchone()
        autosave = self.get_post(int(row[0]))
        if autosave is None:  # pragma: no cover - written in the transaction that just committed
            raise RuntimeError(f"autosave of {post_id} vanished")
        return autosave

    @transactional
    def delete_revision(self, revision_id: int) -> Post:
        """Delete a revision or an autosave for good; returns it as it was.

        Raises:
            NotFoundError: ``rest_post_invalid_id`` when it is not a revision.
        """
        revision = self.get_post(revision_id)
        if revision is None or revision.type != "revision":
            raise NotFoundError("rest_post_invalid_id", "Invalid revision ID.")
        with self._write() as db:
            db.execute("DELETE FROM posts WHERE id = ? AND type = 'revision'", (revision_id,))
        return revision
