"""End to end under gunicorn with two sync workers, each with its own memory tier: a POST
answered by one worker purges the page for the other (RFC 9111 §4.4), through the shared disk
cache's purge generation."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.server import Response
from tests.examples.server import ExampleServer, gunicorn, serving

#: Requests tried before giving up on being answered by the other worker.
ATTEMPTS = 40


def while_one_worker_is_held(site: ExampleServer, path: str) -> Response:
    """GET ``path`` while a slow request keeps one worker busy: the other one answers it
    (sync workers take one request at a time)."""
    held = threading.Thread(target=site.request, args=("GET", "/hold/?s=0.4"))
    held.start()
    time.sleep(0.15)
    try:
        return site.request("GET", path)
    finally:
        held.join()


@pytest.fixture
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ExampleServer]:
    server = ExampleServer(
        gunicorn("tests.cache.http_site:app", workers=2),
        tmp_path / "server.log",
        environment={
            "HTTP_SITE_STATE": str(tmp_path / "state"),
            "HTTP_SITE_CACHE": str(tmp_path / "cache"),
        },
        ready_path="/ready?x=1",  # a query string: never stored
    )
    with serving(server, request):
        yield server


def test_a_post_on_one_worker_purges_the_page_for_the_other(site: ExampleServer) -> None:
    # Both workers hold version 1 in their memory tiers.
    warm: set[str] = set()
    for _ in range(ATTEMPTS):
        answer = while_one_worker_is_held(site, "/page/")
        assert answer.body == b"<p>version 1</p>"
        if answer.headers["cache-status"].startswith("sitecache; hit"):
            warm.add(answer.headers["x-served-by"])
        if len(warm) == 2:
            break
    assert len(warm) == 2, "both workers should have served a hit"
    posted = site.request("POST", "/page/", b"change=1")
    assert posted.status == 303
    assert "detail=method" in posted.headers["cache-status"]
    poster = posted.headers["x-served-by"]
    others = 0
    for _ in range(ATTEMPTS):
        answer = while_one_worker_is_held(site, "/page/")
        # Not one answer after the POST returned shows the old version, from either worker.
        assert answer.body == b"<p>version 2</p>", answer.headers
        if answer.headers["x-served-by"] != poster:
            others += 1
            if others == 2:
                break
    assert others == 2, "the other worker should have answered"
