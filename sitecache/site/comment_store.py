"""`CommentStore`: comments and their moderation (part of the content service)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Final

from sitecache.auth.db import DbConnection, Row
from sitecache.auth.store import sql_values
from sitecache.domain_errors import ForbiddenError, GoneError, InvalidValueError, NotFoundError
from sitecache.site.comment_flood import DEFAULT_FLOOD_INTERVAL, check_comment_flood
from sitecache.site.content_base import ContentBase, transactional
from sitecache.site.models import COMMENT_STATUSES, Comment
from sitecache.site.queries import (
    COMMENT_ORDER,
    CommentQuery,
    like_pattern,
    placeholders,
)

__all__ = ["CommentStore"]

_COMMENT_FIELDS: Final = (
    "post_id", "parent", "user_id", "author_name", "author_email", "author_url", "author_ip",
    "author_agent", "content", "date_gmt", "status", "type",
)  # fmt: skip


class CommentStore(ContentBase):
    """Reading and writing comments; writes fire ``comment_post``, ``edit_comment``,
    ``transition_comment_status``, ``deleted_comment``."""

    # ------------------------------------------------------------------ comments
    def _comments_from_rows(self, rows: Iterable[Row]) -> list[Comment]:
        return [
            Comment(**{"id": int(row["id"]), **{name: row[name] for name in _COMMENT_FIELDS}})
            for row in rows
        ]

    def get_comment(self, comment_id: int) -> Comment | None:
        """The comment with this id, or ``None``."""
        rows = self.store.connection().execute(
            "SELECT * FROM comments WHERE id = ?", sql_values([comment_id])
        )
        comments = self._comments_from_rows(rows)
        return comments[0] if comments else None

    def query_comments(self, query: CommentQuery) -> tuple[list[Comment], int]:
        """One page of the comments matching ``query`` and how many match in all."""
        where = [f"c.status IN ({placeholders(query.statuses)})"]
        args: list[Any] = list(query.statuses)
        for column, values, negate in (
            ("c.post_id", query.posts, False),
            ("c.parent", query.parents, False),
            ("c.user_id", query.authors, False),
            ("c.id", query.include, False),
            ("c.id", query.exclude, True),
        ):
            if values:
                where.append(f"{column} {'NOT ' if negate else ''}IN ({placeholders(values)})")
                args.extend(values)
        if query.author_email:
            where.append("lower(c.author_email) = lower(?)")
            args.append(query.author_email)
        if query.search:
            where.append(
                "(lower(c.content) LIKE lower(?) ESCAPE '\\'"
                " OR lower(c.author_name) LIKE lower(?) ESCAPE '\\')"
            )
            args.extend([like_pattern(query.search)] * 2)
        clause = " AND ".join(where)
        connection = self.store.connection()
        total = int(
            connection.execute(
                f"SELECT COUNT(*) FROM comments c WHERE {clause}", sql_values(args)
            ).fetchone()[0]
        )
        order = COMMENT_ORDER.get(query.orderby, COMMENT_ORDER["date_gmt"]).format(
            "ASC" if query.order.lower() == "asc" else "DESC"
        )
        offset = query.offset if query.offset is not None else (query.page - 1) * query.per_page
        rows = connection.execute(
            f"SELECT c.* FROM comments c WHERE {clause} ORDER BY {order} LIMIT ? OFFSET ?",
            sql_values([*args, query.per_page, max(offset, 0)]),
        )
        return self._comments_from_rows(rows), total

    def moderation_status(self, author_email: str, user_id: int = 0) -> str:
        """``approve`` or ``hold`` for a new comment by this author (options
        ``comment_moderation`` and ``comment_previously_approved``)."""
        if self.get_option("comment_moderation"):
            return "hold"
        if not self.get_option("comment_previously_approved"):
            return "approve"
        row = self.store.connection().execute(
            "SELECT 1 FROM comments WHERE status = 'approve' AND"
            " ((? != '' AND lower(author_email) = lower(?)) OR (? != 0 AND user_id = ?))"
            " LIMIT 1",
            (author_email, author_email, user_id, user_id),
        )
        return "approve" if row.fetchone() else "hold"

    #: Seconds one commenter waits between two comments (`check_comment_flood`; 0: off).
    comment_flood_interval: int = DEFAULT_FLOOD_INTERVAL

    @transactional
    def add_comment(self, *, check_flood: bool = False, **fields: Any) -> Comment:
        """Insert a comment; fires ``comment_post(comment_id, approved)`` (1, 0 or "spam").

        ``status`` defaults to `moderation_status`. The post must exist. With ``check_flood``
        (a visitor's or a user's own comment, not a moderator's), a comment within
        `comment_flood_interval` seconds of the same commenter's last one is refused, in the
        same transaction as the insert.

        Raises:
            ForbiddenError: ``rest_comment_invalid_post_id`` (no such post).
            InvalidValueError: ``rest_comment_content_invalid``, ``rest_comment_invalid_status``,
                ``rest_comment_invalid_parent``.
            TooManyRequestsError: ``comment_flood`` (nothing stored).
        """
        unknown = set(fields) - set(_COMMENT_FIELDS)
        if unknown:
            raise TypeError(f"unknown comment fields: {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {
            "parent": 0,
            "user_id": 0,
            "author_name": "",
            "author_email": "",
            "author_url": "",
            "author_ip": "",
            "author_agent": "",
            "date_gmt": self.now(),
            "type": "comment",
        }
        values.update(fields)
        if not str(values.get("content") or "").strip():
            raise InvalidValueError("rest_comment_content_invalid", "Invalid comment content.")
        if "status" not in values:
            values["status"] = self.moderation_status(
                str(values["author_email"]), int(values["user_id"])
            )
        if values["status"] not in COMMENT_STATUSES:
            raise InvalidValueError("rest_comment_invalid_status", "Invalid comment status.")
        with self._write() as db:
            _check_post_and_parent(db, values)
            if check_flood:
                check_comment_flood(
                    db,
                    postgres=self.store.postgres is not None,
                    hooks=self.hooks,
                    values=values,
                    interval=self.comment_flood_interval,
                    now=self.now(),
                )
            columns = list(values)
            cursor = db.execute(
                f"INSERT INTO comments ({', '.join(columns)}) VALUES ({placeholders(columns)})"
                " RETURNING id",
                list(values.values()),
            )
            comment_id = int(cursor.fetchone()[0])
        comment = self.get_comment(comment_id)
        if comment is None:  # pragma: no cover - inserted in the transaction that committed
            raise RuntimeError(f"comment {comment_id} vanished")
        approved: int | str = 0
        if comment.status in ("approve", "spam"):
            approved = 1 if comment.status == "approve" else "spam"
        self._fire("comment_post", comment.id, approved)
        return comment

    @transactional
    def update_comment(self, comment_id: int, **fields: Any) -> Comment:
        """Change a comment; fires ``edit_comment`` and, when its status changed,
        ``transition_comment_status(new, old, comment)``.

        Raises:
            NotFoundError: ``rest_comment_invalid_id``.
            InvalidValueError: an invalid status, content or post.
        """
        unknown = set(fields) - set(_COMMENT_FIELDS) - {"post_id"}
        if unknown:
            raise TypeError(f"unknown comment fields: {', '.join(sorted(unknown))}")
        old = self.get_comment(comment_id)
        if old is None:
            raise NotFoundError("rest_comment_invalid_id", "Invalid comment ID.")
        if "status" in fields and fields["status"] not in COMMENT_STATUSES:
            raise InvalidValueError("rest_comment_invalid_status", "Invalid comment status.")
        if "content" in fields and not str(fields["content"]).strip():
            raise InvalidValueError("rest_comment_content_invalid", "Invalid comment content.")
        if fields:
            with self._write() as db:
                if (
                    "post_id" in fields
                    and not db.execute(
                        "SELECT 1 FROM posts WHERE id = ?", (fields["post_id"],)
                    ).fetchone()
                ):
                    raise InvalidValueError("rest_comment_invalid_post_id", "Invalid post ID.")
                assignments = ", ".join(f"{column} = ?" for column in fields)
                db.execute(
                    f"UPDATE comments SET {assignments} WHERE id = ?",
                    [*fields.values(), comment_id],
                )
        comment = self.get_comment(comment_id)
        if comment is None:  # pragma: no cover
            raise RuntimeError(f"comment {comment_id} vanished")
        self._fire("edit_comment", comment.id, comment)
        if comment.status != old.status:
            self._fire("transition_comment_status", comment.status, old.status, comment)
        return comment

    @transactional
    def delete_comment(self, comment_id: int, force: bool = False) -> Comment:
        """Trash a comment (a status transition) or, with ``force``, delete it for good
        (``deleted_comment``; replies move up to its parent). Returns it as it was.

        Raises:
            NotFoundError: ``rest_comment_invalid_id``.
            GoneError: ``rest_already_trashed``.
        """
        comment = self.get_comment(comment_id)
        if comment is None:
            raise NotFoundError("rest_comment_invalid_id", "Invalid comment ID.")
        if not force:
            if comment.status == "trash":
                raise GoneError("rest_already_trashed", "The comment has already been trashed.")
            self.update_comment(comment_id, status="trash")
            return comment
        with self._write() as db:
            db.execute(
                "UPDATE comments SET parent = ? WHERE parent = ?", (comment.parent, comment_id)
            )
            db.execute("DELETE FROM comments WHERE id = ?", (comment_id,))
        self._fire("deleted_comment", comment.id, comment)
        return replace(comment)


def _check_post_and_parent(db: DbConnection, values: Mapping[str, Any]) -> None:
    """Refuse a new comment on no post, or replying to a comment not on its post.

    Raises:
        ForbiddenError: ``rest_comment_invalid_post_id``.
        InvalidValueError: ``rest_comment_invalid_parent``.
    """
    if not db.execute("SELECT 1 FROM posts WHERE id = ?", (values.get("post_id"),)).fetchone():
        raise ForbiddenError(
            "rest_comment_invalid_post_id",
            "Sorry, you are not allowed to create this comment without a post.",
        )
    if (
        values["parent"]
        and not db.execute(
            "SELECT 1 FROM comments WHERE id = ? AND post_id = ?",
            (values["parent"], values["post_id"]),
        ).fetchone()
    ):
        raise InvalidValueError("rest_comment_invalid_parent", "Invalid comment parent.")
