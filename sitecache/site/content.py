"""`ContentService`: the one way to read and write the site's content, and the hooks it fires.

Every write (posts, terms, comments, options) goes through this service, commits, then fires
the WordPress-named actions on the application's hooks:

==============================  ===========================================================
action                          arguments
==============================  ===========================================================
``transition_post_status``      ``(new_status, old_status, post)`` (old is ``"new"`` on insert)
``save_post``                   ``(post_id, post, update)``
``delete_post``                 ``(post_id, post)`` before a post is deleted for good
``deleted_post``                ``(post_id, post)`` after it was (``post`` keeps its terms)
``created_term``                ``(term_id, taxonomy)``
``edited_term``                 ``(term_id, taxonomy)``
``delete_term``                 ``(term_id, taxonomy, term)`` after a term was deleted
``comment_post``                ``(comment_id, approved)`` with approved ``1``, ``0`` or ``"spam"``
``edit_comment``                ``(comment_id, comment)``
``transition_comment_status``   ``(new_status, old_status, comment)``
``deleted_comment``             ``(comment_id, comment)``
``updated_option``              ``(name, old_value, new_value)``
==============================  ===========================================================

Hooks run after the transaction commits, so a callback always reads the new state.
Revisions are written as a side effect of updating a post and fire no hooks of their own.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, tzinfo
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sitecache.auth.store import SiteStore
from sitecache.errors import RestError
from sitecache.hooks import Hooks
from sitecache.site.migrations import migrate_content
from sitecache.site.models import (
    COMMENT_STATUSES,
    POST_STATUSES,
    POST_TYPES,
    TAXONOMIES,
    Comment,
    Post,
    Term,
    sanitize_title,
)
from sitecache.site.options import OptionStore

__all__ = ["CommentQuery", "ContentService", "PostQuery", "TermQuery"]

_POST_FIELDS: Final = (
    "type", "status", "author", "parent", "slug", "title", "content", "excerpt", "date_gmt",
    "modified_gmt", "comment_status", "ping_status", "password", "menu_order", "sticky",
    "mime_type",
)  # fmt: skip
_COMMENT_FIELDS: Final = (
    "post_id", "parent", "user_id", "author_name", "author_email", "author_url", "author_ip",
    "author_agent", "content", "date_gmt", "status", "type",
)  # fmt: skip
_POST_ORDER: Final[Mapping[str, str]] = {
    "date": "p.date_gmt {0}, p.id {0}",
    "id": "p.id {0}",
    "title": "p.title COLLATE NOCASE {0}, p.id {0}",
    "slug": "p.slug {0}, p.id {0}",
    "modified": "p.modified_gmt {0}, p.id {0}",
    "menu_order": "p.menu_order {0}, p.id {0}",
    "author": "p.author {0}, p.id {0}",
    "parent": "p.parent {0}, p.id {0}",
}
_TERM_ORDER: Final[Mapping[str, str]] = {
    "name": "t.name COLLATE NOCASE {0}, t.id {0}",
    "id": "t.id {0}",
    "slug": "t.slug {0}, t.id {0}",
    "count": "count {0}, t.id {0}",
    "description": "t.description {0}, t.id {0}",
}
_COMMENT_ORDER: Final[Mapping[str, str]] = {
    "date": "c.date_gmt {0}, c.id {0}",
    "date_gmt": "c.date_gmt {0}, c.id {0}",
    "id": "c.id {0}",
    "post": "c.post_id {0}, c.id {0}",
    "parent": "c.parent {0}, c.id {0}",
}
_TERM_COUNT: Final = (
    "(SELECT COUNT(*) FROM term_relationships r JOIN posts cp ON cp.id = r.post_id"
    " WHERE r.term_id = t.id AND cp.status = 'publish') AS count"
)


def _error(code: str, message: str, status: int) -> RestError:
    return RestError(code, message, {"status": status})


def _like(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere (``\\`` escapes the wildcards)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _placeholders(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


@dataclass(frozen=True, slots=True)
class PostQuery:
    """What `ContentService.query_posts` selects; every filter is optional."""

    types: tuple[str, ...] = ("post",)
    statuses: tuple[str, ...] = ("publish",)
    authors: tuple[int, ...] = ()
    authors_exclude: tuple[int, ...] = ()
    term_ids: tuple[int, ...] = ()
    """Posts carrying any of these terms."""
    terms_exclude: tuple[int, ...] = ()
    search: str = ""
    year: int | None = None
    month: int | None = None
    day: int | None = None
    include: tuple[int, ...] = ()
    exclude: tuple[int, ...] = ()
    slugs: tuple[str, ...] = ()
    parents: tuple[int, ...] = ()
    after: int | None = None
    before: int | None = None
    orderby: str = "date"
    order: str = "desc"
    page: int = 1
    per_page: int = 10
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class TermQuery:
    """What `ContentService.query_terms` selects."""

    taxonomy: str = "category"
    search: str = ""
    include: tuple[int, ...] = ()
    exclude: tuple[int, ...] = ()
    slugs: tuple[str, ...] = ()
    parent: int | None = None
    post: int | None = None
    hide_empty: bool = False
    orderby: str = "name"
    order: str = "asc"
    page: int = 1
    per_page: int = 10
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class CommentQuery:
    """What `ContentService.query_comments` selects."""

    statuses: tuple[str, ...] = ("approve",)
    posts: tuple[int, ...] = ()
    parents: tuple[int, ...] = ()
    authors: tuple[int, ...] = ()
    author_email: str = ""
    search: str = ""
    include: tuple[int, ...] = ()
    exclude: tuple[int, ...] = ()
    orderby: str = "date_gmt"
    order: str = "desc"
    page: int = 1
    per_page: int = 10
    offset: int | None = None


class ContentService:
    """The site's content in the site database, with hooks on every write.

    Args:
        store: the site database (the content migrations are applied on construction).
        hooks: the application's hooks.
        option_defaults: defaults of options taken from the configuration.
        clock: seconds since the epoch.
    """

    def __init__(
        self,
        store: SiteStore,
        hooks: Hooks,
        option_defaults: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.hooks = hooks
        self.clock = clock
        self.options = OptionStore(store, dict(option_defaults or {}))
        self._local = threading.local()
        migrate_content(store)

    # ------------------------------------------------------------------ transactions and hooks
    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, or the surrounding `batch`'s."""
        if getattr(self._local, "queue", None) is not None:
            yield self.store.connection()
            return
        with self.store.transaction() as db:
            yield db

    def _fire(self, name: str, *args: Any) -> None:
        """Fire an action now, or when the surrounding `batch` commits."""
        queue: list[tuple[str, tuple[Any, ...]]] | None = getattr(self._local, "queue", None)
        if queue is not None:
            queue.append((name, args))
        else:
            self.hooks.do_action(name, *args)

    @contextmanager
    def batch(self) -> Iterator[ContentService]:
        """Many writes in one transaction (this thread's): all commit or none do, and their
        hooks fire after the commit, in order (none fire on a rollback)."""
        if getattr(self._local, "queue", None) is not None:
            raise RuntimeError("batches do not nest")
        self._local.queue = []
        try:
            with self.store.transaction():
                yield self
            queue: list[tuple[str, tuple[Any, ...]]] = self._local.queue
        finally:
            self._local.queue = None
        for name, args in queue:
            self.hooks.do_action(name, *args)

    def now(self) -> int:
        """The current time, whole seconds since the epoch."""
        return int(self.clock())

    # ------------------------------------------------------------------ options
    def get_option(self, name: str) -> Any:
        """The value of a known site option (its default when never set)."""
        return self.options.get(name)

    def update_option(self, name: str, value: Any) -> bool:
        """Set a site option; ``False`` when the value did not change.

        Fires ``updated_option(name, old, new)`` when it changed.

        Raises:
            RestError: unknown option or a value its schema refuses (400).
        """
        self.options.validate(name, value)
        if name == "timezone" and value:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise _error("invalid_option", "timezone is not a known timezone.", 400) from exc
        old = self.options.get(name)
        if old == value:
            return False
        with self._write():
            self.options.write(name, value)
        self._fire("updated_option", name, old, value)
        return True

    def timezone(self) -> tzinfo:
        """The site's timezone (option ``timezone``; UTC when empty or unknown)."""
        name = self.get_option("timezone")
        if name:
            try:
                return ZoneInfo(str(name))
            except (ZoneInfoNotFoundError, ValueError):
                return UTC
        return UTC

    # ------------------------------------------------------------------ posts: reading
    def _posts_from_rows(self, rows: Iterable[sqlite3.Row]) -> list[Post]:
        rows = list(rows)
        terms = self._term_ids_of([int(row["id"]) for row in rows])
        return [
            Post(
                id=int(row["id"]),
                type=str(row["type"]),
                status=str(row["status"]),
                author=int(row["author"]),
                parent=int(row["parent"]),
                slug=str(row["slug"]),
                title=str(row["title"]),
                content=str(row["content"]),
                excerpt=str(row["excerpt"]),
                date_gmt=int(row["date_gmt"]),
                modified_gmt=int(row["modified_gmt"]),
                comment_status=str(row["comment_status"]),
                ping_status=str(row["ping_status"]),
                password=str(row["password"]),
                menu_order=int(row["menu_order"]),
                sticky=bool(row["sticky"]),
                mime_type=str(row["mime_type"]),
                term_ids=tuple(terms.get(int(row["id"]), ())),
            )
            for row in rows
        ]

    def _term_ids_of(self, post_ids: Sequence[int]) -> dict[int, list[int]]:
        if not post_ids:
            return {}
        found: dict[int, list[int]] = {}
        rows = self.store.connection().execute(
            "SELECT post_id, term_id FROM term_relationships"
            f" WHERE post_id IN ({_placeholders(post_ids)}) ORDER BY term_id",
            tuple(post_ids),
        )
        for row in rows:
            found.setdefault(int(row[0]), []).append(int(row[1]))
        return found

    def get_post(self, post_id: int) -> Post | None:
        """The post with this id (any type and status), or ``None``."""
        rows = self.store.connection().execute("SELECT * FROM posts WHERE id = ?", (post_id,))
        posts = self._posts_from_rows(rows)
        return posts[0] if posts else None

    def get_posts(self, post_ids: Sequence[int]) -> dict[int, Post]:
        """The posts with these ids that exist, by id."""
        if not post_ids:
            return {}
        rows = self.store.connection().execute(
            f"SELECT * FROM posts WHERE id IN ({_placeholders(post_ids)})",
            tuple(post_ids),
        )
        return {post.id: post for post in self._posts_from_rows(rows)}

    def get_post_by_slug(self, post_type: str, slug: str, parent: int | None = None) -> Post | None:
        """The newest post of ``post_type`` with ``slug`` (and ``parent`` when given)."""
        sql = "SELECT * FROM posts WHERE type = ? AND slug = ?"
        args: list[Any] = [post_type, slug]
        if parent is not None:
            sql += " AND parent = ?"
            args.append(parent)
        rows = self.store.connection().execute(sql + " ORDER BY id DESC LIMIT 1", args)
        posts = self._posts_from_rows(rows)
        return posts[0] if posts else None

    def query_posts(self, query: PostQuery) -> tuple[list[Post], int]:
        """The posts matching ``query`` (one page of them) and how many match in all."""
        where = [
            f"p.type IN ({_placeholders(query.types)})",
            f"p.status IN ({_placeholders(query.statuses)})",
        ]
        args: list[Any] = [*query.types, *query.statuses]

        def among(column: str, values: Sequence[Any], negate: bool = False) -> None:
            if values:
                where.append(f"{column} {'NOT ' if negate else ''}IN ({_placeholders(values)})")
                args.extend(values)

        among("p.author", query.authors)
        among("p.author", query.authors_exclude, negate=True)
        among("p.id", query.include)
        among("p.id", query.exclude, negate=True)
        among("p.slug", query.slugs)
        among("p.parent", query.parents)
        if query.term_ids:
            where.append(
                "p.id IN (SELECT post_id FROM term_relationships"
                f" WHERE term_id IN ({_placeholders(query.term_ids)}))"
            )
            args.extend(query.term_ids)
        if query.terms_exclude:
            where.append(
                "p.id NOT IN (SELECT post_id FROM term_relationships"
                f" WHERE term_id IN ({_placeholders(query.terms_exclude)}))"
            )
            args.extend(query.terms_exclude)
        if query.search:
            for word in query.search.split()[:10]:
                where.append(
                    "(p.title LIKE ? ESCAPE '\\' OR p.content LIKE ? ESCAPE '\\'"
                    " OR p.excerpt LIKE ? ESCAPE '\\')"
                )
                args.extend([_like(word)] * 3)
        if query.after is not None:
            where.append("p.date_gmt > ?")
            args.append(query.after)
        if query.before is not None:
            where.append("p.date_gmt < ?")
            args.append(query.before)
        if query.year is not None:
            start, end = self._date_range(query.year, query.month, query.day)
            where.append("p.date_gmt >= ? AND p.date_gmt < ?")
            args.extend([start, end])
        clause = " AND ".join(where)
        connection = self.store.connection()
        total = int(
            connection.execute(
                f"SELECT COUNT(*) FROM posts p WHERE {clause}",
                args,
            ).fetchone()[0]
        )
        order = _POST_ORDER.get(query.orderby, _POST_ORDER["date"]).format(
            "ASC" if query.order.lower() == "asc" else "DESC"
        )
        if query.orderby == "include" and query.include:
            order = (
                "CASE p.id "
                + " ".join(
                    f"WHEN {int(post_id)} THEN {position}"
                    for position, post_id in enumerate(query.include)
                )
                + " END"
            )
        offset = query.offset if query.offset is not None else (query.page - 1) * query.per_page
        rows = connection.execute(
            f"SELECT p.* FROM posts p WHERE {clause} ORDER BY {order} LIMIT ? OFFSET ?",
            [*args, query.per_page, max(offset, 0)],
        )
        return self._posts_from_rows(rows), total

    def _date_range(self, year: int, month: int | None, day: int | None) -> tuple[int, int]:
        """UTC seconds bounding a local year, month or day of the site's timezone."""
        from datetime import datetime, timedelta

        zone = self.timezone()
        start = datetime(year, month or 1, day or 1, tzinfo=zone)
        if day is not None:
            end = start + timedelta(days=1)
        elif month is not None:
            end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=zone)
        else:
            end = datetime(year + 1, 1, 1, tzinfo=zone)
        return int(start.timestamp()), int(end.timestamp())

    def comment_counts(self, post_ids: Sequence[int]) -> dict[int, int]:
        """How many approved comments each of these posts has."""
        if not post_ids:
            return {}
        rows = self.store.connection().execute(
            "SELECT post_id, COUNT(*) FROM comments"
            f" WHERE status = 'approve' AND post_id IN ({_placeholders(post_ids)})"
            " GROUP BY post_id",
            tuple(post_ids),
        )
        return {int(row[0]): int(row[1]) for row in rows}

    def published_authors(self) -> list[int]:
        """Ids of the users with at least one published post, ascending."""
        rows = self.store.connection().execute(
            "SELECT DISTINCT author FROM posts WHERE type = 'post' AND status = 'publish'"
            " ORDER BY author"
        )
        return [int(row[0]) for row in rows]

    # ------------------------------------------------------------------ posts: writing
    def _unique_slug(
        self, db: sqlite3.Connection, post_type: str, slug: str, exclude: int = 0
    ) -> str:
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
            raise _error("rest_invalid_post_type", "Invalid post type.", 400)
        status = fields.get("status", "draft")
        if status not in POST_STATUSES and status != "inherit":
            raise _error("rest_invalid_status", "Invalid post status.", 400)

    def _check_term_ids(self, db: sqlite3.Connection, term_ids: Sequence[int]) -> None:
        if not term_ids:
            return
        found = db.execute(
            f"SELECT COUNT(*) FROM terms WHERE id IN ({_placeholders(term_ids)})",
            tuple(term_ids),
        ).fetchone()[0]
        if int(found) != len(set(term_ids)):
            raise _error("rest_invalid_term_id", "Invalid term ID.", 400)

    def _scheduled_status(self, status: str, date_gmt: int) -> str:
        """``publish`` with a date in the future becomes ``future``, and back."""
        if status == "publish" and date_gmt > self.now():
            return "future"
        if status == "future" and date_gmt <= self.now():
            return "publish"
        return status

    def create_post(self, **fields: Any) -> Post:
        """Insert a post; fires ``transition_post_status(new, "new", post)`` and
        ``save_post(id, post, False)``.

        Fields are the columns of `Post` plus ``term_ids``. Missing: ``type`` post, ``status``
        draft, dates now, the slug from the title, a ``post`` with no category gets the
        ``default_category`` when it exists.

        Raises:
            RestError: an invalid type, status or term (400).
        """
        self._check_post_fields(fields)
        now = self.now()
        values: dict[str, Any] = {
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
        }
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
            if values["type"] == "post" and not self._has_category(db, term_ids):
                default = int(self.get_option("default_category"))
                if db.execute(
                    "SELECT 1 FROM terms WHERE id = ? AND taxonomy = 'category'", (default,)
                ).fetchone():
                    term_ids.append(default)
            columns = list(values)
            cursor = db.execute(
                f"INSERT INTO posts ({', '.join(columns)}) VALUES ({_placeholders(columns)})",
                [int(v) if isinstance(v, bool) else v for v in values.values()],
            )
            post_id = int(cursor.lastrowid or 0)
            db.executemany(
                "INSERT OR IGNORE INTO term_relationships (post_id, term_id) VALUES (?, ?)",
                [(post_id, term_id) for term_id in term_ids],
            )
        post = self._must_get(post_id)
        if post.type != "revision":
            self._fire("transition_post_status", post.status, "new", post)
            self._fire("save_post", post.id, post, False)
        return post

    def _has_category(self, db: sqlite3.Connection, term_ids: Sequence[int]) -> bool:
        if not term_ids:
            return False
        return (
            db.execute(
                "SELECT 1 FROM terms WHERE taxonomy = 'category'"
                f" AND id IN ({_placeholders(term_ids)})",
                tuple(term_ids),
            ).fetchone()
            is not None
        )

    def _must_get(self, post_id: int) -> Post:
        post = self.get_post(post_id)
        if post is None:  # pragma: no cover - written in the transaction that just committed
            raise RuntimeError(f"post {post_id} vanished")
        return post

    def update_post(self, post_id: int, **fields: Any) -> Post:
        """Change a post; fires ``transition_post_status(new, old, post)`` and
        ``save_post(id, post, True)``. Changing the title, content or excerpt of a post or
        page keeps the previous version as a revision. ``term_ids``, when given, replaces all
        the post's terms (`set_post_terms` replaces one taxonomy's).

        Raises:
            RestError: ``rest_post_invalid_id`` (404), invalid status or term (400).
        """
        self._check_post_fields(fields)
        old = self.get_post(post_id)
        if old is None:
            raise _error("rest_post_invalid_id", "Invalid post ID.", 404)
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
            assignments = ", ".join(f"{column} = ?" for column in values)
            db.execute(
                f"UPDATE posts SET {assignments} WHERE id = ?",
                [*(int(v) if isinstance(v, bool) else v for v in values.values()), post_id],
            )
            if term_ids is not None:
                term_ids = list(term_ids)
                self._check_term_ids(db, term_ids)
                self._replace_terms(db, post_id, term_ids)
            changed = any(
                key in values and values[key] != getattr(old, key)
                for key in ("title", "content", "excerpt")
            )
            if changed and old.type in ("post", "page"):
                self._insert_revision(db, old)
        post = self._must_get(post_id)
        if post.type != "revision":
            self._fire("transition_post_status", post.status, old.status, post)
            self._fire("save_post", post.id, post, True)
        return post

    def _replace_terms(self, db: sqlite3.Connection, post_id: int, term_ids: list[int]) -> None:
        db.execute("DELETE FROM term_relationships WHERE post_id = ?", (post_id,))
        db.executemany(
            "INSERT OR IGNORE INTO term_relationships (post_id, term_id) VALUES (?, ?)",
            [(post_id, term_id) for term_id in term_ids],
        )

    def set_post_terms(self, post_id: int, taxonomy: str, term_ids: Sequence[int]) -> Post:
        """Replace a post's terms of one taxonomy (``save_post`` fires)."""
        post = self.get_post(post_id)
        if post is None:
            raise _error("rest_post_invalid_id", "Invalid post ID.", 404)
        keep = [
            term.id for term in self.get_terms(post.term_ids).values() if term.taxonomy != taxonomy
        ]
        with self._write() as db:
            self._check_term_ids(db, list(term_ids))
            db.execute("DELETE FROM term_relationships WHERE post_id = ?", (post_id,))
            db.executemany(
                "INSERT OR IGNORE INTO term_relationships (post_id, term_id) VALUES (?, ?)",
                [(post_id, term_id) for term_id in [*keep, *term_ids]],
            )
        updated = self._must_get(post_id)
        self._fire("transition_post_status", updated.status, post.status, updated)
        self._fire("save_post", updated.id, updated, True)
        return updated

    def _insert_revision(self, db: sqlite3.Connection, old: Post) -> None:
        now = self.now()
        db.execute(
            "INSERT INTO posts (type, status, author, parent, slug, title, content, excerpt,"
            " date_gmt, modified_gmt) VALUES ('revision', 'inherit', ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                old.author,
                old.id,
                f"{old.id}-revision-v1",
                old.title,
                old.content,
                old.excerpt,
                now,
                now,
            ),
        )

    def delete_post(self, post_id: int, force: bool = False) -> Post:
        """Trash a post (status ``trash``; hooks as for an update) or, with ``force``, delete
        it and its comments, terms links and revisions for good (``delete_post`` before,
        ``deleted_post`` after). Returns the post as it was before.

        Raises:
            RestError: ``rest_post_invalid_id`` (404); ``rest_already_trashed`` (410).
        """
        post = self.get_post(post_id)
        if post is None:
            raise _error("rest_post_invalid_id", "Invalid post ID.", 404)
        if not force:
            if post.status == "trash":
                raise _error("rest_already_trashed", "The post has already been deleted.", 410)
            self.update_post(post_id, status="trash")
            return post
        self._fire("delete_post", post.id, post)
        with self._write() as db:
            db.execute("DELETE FROM posts WHERE parent = ? AND type = 'revision'", (post_id,))
            db.execute("DELETE FROM posts WHERE id = ?", (post_id,))
        self._fire("deleted_post", post.id, post)
        return post

    def publish_due_posts(self) -> list[Post]:
        """Publish the scheduled (``future``) posts whose date has come; hooks fire for each."""
        rows = self.store.connection().execute(
            "SELECT id FROM posts WHERE status = 'future' AND date_gmt <= ?", (self.now(),)
        )
        return [self.update_post(int(row[0]), status="publish") for row in rows.fetchall()]

    # ------------------------------------------------------------------ terms
    def _terms_from_rows(self, rows: Iterable[sqlite3.Row]) -> list[Term]:
        return [
            Term(
                id=int(row["id"]),
                taxonomy=str(row["taxonomy"]),
                name=str(row["name"]),
                slug=str(row["slug"]),
                description=str(row["description"]),
                parent=int(row["parent"]),
                count=int(row["count"]),
            )
            for row in rows
        ]

    def get_term(self, term_id: int, taxonomy: str | None = None) -> Term | None:
        """The term with this id (of ``taxonomy`` when given), or ``None``."""
        terms = self.get_terms([term_id])
        term = terms.get(term_id)
        if term is None or (taxonomy is not None and term.taxonomy != taxonomy):
            return None
        return term

    def get_terms(self, term_ids: Sequence[int]) -> dict[int, Term]:
        """The terms with these ids that exist, by id."""
        if not term_ids:
            return {}
        rows = self.store.connection().execute(
            f"SELECT t.*, {_TERM_COUNT} FROM terms t WHERE t.id IN ({_placeholders(term_ids)})",
            tuple(term_ids),
        )
        return {term.id: term for term in self._terms_from_rows(rows)}

    def get_term_by_slug(self, taxonomy: str, slug: str) -> Term | None:
        """The term of ``taxonomy`` with ``slug``, or ``None``."""
        rows = self.store.connection().execute(
            f"SELECT t.*, {_TERM_COUNT} FROM terms t WHERE t.taxonomy = ? AND t.slug = ?",
            (taxonomy, slug),
        )
        terms = self._terms_from_rows(rows)
        return terms[0] if terms else None

    def query_terms(self, query: TermQuery) -> tuple[list[Term], int]:
        """One page of the terms matching ``query`` and how many match in all."""
        where = ["t.taxonomy = ?"]
        args: list[Any] = [query.taxonomy]
        for column, values, negate in (
            ("t.id", query.include, False),
            ("t.id", query.exclude, True),
            ("t.slug", query.slugs, False),
        ):
            if values:
                where.append(f"{column} {'NOT ' if negate else ''}IN ({_placeholders(values)})")
                args.extend(values)
        if query.search:
            where.append("(t.name LIKE ? ESCAPE '\\' OR t.slug LIKE ? ESCAPE '\\')")
            args.extend([_like(query.search)] * 2)
        if query.parent is not None:
            where.append("t.parent = ?")
            args.append(query.parent)
        if query.post is not None:
            where.append("t.id IN (SELECT term_id FROM term_relationships WHERE post_id = ?)")
            args.append(query.post)
        clause = " AND ".join(where)
        having = " WHERE count > 0" if query.hide_empty else ""
        inner = f"SELECT t.*, {_TERM_COUNT} FROM terms t WHERE {clause}"
        connection = self.store.connection()
        total = int(
            connection.execute(f"SELECT COUNT(*) FROM ({inner}){having}", args).fetchone()[0]
        )
        order = _TERM_ORDER.get(query.orderby, _TERM_ORDER["name"]).format(
            "DESC" if query.order.lower() == "desc" else "ASC"
        )
        offset = query.offset if query.offset is not None else (query.page - 1) * query.per_page
        rows = connection.execute(
            f"SELECT * FROM ({inner}) t{having} ORDER BY {order} LIMIT ? OFFSET ?",
            [*args, query.per_page, max(offset, 0)],
        )
        return self._terms_from_rows(rows), total

    def create_term(
        self,
        taxonomy: str,
        name: str,
        slug: str = "",
        description: str = "",
        parent: int = 0,
    ) -> Term:
        """Add a term; fires ``created_term(term_id, taxonomy)``.

        Raises:
            RestError: ``invalid_taxonomy``, ``term_exists`` (400), ``rest_term_invalid`` parent.
        """
        if taxonomy not in TAXONOMIES:
            raise _error("invalid_taxonomy", "Invalid taxonomy.", 400)
        name = name.strip()
        if not name:
            raise _error("empty_term_name", "A name is required for this term.", 400)
        slug = sanitize_title(slug or name, "term")
        with self._write() as db:
            self._check_parent(db, taxonomy, parent)
            if db.execute(
                "SELECT 1 FROM terms WHERE taxonomy = ? AND slug = ?", (taxonomy, slug)
            ).fetchone():
                raise _error("term_exists", "A term with the name provided already exists.", 400)
            cursor = db.execute(
                "INSERT INTO terms (taxonomy, name, slug, description, parent)"
                " VALUES (?, ?, ?, ?, ?)",
                (taxonomy, name, slug, description, parent if taxonomy == "category" else 0),
            )
            term_id = int(cursor.lastrowid or 0)
        term = self.get_term(term_id)
        if term is None:  # pragma: no cover - inserted in the transaction that just committed
            raise RuntimeError(f"term {term_id} vanished")
        self._fire("created_term", term.id, term.taxonomy)
        return term

    def _check_parent(self, db: sqlite3.Connection, taxonomy: str, parent: int) -> None:
        if (
            parent
            and not db.execute(
                "SELECT 1 FROM terms WHERE id = ? AND taxonomy = ?", (parent, taxonomy)
            ).fetchone()
        ):
            raise _error("rest_term_invalid", "Parent term does not exist.", 400)

    def update_term(self, term_id: int, **fields: Any) -> Term:
        """Change a term's name, slug, description or parent; fires ``edited_term``.

        Raises:
            RestError: ``rest_term_invalid`` (404), ``duplicate_term_slug`` (400).
        """
        unknown = set(fields) - {"name", "slug", "description", "parent"}
        if unknown:
            raise TypeError(f"unknown term fields: {', '.join(sorted(unknown))}")
        term = self.get_term(term_id)
        if term is None:
            raise _error("rest_term_invalid", "Term does not exist.", 404)
        values = dict(fields)
        if "name" in values and not str(values["name"]).strip():
            raise _error("empty_term_name", "A name is required for this term.", 400)
        if "slug" in values:
            values["slug"] = sanitize_title(str(values["slug"]), term.slug)
        with self._write() as db:
            if "parent" in values:
                if term.taxonomy != "category":
                    values["parent"] = 0
                elif values["parent"] == term_id:
                    raise _error("rest_term_invalid", "A term cannot be its own parent.", 400)
                self._check_parent(db, term.taxonomy, int(values["parent"]))
            if (
                "slug" in values
                and db.execute(
                    "SELECT 1 FROM terms WHERE taxonomy = ? AND slug = ? AND id != ?",
                    (term.taxonomy, values["slug"], term_id),
                ).fetchone()
            ):
                raise _error(
                    "duplicate_term_slug",
                    f'The slug "{values["slug"]}" is already in use by another term.',
                    400,
                )
            if values:
                assignments = ", ".join(f"{column} = ?" for column in values)
                db.execute(
                    f"UPDATE terms SET {assignments} WHERE id = ?",
                    [*values.values(), term_id],
                )
        self._fire("edited_term", term_id, term.taxonomy)
        updated = self.get_term(term_id)
        return updated if updated is not None else term

    def delete_term(self, term_id: int) -> Term:
        """Delete a term (its posts lose it); fires ``delete_term(term_id, taxonomy, term)``.

        Raises:
            RestError: ``rest_term_invalid`` (404); ``rest_cannot_delete`` for the default
                category (403).
        """
        term = self.get_term(term_id)
        if term is None:
            raise _error("rest_term_invalid", "Term does not exist.", 404)
        if term.taxonomy == "category" and term.id == int(self.get_option("default_category")):
            raise _error("rest_cannot_delete", "The default category cannot be deleted.", 403)
        with self._write() as db:
            db.execute("UPDATE terms SET parent = ? WHERE parent = ?", (term.parent, term_id))
            db.execute("DELETE FROM terms WHERE id = ?", (term_id,))
        self._fire("delete_term", term.id, term.taxonomy, term)
        return term

    # ------------------------------------------------------------------ comments
    def _comments_from_rows(self, rows: Iterable[sqlite3.Row]) -> list[Comment]:
        return [
            Comment(**{"id": int(row["id"]), **{name: row[name] for name in _COMMENT_FIELDS}})
            for row in rows
        ]

    def get_comment(self, comment_id: int) -> Comment | None:
        """The comment with this id, or ``None``."""
        rows = self.store.connection().execute("SELECT * FROM comments WHERE id = ?", (comment_id,))
        comments = self._comments_from_rows(rows)
        return comments[0] if comments else None

    def query_comments(self, query: CommentQuery) -> tuple[list[Comment], int]:
        """One page of the comments matching ``query`` and how many match in all."""
        where = [f"c.status IN ({_placeholders(query.statuses)})"]
        args: list[Any] = list(query.statuses)
        for column, values, negate in (
            ("c.post_id", query.posts, False),
            ("c.parent", query.parents, False),
            ("c.user_id", query.authors, False),
            ("c.id", query.include, False),
            ("c.id", query.exclude, True),
        ):
            if values:
                where.append(f"{column} {'NOT ' if negate else ''}IN ({_placeholders(values)})")
                args.extend(values)
        if query.author_email:
            where.append("c.author_email = ? COLLATE NOCASE")
            args.append(query.author_email)
        if query.search:
            where.append("(c.content LIKE ? ESCAPE '\\' OR c.author_name LIKE ? ESCAPE '\\')")
            args.extend([_like(query.search)] * 2)
        clause = " AND ".join(where)
        connection = self.store.connection()
        total = int(
            connection.execute(f"SELECT COUNT(*) FROM comments c WHERE {clause}", args).fetchone()[
                0
            ]
        )
        order = _COMMENT_ORDER.get(query.orderby, _COMMENT_ORDER["date_gmt"]).format(
            "ASC" if query.order.lower() == "asc" else "DESC"
        )
        offset = query.offset if query.offset is not None else (query.page - 1) * query.per_page
        rows = connection.execute(
            f"SELECT c.* FROM comments c WHERE {clause} ORDER BY {order} LIMIT ? OFFSET ?",
            [*args, query.per_page, max(offset, 0)],
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
            " ((? != '' AND author_email = ? COLLATE NOCASE) OR (? != 0 AND user_id = ?))"
            " LIMIT 1",
            (author_email, author_email, user_id, user_id),
        )
        return "approve" if row.fetchone() else "hold"

    def add_comment(self, **fields: Any) -> Comment:
        """Insert a comment; fires ``comment_post(comment_id, approved)`` (1, 0 or "spam").

        ``status`` defaults to `moderation_status`. The post must exist.

        Raises:
            RestError: ``rest_comment_invalid_post_id`` (403), ``rest_comment_content_invalid``,
                ``rest_comment_invalid_status``, ``rest_comment_invalid_parent`` (400).
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
            raise _error("rest_comment_content_invalid", "Invalid comment content.", 400)
        if "status" not in values:
            values["status"] = self.moderation_status(
                str(values["author_email"]), int(values["user_id"])
            )
        if values["status"] not in COMMENT_STATUSES:
            raise _error("rest_comment_invalid_status", "Invalid comment status.", 400)
        with self._write() as db:
            if not db.execute(
                "SELECT 1 FROM posts WHERE id = ?", (values.get("post_id"),)
            ).fetchone():
                raise _error(
                    "rest_comment_invalid_post_id",
                    "Sorry, you are not allowed to create this comment without a post.",
                    403,
                )
            if (
                values["parent"]
                and not db.execute(
                    "SELECT 1 FROM comments WHERE id = ? AND post_id = ?",
                    (values["parent"], values["post_id"]),
                ).fetchone()
            ):
                raise _error("rest_comment_invalid_parent", "Invalid comment parent.", 400)
            columns = list(values)
            cursor = db.execute(
                f"INSERT INTO comments ({', '.join(columns)}) VALUES ({_placeholders(columns)})",
                list(values.values()),
            )
            comment_id = int(cursor.lastrowid or 0)
        comment = self.get_comment(comment_id)
        if comment is None:  # pragma: no cover - inserted in the transaction that committed
            raise RuntimeError(f"comment {comment_id} vanished")
        approved: int | str = 0
        if comment.status in ("approve", "spam"):
            approved = 1 if comment.status == "approve" else "spam"
        self._fire("comment_post", comment.id, approved)
        return comment

    def update_comment(self, comment_id: int, **fields: Any) -> Comment:
        """Change a comment; fires ``edit_comment`` and, when its status changed,
        ``transition_comment_status(new, old, comment)``.

        Raises:
            RestError: ``rest_comment_invalid_id`` (404), invalid status or content (400).
        """
        unknown = set(fields) - set(_COMMENT_FIELDS) - {"post_id"}
        if unknown:
            raise TypeError(f"unknown comment fields: {', '.join(sorted(unknown))}")
        old = self.get_comment(comment_id)
        if old is None:
            raise _error("rest_comment_invalid_id", "Invalid comment ID.", 404)
        if "status" in fields and fields["status"] not in COMMENT_STATUSES:
            raise _error("rest_comment_invalid_status", "Invalid comment status.", 400)
        if "content" in fields and not str(fields["content"]).strip():
            raise _error("rest_comment_content_invalid", "Invalid comment content.", 400)
        if fields:
            with self._write() as db:
                if (
                    "post_id" in fields
                    and not db.execute(
                        "SELECT 1 FROM posts WHERE id = ?", (fields["post_id"],)
                    ).fetchone()
                ):
                    raise _error("rest_comment_invalid_post_id", "Invalid post ID.", 400)
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

    def delete_comment(self, comment_id: int, force: bool = False) -> Comment:
        """Trash a comment (a status transition) or, with ``force``, delete it for good
        (``deleted_comment``; replies move up to its parent). Returns it as it was.

        Raises:
            RestError: ``rest_comment_invalid_id`` (404), ``rest_already_trashed`` (410).
        """
        comment = self.get_comment(comment_id)
        if comment is None:
            raise _error("rest_comment_invalid_id", "Invalid comment ID.", 404)
        if not force:
            if comment.status == "trash":
                raise _error("rest_already_trashed", "The comment has already been trashed.", 410)
            self.update_comment(comment_id, status="trash")
            return comment
        with self._write() as db:
            db.execute(
                "UPDATE comments SET parent = ? WHERE parent = ?", (comment.parent, comment_id)
            )
            db.execute("DELETE FROM comments WHERE id = ?", (comment_id,))
        self._fire("deleted_comment", comment.id, comment)
        return replace(comment)
