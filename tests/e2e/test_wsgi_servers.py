"""The same requests under every WSGI server users run (#20 point 3): gunicorn with
``sitecache serve``'s threaded workers and with its default sync workers, waitress, and uWSGI
(skipped with a message where it is not installed).

Each server serves a fresh site; the test drives what a site sees every day: front pages
(a miss, then hits, a 304, HEAD, gzip), REST reads, an edit over REST that purges the page,
REST errors, and a bypass. `tests/e2e/test_any_server.py` checks the background work (GC,
preload, counters) under the same servers.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.deployment import SERVER_KINDS, Deployment
from tests.e2e.server import stopped_after

POSTS = "/site-json/site/v2/posts"


@pytest.fixture(scope="module", params=SERVER_KINDS)
def site(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    kind = str(request.param)
    deployment = Deployment(Path(tmp_path_factory.mktemp(kind)) / "site")
    deployment.init()
    deployment.serve(kind)
    with stopped_after(deployment, request, kind):
        yield deployment


def status_of(site: Deployment, path: str, **headers: str) -> str:
    response = site.request("GET", path, headers=headers)
    assert response.status == 200, (path, response.status, response.body[:300])
    return response.headers["cache-status"]


def test_front_pages_miss_hit_304_head_and_gzip(site: Deployment) -> None:
    first = site.request("GET", "/")
    assert first.status == 200
    assert "stored" in first.headers["cache-status"]
    hit = site.request("GET", "/")
    assert "; hit" in hit.headers["cache-status"]
    assert hit.body == first.body
    not_modified = site.request("GET", "/", headers={"If-None-Match": hit.headers["etag"]})
    assert not_modified.status == 304
    assert not_modified.body == b""
    head = site.request("HEAD", "/")
    assert head.status == 200
    assert head.body == b""
    assert "; hit" in head.headers["cache-status"]
    zipped = site.request("GET", "/", headers={"Accept-Encoding": "gzip"})
    assert zipped.headers.get("content-encoding") == "gzip"
    assert gzip.decompress(zipped.body) == first.body
    assert "bypass" in site.request("GET", "/?s=anything").headers["cache-status"]


def test_rest_reads_an_edit_that_purges_and_errors(site: Deployment) -> None:
    index = site.request("GET", "/site-json/")
    assert index.status == 200
    assert "site/v2" in index.json()["namespaces"]  # type: ignore[index]
    created = site.request(
        "POST", POSTS, {"title": "Served", "content": "First", "status": "publish"}, admin=True
    )
    assert created.status == 201, created.body
    post: Any = created.json()
    path = post["link"].split("://", 1)[1].split("/", 1)[1]
    page = f"/{path}"
    assert "stored" in status_of(site, page)
    assert "; hit" in status_of(site, page)
    edited = site.request("POST", f"{POSTS}/{post['id']}", {"content": "Second"}, admin=True)
    assert edited.status == 200, edited.body
    after = site.request("GET", page)
    assert "miss" in after.headers["cache-status"]
    assert b"Second" in after.body
    listed = site.request("GET", f"{POSTS}?per_page=1")
    assert listed.status == 200
    assert listed.headers["x-site-total"] == "1"
    assert site.request("POST", POSTS, {"title": "x"}).status == 401
    bad = site.request("POST", POSTS, {"title": "x", "status": "nope"}, admin=True)
    assert bad.status == 400
    assert bad.json()["code"] == "rest_invalid_param"  # type: ignore[index]
    missing = site.request("GET", "/site-json/no/such/route")
    assert missing.status == 404
    assert missing.json()["code"] == "rest_no_route"  # type: ignore[index]
