"""`TermStore`: categories and tags (part of the content service)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sitecache.auth.db import DbConnection, Row
from sitecache.auth.store import sql_values
from sitecache.domain_errors import ForbiddenError, InvalidValueError, NotFoundError
from sitecache.site.content_base import ContentBase, transactional
from sitecache.site.models import TAXONOMIES, Term, sanitize_title
from sitecache.site.queries import (
    TERM_COUNT,
    TERM_ORDER,
    TermQuery,
    like_pattern,
    placeholders,
)

__all__ = ["TermStore"]


class TermStore(ContentBase):
    """Reading and writing terms; writes fire ``created_term``, ``edited_term``,
    ``delete_term``."""

    def term_post_ids(self, term_id: int, limit: int) -> list[int] | None:
        """Ids of the published posts and pages carrying the term, ascending (the posts whose
        pages show its name and link); ``None`` when there are more than ``limit``."""
        rows = self.store.connection().execute(
            "SELECT p.id FROM posts p JOIN term_relationships r ON r.post_id = p.id"
            " WHERE r.term_id = ? AND p.status = 'publish' AND p.type != 'revision'"
            " ORDER BY p.id LIMIT ?",
            sql_values([term_id, limit + 1]),
        )
        found = [int(row[0]) for row in rows]
        return None if len(found) > limit else found

    # ------------------------------------------------------------------ terms
    def _terms_from_rows(self, rows: Iterable[Row]) -> list[Term]:
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
            f"SELECT t.*, {TERM_COUNT} FROM terms t WHERE t.id IN ({placeholders(term_ids)})",
            sql_values(term_ids),
        )
        return {term.id: term for term in self._terms_from_rows(rows)}

    def get_term_by_slug(self, taxonomy: str, slug: str) -> Term | None:
        """The term of ``taxonomy`` with ``slug``, or ``None``."""
        rows = self.store.connection().execute(
            f"SELECT t.*, {TERM_COUNT} FROM terms t WHERE t.taxonomy = ? AND t.slug = ?",
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
                where.append(f"{column} {'NOT ' if negate else ''}IN ({placeholders(values)})")
                args.extend(values)
        if query.search:
            where.append(
                "(lower(t.name) LIKE lower(?) ESCAPE '\\'"
                " OR lower(t.slug) LIKE lower(?) ESCAPE '\\')"
            )
            args.extend([like_pattern(query.search)] * 2)
        if query.parent is not None:
            where.append("t.parent = ?")
            args.append(query.parent)
        if query.post is not None:
            where.append("t.id IN (SELECT term_id FROM term_relationships WHERE post_id = ?)")
            args.append(query.post)
        clause = " AND ".join(where)
        having = " WHERE count > 0" if query.hide_empty else ""
        inner = f"SELECT t.*, {TERM_COUNT} FROM terms t WHERE {clause}"
        connection = self.store.connection()
        total = int(
            connection.execute(
                f"SELECT COUNT(*) FROM ({inner}) counted{having}", sql_values(args)
            ).fetchone()[0]
        )
        order = TERM_ORDER.get(query.orderby, TERM_ORDER["name"]).format(
            "DESC" if query.order.lower() == "desc" else "ASC"
        )
        offset = query.offset if query.offset is not None else (query.page - 1) * query.per_page
        rows = connection.execute(
            f"SELECT * FROM ({inner}) t{having} ORDER BY {order} LIMIT ? OFFSET ?",
            sql_values([*args, query.per_page, max(offset, 0)]),
        )
        return self._terms_from_rows(rows), total

    @transactional
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
            InvalidValueError: ``invalid_taxonomy``, ``empty_term_name``, ``term_exists``,
                ``rest_term_invalid`` (no such parent).
        """
        if taxonomy not in TAXONOMIES:
            raise InvalidValueError("invalid_taxonomy", "Invalid taxonomy.")
        name = name.strip()
        if not name:
            raise InvalidValueError("empty_term_name", "A name is required for this term.")
        slug = sanitize_title(slug or name, "term")
        with self._write() as db:
            self._check_parent(db, taxonomy, parent)
            if db.execute(
                "SELECT 1 FROM terms WHERE taxonomy = ? AND slug = ?", (taxonomy, slug)
            ).fetchone():
                raise InvalidValueError(
                    "term_exists", "A term with the name provided already exists."
                )
            cursor = db.execute(
                "INSERT INTO terms (taxonomy, name, slug, description, parent)"
                " VALUES (?, ?, ?, ?, ?) RETURNING id",
                (taxonomy, name, slug, description, parent if taxonomy == "category" else 0),
            )
            term_id = int(cursor.fetchone()[0])
        term = self.get_term(term_id)
        if term is None:  # pragma: no cover - inserted in the transaction that just committed
            raise RuntimeError(f"term {term_id} vanished")
        self._fire("created_term", term.id, term.taxonomy)
        return term

    def _check_parent(self, db: DbConnection, taxonomy: str, parent: int) -> None:
        if parent and not 0 < parent < 2**63:  # no row has such an id (SQLite's INTEGER)
            raise InvalidValueError("rest_term_invalid", "Parent term does not exist.")
        if (
            parent
            and not db.execute(
                "SELECT 1 FROM terms WHERE id = ? AND taxonomy = ?", (parent, taxonomy)
            ).fetchone()
        ):
            raise InvalidValueError("rest_term_invalid", "Parent term does not exist.")

    @transactional
    def update_term(self, term_id: int, **fields: Any) -> Term:
        """Change a term's name, slug, description or parent; fires
        ``edited_term(term_id, taxonomy, term_before)``.

        Raises:
            NotFoundError: ``rest_term_invalid``.
            InvalidValueError: ``duplicate_term_slug``, a bad name or parent.
        """
        unknown = set(fields) - {"name", "slug", "description", "parent"}
        if unknown:
            raise TypeError(f"unknown term fields: {', '.join(sorted(unknown))}")
        term = self.get_term(term_id)
        if term is None:
            raise NotFoundError("rest_term_invalid", "Term does not exist.")
        values = dict(fields)
        if "name" in values and not str(values["name"]).strip():
            raise InvalidValueError("empty_term_name", "A name is required for this term.")
        if "slug" in values:
            values["slug"] = sanitize_title(str(values["slug"]), term.slug)
        with self._write() as db:
            if "parent" in values:
                if term.taxonomy != "category":
                    values["parent"] = 0
                elif values["parent"] == term_id:
                    raise InvalidValueError("rest_term_invalid", "A term cannot be its own parent.")
                self._check_parent(db, term.taxonomy, int(values["parent"]))
            if (
                "slug" in values
                and db.execute(
                    "SELECT 1 FROM terms WHERE taxonomy = ? AND slug = ? AND id != ?",
                    (term.taxonomy, values["slug"], term_id),
                ).fetchone()
            ):
                raise InvalidValueError(
                    "duplicate_term_slug",
                    f'The slug "{values["slug"]}" is already in use by another term.',
                )
            if values:
                assignments = ", ".join(f"{column} = ?" for column in values)
                db.execute(
                    f"UPDATE terms SET {assignments} WHERE id = ?",
                    [*values.values(), term_id],
                )
        self._fire("edited_term", term_id, term.taxonomy, term)
        updated = self.get_term(term_id)
        return updated if updated is not None else term

    @transactional
    def delete_term(self, term_id: int) -> Term:
        """Delete a term (its posts lose it); fires
        ``delete_term(term_id, taxonomy, term, object_ids)`` (the ids of the posts that carried
        it, any status, ascending: WordPress's ``$object_ids``).

        Raises:
            NotFoundError: ``rest_term_invalid``.
            ForbiddenError: ``rest_cannot_delete`` for the default category.
        """
        term = self.get_term(term_id)
        if term is None:
            raise NotFoundError("rest_term_invalid", "Term does not exist.")
        if term.taxonomy == "category" and term.id == int(self.get_option("default_category")):
            raise ForbiddenError("rest_cannot_delete", "The default category cannot be deleted.")
        with self._write() as db:
            rows = db.execute(
                "SELECT post_id FROM term_relationships WHERE term_id = ? ORDER BY post_id",
                (term_id,),
            ).fetchall()
            db.execute("UPDATE terms SET parent = ? WHERE parent = ?", (term.parent, term_id))
            db.execute("DELETE FROM terms WHERE id = ?", (term_id,))
        self._fire("delete_term", term.id, term.taxonomy, term, [int(row[0]) for row in rows])
        return term
