"""`PostReads`: reading posts and pages (part of the content service).

One post by id or slug, many by id, one page of a `PostQuery` (with or without the count of
every match), the pages below a page, approved-comment counts, and the published authors and
dates the archives list. Reading fires no hooks and takes no write lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sitecache.auth.db import Row
from sitecache.auth.store import sql_values
from sitecache.site.content_base import ContentBase
from sitecache.site.models import Post
from sitecache.site.queries import POST_ORDER, PostQuery, like_pattern, placeholders

__all__ = ["PostReads"]


class PostReads(ContentBase):
    """The reading half of the posts of `sitecache.site.content.ContentService`."""

    def _posts_from_rows(self, rows: Iterable[Row]) -> list[Post]:
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
                featured_media=int(row["featured_media"]),
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
            f" WHERE post_id IN ({placeholders(post_ids)}) ORDER BY term_id",
            tuple(post_ids),
        )
        for row in rows:
            found.setdefault(int(row[0]), []).append(int(row[1]))
        return found

    def get_post(self, post_id: int) -> Post | None:
        """The post with this id (any type and status), or ``None``."""
        rows = self.store.connection().execute(
            "SELECT * FROM posts WHERE id = ?", sql_values([post_id])
        )
        posts = self._posts_from_rows(rows)
        return posts[0] if posts else None

    def get_posts(self, post_ids: Sequence[int]) -> dict[int, Post]:
        """The posts with these ids that exist, by id."""
        if not post_ids:
            return {}
        rows = self.store.connection().execute(
            f"SELECT * FROM posts WHERE id IN ({placeholders(post_ids)})",
            sql_values(post_ids),
        )
        return {post.id: post for post in self._posts_from_rows(rows)}

    def get_post_by_slug(self, post_type: str, slug: str, parent: int | None = None) -> Post | None:
        """The newest post of ``post_type`` with ``slug`` (and ``parent`` when given)."""
        sql = "SELECT * FROM posts WHERE type = ? AND slug = ?"
        args: list[Any] = [post_type, slug]
        if parent is not None:
            sql += " AND parent = ?"
            args.append(parent)
        rows = self.store.connection().execute(sql + " ORDER BY id DESC LIMIT 1", sql_values(args))
        posts = self._posts_from_rows(rows)
        return posts[0] if posts else None

    def descendant_page_ids(self, page_id: int, limit: int) -> list[int] | None:
        """Ids of the published pages below ``page_id`` (its children, their children, ...,
        reached through pages of any status: a page's path names every ancestor), ascending;
        ``None`` when more than ``limit`` pages of any status lie below it."""
        seen = {page_id}
        published: list[int] = []
        frontier = [page_id]
        connection = self.store.connection()
        while frontier:
            rows = connection.execute(
                "SELECT id, status FROM posts WHERE type = 'page'"
                f" AND parent IN ({placeholders(frontier)})",
                sql_values(frontier),
            ).fetchall()
            frontier = [int(row[0]) for row in rows if int(row[0]) not in seen]
            seen.update(frontier)
            if len(seen) - 1 > limit:
                return None
            published += [int(row[0]) for row in rows if str(row[1]) == "publish"]
        return sorted(set(published) - {page_id})

    def query_posts(self, query: PostQuery) -> tuple[list[Post], int]:
        """The posts matching ``query`` (one page of them) and how many match in all."""
        where, args = self._post_filters(query)
        clause = " AND ".join(where)
        total = int(
            self.store.connection()
            .execute(f"SELECT COUNT(*) FROM posts p WHERE {clause}", sql_values(args))
            .fetchone()[0]
        )
        return self._page_of_posts(query, clause, args), total

    def find_posts(self, query: PostQuery) -> list[Post]:
        """The posts matching ``query`` (one page of them), without counting them all."""
        where, args = self._post_filters(query)
        return self._page_of_posts(query, " AND ".join(where), args)

    def _page_of_posts(self, query: PostQuery, clause: str, args: list[Any]) -> list[Post]:
        offset = query.offset if query.offset is not None else (query.page - 1) * query.per_page
        rows = self.store.connection().execute(
            f"SELECT p.* FROM posts p WHERE {clause} ORDER BY {_post_order(query)}"
            " LIMIT ? OFFSET ?",
            sql_values([*args, query.per_page, max(offset, 0)]),
        )
        return self._posts_from_rows(rows)

    def _post_filters(self, query: PostQuery) -> tuple[list[str], list[Any]]:
        """The SQL conditions of ``query`` (fixed fragments, ``?`` placeholders) and their
        arguments, in order."""
        where = [
            f"p.type IN ({placeholders(query.types)})",
            f"p.status IN ({placeholders(query.statuses)})",
        ]
        args: list[Any] = [*query.types, *query.statuses]

        def among(column: str, values: Sequence[Any], negate: bool = False) -> None:
            if values:
                where.append(f"{column} {'NOT ' if negate else ''}IN ({placeholders(values)})")
                args.extend(values)

        if query.sticky is not None:
            where.append("p.sticky = ?")
            args.append(1 if query.sticky else 0)
        among("p.author", query.authors)
        among("p.author", query.authors_exclude, negate=True)
        among("p.id", query.include)
        among("p.id", query.exclude, negate=True)
        among("p.slug", query.slugs)
        among("p.parent", query.parents)
        among("p.parent", query.parents_exclude, negate=True)
        among("p.mime_type", query.mime_types)
        if query.mime_classes:
            # The classes are plain words (the media_type enum): no LIKE wildcard in them.
            classes = [name for name in query.mime_classes if name.isalpha()]
            where.append("(" + " OR ".join("p.mime_type LIKE ?" for _ in classes or [""]) + ")")
            args.extend([f"{name}/%" for name in classes] or ["-"])
        if query.without_password:
            where.append("p.password = ''")
        if query.public_parents_only:
            where.append(
                "(p.parent = 0 OR p.parent IN"
                " (SELECT pp.id FROM posts pp WHERE pp.status = 'publish' AND pp.password = ''))"
            )
        _add_term_filters(query, where, args)
        if query.search:
            for word in query.search.split()[:10]:
                where.append(
                    "(lower(p.title) LIKE lower(?) ESCAPE '\\'"
                    " OR lower(p.content) LIKE lower(?) ESCAPE '\\'"
                    " OR lower(p.excerpt) LIKE lower(?) ESCAPE '\\')"
                )
                args.extend([like_pattern(word)] * 3)
        for condition, value in (("p.date_gmt > ?", query.after), ("p.date_gmt < ?", query.before)):
            if value is not None:
                where.append(condition)
                args.append(value)
        if query.year is not None:
            start, end = self._date_range(query.year, query.month, query.day)
            where.append("p.date_gmt >= ? AND p.date_gmt < ?")
            args.extend([start, end])
        return where, args

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
            f" WHERE status = 'approve' AND post_id IN ({placeholders(post_ids)})"
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

    def published_dates(self, post_type: str = "post") -> list[int]:
        """The UTC dates of the published posts of ``post_type``, newest first (what a date
        archive list counts; one column of one table, grouped by the caller in the site's
        timezone)."""
        rows = self.store.connection().execute(
            "SELECT date_gmt FROM posts WHERE type = ? AND status = 'publish'"
            " ORDER BY date_gmt DESC",
            (post_type,),
        )
        return [int(row[0]) for row in rows]


def _add_term_filters(query: PostQuery, where: list[str], args: list[Any]) -> None:
    """The term conditions of ``query``: each of ``term_groups`` (any of its terms), then
    ``term_ids`` (any of them), then ``terms_exclude`` (none of them)."""
    subquery = "p.id {}IN (SELECT post_id FROM term_relationships WHERE term_id IN ({}))"
    for group in query.term_groups:
        where.append(subquery.format("", placeholders(group)))
        args.extend(group)
    if query.term_ids:
        where.append(subquery.format("", placeholders(query.term_ids)))
        args.extend(query.term_ids)
    if query.terms_exclude:
        where.append(subquery.format("NOT ", placeholders(query.terms_exclude)))
        args.extend(query.terms_exclude)


def _post_order(query: PostQuery) -> str:
    """The ORDER BY of ``query`` (fixed fragments; ``include`` order lists integer ids)."""
    if query.orderby == "include" and query.include:
        return (
            "CASE p.id "
            + " ".join(
                f"WHEN {int(post_id)} THEN {position}"
                for position, post_id in enumerate(query.include)
            )
            + " END"
        )
    return POST_ORDER.get(query.orderby, POST_ORDER["date"]).format(
        "ASC" if query.order.lower() == "asc" else "DESC"
    )
