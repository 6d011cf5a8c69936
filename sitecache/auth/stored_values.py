"""Named values kept in the site's own database, for the parts of a site whose configuration
must outlive a cache: the page cache's settings and plugin switches (`StoredValues` is the
`sitecache.cache.durable.DurableValues` the application gives the cache).

They live in the store's ``shared_values`` table under a prefix of their own (``cache:``), so
no migration is needed and every node of a shared PostgreSQL reads the same values.
"""

from __future__ import annotations

from collections.abc import Collection

from sitecache.auth.store import SiteStore

__all__ = ["StoredValues"]


class StoredValues:
    """Named values (bytes of UTF-8 text) in ``store``, under ``prefix``.

    Args:
        store: the site's store.
        prefix: what the names are stored under (``cache:settings``).
    """

    def __init__(self, store: SiteStore, prefix: str) -> None:
        self.store = store
        self.prefix = prefix

    def read_durable(self, names: Collection[str]) -> dict[str, bytes]:
        """The stored values among ``names`` (names without a value are left out).

        Raises:
            StoreUnavailable: the database does not answer.
        """
        wanted = [self.prefix + name for name in names]
        if not wanted:
            return {}
        marks = ", ".join("?" for _ in wanted)
        rows = (
            self.store.connection()
            .execute(f"SELECT name, value FROM shared_values WHERE name IN ({marks})", wanted)  # noqa: S608 - placeholders only
            .fetchall()
        )
        start = len(self.prefix)
        return {str(row[0])[start:]: str(row[1]).encode("utf-8") for row in rows}

    def write_durable(self, name: str, data: bytes) -> None:
        """Store ``data`` (UTF-8 text) as ``name``, committed when this returns.

        Raises:
            UnicodeDecodeError: ``data`` is not UTF-8 text (nothing was written).
            StoreUnavailable: the database does not answer (nothing was written).
            StoreFull: no space is left (nothing was written).
        """
        text = data.decode("utf-8")
        with self.store.transaction() as connection:
            connection.execute(
                "INSERT INTO shared_values (name, value) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (self.prefix + name, text),
            )
