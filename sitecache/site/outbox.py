"""The outbox: work a content change owes to the world, recorded in the change's transaction.

A row is written in the same transaction as the change it belongs to (see
`ContentBase.transaction_listeners`), so the two commit together or not at all: a crash or a
failing service after the commit cannot lose the work. Whoever applies a row deletes it; one
that fails stays, with its attempt count and last error, for the next try. Rows are applied in
the order they were written; applying one twice must be harmless.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sitecache.auth.db import DbConnection
from sitecache.auth.store import SiteStore

__all__ = ["Outbox", "OutboxRow"]


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """One piece of owed work."""

    id: int
    kind: str
    payload: Any
    created: int
    attempts: int
    last_error: str


class Outbox:
    """The ``outbox`` table of the site database.

    Args:
        store: the site database (the content migrations create the table).
    """

    def __init__(self, store: SiteStore) -> None:
        self.store = store

    def add(self, db: DbConnection, kind: str, payload: Any) -> int:
        """Record work of ``kind`` inside the caller's open transaction ``db``; its id."""
        cursor = db.execute(
            "INSERT INTO outbox (kind, payload, created) VALUES (?, ?, ?) RETURNING id",
            (kind, json.dumps(payload, separators=(",", ":")), int(time.time())),
        )
        return int(cursor.fetchone()[0])

    def pending(self, kind: str, limit: int = 50) -> list[OutboxRow]:
        """The oldest ``limit`` rows of ``kind`` not applied yet."""
        rows = self.store.connection().execute(
            "SELECT id, kind, payload, created, attempts, last_error FROM outbox"
            " WHERE kind = ? ORDER BY id LIMIT ?",
            (kind, limit),
        )
        return [
            OutboxRow(
                id=int(row[0]),
                kind=str(row[1]),
                payload=json.loads(row[2]),
                created=int(row[3]),
                attempts=int(row[4]),
                last_error=str(row[5]),
            )
            for row in rows.fetchall()
        ]

    def count(self, kind: str) -> int:
        """How many rows of ``kind`` wait."""
        row = (
            self.store.connection()
            .execute("SELECT COUNT(*) FROM outbox WHERE kind = ?", (kind,))
            .fetchone()
        )
        return int(row[0])

    def done(self, row_id: int) -> None:
        """Forget an applied row."""
        with self.store.transaction() as db:
            db.execute("DELETE FROM outbox WHERE id = ?", (row_id,))

    def failed(self, row_id: int, error: str) -> None:
        """Note a failed attempt (the row stays for the next one)."""
        with self.store.transaction() as db:
            db.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                (error[:500], row_id),
            )

    @contextmanager
    def settled(self, kind: str) -> Iterator[bool]:
        """Whether no row of ``kind`` waits, decided under the database's write lock: no
        change can commit a new row until the caller's block has run."""
        with self.store.transaction() as db:
            row = db.execute("SELECT 1 FROM outbox WHERE kind = ? LIMIT 1", (kind,)).fetchone()
            yield row is None
