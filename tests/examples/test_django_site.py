"""The Django example: migrations run, gunicorn serves ``djsite.wsgi`` (Django behind
`PageCache`), and a note saved or deleted by ``manage.py`` in another process purges, from the
model's ``post_save`` or ``post_delete`` handler, exactly the pages tagged with it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.server import REPOSITORY
from tests.examples.server import ExampleServer, gunicorn, serving

PROJECT = REPOSITORY / "examples" / "django_site"


def manage(environment: dict[str, str], *arguments: str) -> str:
    """Run ``manage.py`` with ``arguments``; what it printed."""
    done = subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=PROJECT,
        env={**environment, "PYTHONPATH": f"{PROJECT}:{REPOSITORY}"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{arguments}:\n{done.stdout}\n{done.stderr}"
    return done.stdout.strip()


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("django")
    return {**os.environ, "DJANGO_EXAMPLE_DIR": str(root / "data")}


@pytest.fixture(scope="module")
def server(environment: dict[str, str], request: pytest.FixtureRequest) -> Iterator[ExampleServer]:
    manage(environment, "migrate", "--noinput")
    manage(environment, "add_note", "first")
    example = ExampleServer(
        gunicorn("djsite.wsgi:application", chdir=PROJECT),
        Path(environment["DJANGO_EXAMPLE_DIR"]).parent / "server.log",
        environment={"DJANGO_EXAMPLE_DIR": environment["DJANGO_EXAMPLE_DIR"]},
        cwd=PROJECT,
        ready_path="/notes/0/",  # a 404: nothing stored before the tests
    )
    with serving(example, request):
        yield example


def test_a_post_save_in_another_process_purges_the_tagged_pages(
    server: ExampleServer, environment: dict[str, str]
) -> None:
    assert "stored" in server.cache_status("/")
    assert "stored" in server.cache_status("/notes/1/")
    for _ in range(3):
        assert "; hit" in server.cache_status("/")
    manage(environment, "add_note", "second")  # post_save: purge "notes" and "note-2"
    page = server.request("GET", "/")
    assert "miss" in page.headers["cache-status"]
    assert b"second" in page.body
    # The first note's page carries neither tag: still a hit.
    assert "; hit" in server.cache_status("/notes/1/")


def test_an_edit_purges_the_notes_own_page(
    server: ExampleServer, environment: dict[str, str]
) -> None:
    server.cache_status("/notes/1/")
    assert server.cache_status("/notes/1/").startswith("sitecache; hit; ttl=")
    manage(environment, "add_note", "--edit", "1", "first, edited")
    page = server.request("GET", "/notes/1/")
    assert "miss" in page.headers["cache-status"]
    assert b"first, edited" in page.body


def test_a_post_delete_in_another_process_purges_the_list_and_the_notes_page(
    server: ExampleServer, environment: dict[str, str]
) -> None:
    note_id = manage(environment, "add_note", "doomed")
    for path in ("/", f"/notes/{note_id}/"):
        server.cache_status(path)
        assert "; hit" in server.cache_status(path), path
    manage(environment, "delete_note", note_id)  # post_delete: purge "notes" and "note-<id>"
    page = server.request("GET", "/")
    assert "miss" in page.headers["cache-status"]
    assert b"doomed" not in page.body
    gone = server.request("GET", f"/notes/{note_id}/")
    assert gone.status == 404, (gone.status, gone.body[:300])
    assert b"doomed" not in gone.body


def test_the_s_maxage_of_a_view_is_the_pages_lifetime(server: ExampleServer) -> None:
    server.cache_status("/notes/1/")
    status = server.cache_status("/notes/1/")
    ttl = int(status.split("ttl=", 1)[1].split(";", 1)[0])
    assert 0 < ttl <= 600
    assert status.endswith("; detail=s-maxage")  # the rule that gave the lifetime
