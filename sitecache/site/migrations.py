"""The content tables, as migrations of their own applied to the site database (``site.db``).

The auth layer versions its tables with SQLite's ``user_version``; the site keeps its own
version in the ``schema_versions`` table under the component name ``site``, so the two lists
grow independently. Each migration runs once, inside a write transaction (a crash leaves the
previous version intact), and re-reads the version under the lock so concurrent workers apply
it once.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from sitecache.auth.store import SiteStore

__all__ = ["CONTENT_MIGRATIONS", "migrate_content"]

COMPONENT: Final = "site"

CONTENT_MIGRATIONS: Final[tuple[tuple[int, str], ...]] = (
    (
        1,
        """
        CREATE TABLE posts (
            id             INTEGER PRIMARY KEY AUTOINCREMENT,
            type           TEXT NOT NULL,
            status         TEXT NOT NULL,
            author         INTEGER NOT NULL DEFAULT 0,
            parent         INTEGER NOT NULL DEFAULT 0,
            slug           TEXT NOT NULL,
            title          TEXT NOT NULL DEFAULT '',
            content        TEXT NOT NULL DEFAULT '',
            excerpt        TEXT NOT NULL DEFAULT '',
            date_gmt       INTEGER NOT NULL,
            modified_gmt   INTEGER NOT NULL,
            comment_status TEXT NOT NULL DEFAULT 'open',
            ping_status    TEXT NOT NULL DEFAULT 'open',
            password       TEXT NOT NULL DEFAULT '',
            menu_order     INTEGER NOT NULL DEFAULT 0,
            sticky         INTEGER NOT NULL DEFAULT 0,
            mime_type      TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX posts_by_type_status_date ON posts(type, status, date_gmt DESC, id DESC);
        CREATE INDEX posts_by_slug ON posts(type, slug);
        CREATE INDEX posts_by_author ON posts(author, type, status);
        CREATE INDEX posts_by_parent ON posts(parent);
        CREATE TABLE terms (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            taxonomy    TEXT NOT NULL,
            name        TEXT NOT NULL,
            slug        TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            parent      INTEGER NOT NULL DEFAULT 0,
            UNIQUE (taxonomy, slug)
        );
        CREATE TABLE term_relationships (
            post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
            term_id INTEGER NOT NULL REFERENCES terms(id) ON DELETE CASCADE,
            PRIMARY KEY (post_id, term_id)
        );
        CREATE INDEX term_relationships_by_term ON term_relationships(term_id, post_id);
        CREATE TABLE comments (
            id           INTEGER PRIMARY KEY AUTOINCREMENT,
            post_id      INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
            parent       INTEGER NOT NULL DEFAULT 0,
            user_id      INTEGER NOT NULL DEFAULT 0,
            author_name  TEXT NOT NULL DEFAULT '',
            author_email TEXT NOT NULL DEFAULT '',
            author_url   TEXT NOT NULL DEFAULT '',
            author_ip    TEXT NOT NULL DEFAULT '',
            author_agent TEXT NOT NULL DEFAULT '',
            content      TEXT NOT NULL,
            date_gmt     INTEGER NOT NULL,
            status       TEXT NOT NULL,
            type         TEXT NOT NULL DEFAULT 'comment'
        );
        CREATE INDEX comments_by_post ON comments(post_id, status, date_gmt);
        CREATE INDEX comments_by_status ON comments(status, date_gmt)
        """,
    ),
    (
        2,
        """
        CREATE TABLE outbox (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            kind       TEXT NOT NULL,
            payload    TEXT NOT NULL,
            created    INTEGER NOT NULL,
            attempts   INTEGER NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX outbox_by_kind ON outbox(kind, id)
        """,
    ),
    (
        3,
        """
        CREATE INDEX posts_revisions_by_parent ON posts(parent, type, status, date_gmt, id);
        CREATE UNIQUE INDEX posts_one_autosave_per_user ON posts(parent, author)
            WHERE type = 'revision' AND status = 'autosave'
        """,
    ),
)
"""``(version, SQL)`` pairs of the content tables; never edit one that has shipped, add another.

Post authors are plain user ids (no foreign key): deleting a user reassigns or removes their
posts in the user service, and a dangling id reads as an unknown author.

Revisions and autosaves are rows of type ``revision`` under their post (``parent``), with the
status ``inherit`` and ``autosave`` and the slugs ``<parent>-revision-v1`` and
``<parent>-autosave-v1`` (WordPress's names); migration 3 indexes them and keeps one autosave
per user and post."""


def migrate_content(store: SiteStore) -> int:
    """Apply every pending content migration to ``store``; returns the content schema version."""
    connection = store.connection()
    connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_versions"
        " (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
    )
    version = _version(connection)
    for target, script in CONTENT_MIGRATIONS:
        if target <= version:
            continue
        connection.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another worker may have migrated already.
            if _version(connection) < target:
                for statement in (part.strip() for part in script.split(";")):
                    if statement:
                        connection.execute(statement)
                connection.execute(
                    "INSERT INTO schema_versions (component, version) VALUES (?, ?)"
                    " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                    (COMPONENT, target),
                )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        version = target
    return version


def _version(connection: sqlite3.Connection) -> int:
    row = connection.execute(
        "SELECT version FROM schema_versions WHERE component = ?", (COMPONENT,)
    ).fetchone()
    return 0 if row is None else int(row[0])
