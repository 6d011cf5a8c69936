"""The content tables, as migrations of their own applied to the site database (``site.db``).

The auth layer versions its tables with SQLite's ``user_version``; the site keeps its own
version in the ``schema_versions`` table under the component name ``site``, so the two lists
grow independently. Each migration runs once, inside a write transaction (a crash leaves the
previous version intact), and re-reads the version under the lock so concurrent workers apply
it once.
"""

from __future__ import annotations

from typing import Final

from sitecache.auth.store import SiteStore

__all__ = ["CONTENT_MIGRATIONS", "migrate_content", "register_content"]

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
        CREATE TABLE attachments (
            post_id   INTEGER PRIMARY KEY REFERENCES posts(id) ON DELETE CASCADE,
            file      TEXT NOT NULL,
            filename  TEXT NOT NULL DEFAULT '',
            filesize  INTEGER NOT NULL DEFAULT 0,
            width     INTEGER NOT NULL DEFAULT 0,
            height    INTEGER NOT NULL DEFAULT 0,
            alt_text  TEXT NOT NULL DEFAULT ''
        );
        CREATE UNIQUE INDEX attachments_by_file ON attachments(file)
        """,
    ),
    (
        4,
        """
        CREATE INDEX posts_revisions_by_parent ON posts(parent, type, status, date_gmt, id);
        CREATE UNIQUE INDEX posts_one_autosave_per_user ON posts(parent, author)
            WHERE type = 'revision' AND status = 'autosave'
        """,
    ),
    (
        5,
        """
        ALTER TABLE posts ADD COLUMN featured_media INTEGER NOT NULL DEFAULT 0
        """,
    ),
)
"""``(version, SQL)`` pairs of the content tables; never edit one that has shipped, add another.

Attachments (media) are posts of type ``attachment`` (title, caption as the excerpt,
description as the content, parent post, MIME type) with one ``attachments`` row for the file:
its path below the uploads directory, the client's name as shown, size, image dimensions and
alternative text (migration 3).

Post authors are plain user ids (no foreign key): deleting a user reassigns or removes their
posts in the user service, and a dangling id reads as an unknown author.

Revisions and autosaves are rows of type ``revision`` under their post (``parent``), with the
status ``inherit`` and ``autosave`` and the slugs ``<parent>-revision-v1`` and
``<parent>-autosave-v1`` (WordPress's names); migration 4 indexes them and keeps one autosave
per user and post.

A post's featured image is the attachment id in ``featured_media`` (0: none; migration 5),
WordPress's ``_thumbnail_id`` meta: set only to an image attachment, reset to 0 when that
attachment is deleted."""


def register_content(store: SiteStore) -> None:
    """Register the content tables' migrations with ``store`` (prepared with the others: now
    when the database answers, else on first use).

    Raises:
        SchemaVersionError: the database answered with a content schema other than this
            code's, and the store does not migrate.
    """
    store.register(COMPONENT, CONTENT_MIGRATIONS)
    store.prepare_if_answering()


def migrate_content(store: SiteStore, apply: bool = False) -> int:
    """Register the content tables' migrations with ``store`` and prepare them (applied when
    ``apply`` or when the store migrates itself, else checked); returns the content schema
    version.

    Raises:
        SchemaVersionError: the database's content schema is not this code's and the store
            does not migrate (PostgreSQL: run ``sitecache init``).
    """
    store.register(COMPONENT, CONTENT_MIGRATIONS)
    if apply:
        store.migrate_component(COMPONENT)
    store.prepare()
    return store.version(COMPONENT)
