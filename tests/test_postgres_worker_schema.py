"""The PostgreSQL schema each test process lends its tests (`tests.postgres.WorkerSchema`):
what one test leaves behind, the next never sees."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres import WorkerSchema


@pytest.fixture
def worker_schema() -> Iterator[WorkerSchema]:
    """A worker schema of this test's own, dropped afterwards."""
    schema = WorkerSchema()
    yield schema
    schema.close()


def test_rows_go_migrated_rows_come_back_and_sequences_restart(
    worker_schema: WorkerSchema,
) -> None:
    import psycopg

    with worker_schema.lease() as url, psycopg.connect(url, autocommit=True) as db:
        versions = db.execute("SELECT * FROM schema_versions ORDER BY component").fetchall()
        assert versions, "the migrations record their versions"
        assert db.execute("SELECT nextval('users_id_seq')").fetchone() == (1,)
        db.execute("INSERT INTO options (name, value) VALUES ('left', 'behind')")
        db.execute("DELETE FROM schema_versions")
        assert db.execute("SHOW synchronous_commit").fetchone() == ("off",)
    first = worker_schema._name
    with worker_schema.lease() as url, psycopg.connect(url, autocommit=True) as db:
        assert worker_schema._name == first, "the schema is reused, not migrated again"
        assert db.execute("SELECT count(*) FROM options").fetchone() == (0,)
        assert db.execute("SELECT * FROM schema_versions ORDER BY component").fetchall() == versions
        assert db.execute("SELECT nextval('users_id_seq')").fetchone() == (1,)


def test_a_changed_structure_gets_a_newly_migrated_schema(worker_schema: WorkerSchema) -> None:
    import psycopg

    with worker_schema.lease() as url, psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE TABLE left_behind (x integer)")
        db.execute("ALTER TABLE options ADD COLUMN extra text")
    first = worker_schema._name
    with worker_schema.lease() as url, psycopg.connect(url, autocommit=True) as db:
        assert worker_schema._name != first
        assert db.execute("SELECT to_regclass('left_behind')").fetchone() == (None,)
        columns = db.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = 'options'"
        ).fetchall()
        assert ("extra",) not in columns
        old = db.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname = %s", (first,)
        ).fetchone()
        assert old == (0,), "the changed schema was dropped"
