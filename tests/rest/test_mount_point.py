"""The REST API mounted under a path (werkzeug's ``DispatcherMiddleware``, ``SCRIPT_NAME``:
``examples/mounted_api.py``): every URL it gives out (``_links``, the API root ``Link``, the
index's routes) keeps the mount point (#34)."""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client

from examples.mounted_api import MOUNT, build
from tests.conftest import AppFactory


def hrefs(value: Any) -> list[str]:
    """Every ``href`` in a JSON document."""
    if isinstance(value, dict):
        found = [str(value["href"])] if isinstance(value.get("href"), str) else []
        return found + [href for item in value.values() for href in hrefs(item)]
    if isinstance(value, list):
        return [href for item in value for href in hrefs(item)]
    return []


@pytest.mark.parametrize("site_url", ["http://example.org", None])
def test_links_under_a_mount_point_keep_it(app_factory: AppFactory, site_url: str | None) -> None:
    app = app_factory(site_url=site_url)
    post = app.content.create_post(title="Mounted", content="x", status="publish")
    client = Client(build(app))
    base = "http://example.org"
    listing = client.get(f"{MOUNT}/site-json/site/v2/posts", base_url=base)
    assert listing.status_code == 200, listing.get_data(as_text=True)
    links = hrefs(listing.get_json())
    assert f"{base}{MOUNT}/site-json/site/v2/posts/{post.id}" in links
    assert all(f"{MOUNT}/site-json/" in href for href in links if "/site-json/" in href), links
    assert f"<{base}{MOUNT}/site-json/>" in listing.headers["Link"]
    index = client.get(f"{MOUNT}/site-json/", base_url=base).get_json()
    assert index["url"] == base  # the site's own address is not the API's mount point
    routes = hrefs(index["routes"])
    assert routes
    assert all(href.startswith(f"{base}{MOUNT}/site-json/") for href in routes)


def test_links_at_the_root_are_unchanged(app_factory: AppFactory) -> None:
    app = app_factory()
    post = app.content.create_post(title="At the root", content="x", status="publish")
    listing = Client(app).get("/site-json/site/v2/posts", base_url="http://example.org")
    assert f"http://example.org/site-json/site/v2/posts/{post.id}" in hrefs(listing.get_json())
