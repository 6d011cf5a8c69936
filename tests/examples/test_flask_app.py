"""The Flask example under gunicorn (2 sync workers): a hit, a purge by tag from the Flask
view that saves the form, and a miss after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.examples.server import ExampleServer, gunicorn, serving

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[ExampleServer]:
    root = tmp_path_factory.mktemp("flask")
    example = ExampleServer(
        gunicorn("examples.flask_app:app"),
        root / "server.log",
        environment={"FLASK_EXAMPLE_DIR": str(root / "data")},
        ready_path="/notes/0/",  # a 404: nothing stored before the test
    )
    with serving(example, request):
        yield example


def test_a_saved_form_purges_the_tagged_page_in_every_worker(server: ExampleServer) -> None:
    assert "stored" in server.cache_status("/")
    # Both workers answer from the one cache directory.
    for _ in range(4):
        assert "; hit" in server.cache_status("/")
    saved = server.request("POST", "/notes/", "text=first+note", FORM)
    assert saved.status == 303
    assert "bypass" in saved.headers["cache-status"]
    page = server.request("GET", "/")
    assert "miss" in page.headers["cache-status"]
    assert b"first note" in page.body
    assert "; hit" in server.cache_status("/")


def test_a_note_page_lives_as_long_as_its_s_maxage(server: ExampleServer) -> None:
    server.request("POST", "/notes/", "text=second", FORM)
    server.cache_status("/notes/1/")
    assert server.cache_status("/notes/1/").startswith("sitecache; hit; ttl=3")
    assert server.request("GET", "/notes/999/").status == 404


def test_an_empty_form_is_refused_and_purges_nothing(server: ExampleServer) -> None:
    server.cache_status("/")
    assert server.request("POST", "/notes/", "text=", FORM).status == 400
    assert "; hit" in server.cache_status("/")
