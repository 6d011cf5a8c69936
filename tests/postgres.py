"""PostgreSQL for the tests: a private schema per test in the database ``DATABASE_URL`` names
(default: the loopback server's ``test`` database), migrated, dropped afterwards.

Without a PostgreSQL answering, the PostgreSQL cases skip with the reason, unless
``SITECACHE_REQUIRE_POSTGRES=1`` (CI), where they fail.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

from sitecache.auth.store import SiteStore
from sitecache.site.migrations import migrate_content

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def server_url() -> str:
    """The PostgreSQL database the tests use (its schemas are theirs to create and drop)."""
    return os.environ.get("DATABASE_URL", DEFAULT_URL)


def _unavailable(reason: str) -> None:
    if os.environ.get("SITECACHE_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required (SITECACHE_REQUIRE_POSTGRES=1): {reason}")
    pytest.skip(f"no PostgreSQL for the PostgreSQL cases: {reason}")


def with_search_path(url: str, schema: str) -> str:
    """``url`` whose sessions use ``schema`` first."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-csearch_path={schema}"))
    return urlunsplit(parts._replace(query=urlencode(query)))


@contextlib.contextmanager
def schema(migrate: bool = False) -> Iterator[str]:
    """A database URL whose tables live in a new schema (migrated when ``migrate``),
    dropped when the block ends."""
    import psycopg

    base = server_url()
    name = f"t_{uuid.uuid4().hex[:16]}"
    try:
        admin = psycopg.connect(base, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        _unavailable(f"{base}: {str(exc).strip()}")
        raise  # pragma: no cover - skip and fail raise
    with admin:
        admin.execute(f'CREATE SCHEMA "{name}"')
        url = with_search_path(base, name)
        try:
            if migrate:
                store = SiteStore(url=url, auto_migrate=True)
                try:
                    store.migrate()
                    migrate_content(store, apply=True)
                finally:
                    store.close()
            yield url
        finally:
            admin.execute(f'DROP SCHEMA "{name}" CASCADE')


def migrated_schema() -> contextlib.AbstractContextManager[str]:
    """`schema` with every table of this code created."""
    return schema(migrate=True)
