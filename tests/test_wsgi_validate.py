"""The application keeps PEP 3333 as `wsgiref.validate` checks it, on every kind of answer:
front pages (miss, hit, 304, HEAD), REST GET and POST, errors, bypasses (#20 point 3).

`wsgiref.validate.validator` raises `AssertionError` (or warns, and warnings are errors in
this suite) at the first breach, on either side: the environ the server gives, the status and
headers the app starts, the body it returns and how its iterable is closed.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any
from wsgiref.validate import WSGIWarning, validator

import pytest
from werkzeug.test import Client

from tests.auth.conftest import FromAddress, build_site
from tests.conftest import AppFactory

SITE = "http://example.org"


@pytest.fixture
def checked(app_factory: AppFactory) -> Iterator[tuple[Client, dict[str, str]]]:
    """A client of the validated application and an administrator's Basic credentials."""
    app = app_factory()
    site = build_site(app)
    admin = site.basic("administrator")
    with warnings.catch_warnings():
        warnings.simplefilter("error", WSGIWarning)
        yield Client(validator(FromAddress(app, "127.0.0.1"))), admin


def get(client: Client, path: str, **kwargs: Any) -> Any:
    """A GET whose body is read and whose iterable is closed (``buffered``), as a server
    does."""
    return client.get(path, base_url=SITE, buffered=True, **kwargs)


def test_front_pages_miss_hit_304_and_head_keep_pep_3333(
    checked: tuple[Client, dict[str, str]],
) -> None:
    client, _ = checked
    first = get(client, "/")
    assert first.status_code == 200
    assert "stored" in first.headers["Cache-Status"]
    hit = get(client, "/")
    assert "hit" in hit.headers["Cache-Status"]
    assert hit.data == first.data
    etag = hit.headers["ETag"]
    assert get(client, "/", headers={"If-None-Match": etag}).status_code == 304
    assert (
        get(client, "/", headers={"Accept-Encoding": "gzip"}).headers.get("Content-Encoding")
        == "gzip"
    )
    head = client.head("/", base_url=SITE, buffered=True)
    assert head.status_code == 200
    assert head.data == b""
    assert get(client, "/no-such-page/").status_code == 404
    assert "bypass" in get(client, "/?s=query").headers["Cache-Status"]


def test_rest_reads_writes_and_errors_keep_pep_3333(
    checked: tuple[Client, dict[str, str]],
) -> None:
    client, admin = checked
    assert get(client, "/site-json/").status_code == 200
    assert get(client, "/site-json/site/v2/posts").status_code == 200
    created = client.post(
        "/site-json/site/v2/posts",
        json={"title": "Validated", "content": "Body", "status": "publish"},
        headers=admin,
        base_url=SITE,
        buffered=True,
    )
    assert created.status_code == 201, created.text
    link = created.get_json()["link"].removeprefix(SITE)
    assert "stored" in get(client, link).headers["Cache-Status"]
    assert "hit" in get(client, link).headers["Cache-Status"]
    assert get(client, "/site-json/site/v2/posts/999999").status_code == 404
    refused = client.post(
        "/site-json/site/v2/posts", json={"title": "x"}, base_url=SITE, buffered=True
    )
    assert refused.status_code == 401
    stats = get(client, "/site-json/site-cache/v1/stats", headers=admin)
    assert stats.status_code == 200
    purged = client.post(
        "/site-json/site-cache/v1/cache",
        json={"all": True},
        headers=admin,
        base_url=SITE,
        buffered=True,
    )
    assert purged.status_code == 200
    assert "miss" in get(client, link).headers["Cache-Status"]
    assert (
        client.options("/site-json/site/v2/posts", base_url=SITE, buffered=True).status_code == 200
    )


def test_the_validator_catches_a_breach_here() -> None:
    """The check above can fail: a body of text instead of bytes is refused."""

    def broken(environ: dict[str, Any], start_response: Any) -> Any:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return ["text"]

    with pytest.raises(AssertionError):
        Client(validator(broken)).get("/", buffered=True)
