"""The site's style sheet is a file of its own (`sitecache.site.stylesheet`): every HTML page
links it under a versioned URL, browsers keep each version for a year, and a theme's
``site_style.css`` gets a version of its own."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.site.stylesheet import IMMUTABLE, STYLESHEET_PATH
from sitecache.site.themes import BUILTIN_THEME, Theme
from tests.conftest import AppFactory
from tests.site.test_extensions import admin_headers, call

SITE = "http://example.org"
_LINK = re.compile(r'<link rel="stylesheet" href="([^"]+)">')
PACKAGED = Path(__file__).resolve().parents[2] / "sitecache" / "templates" / "site_style.css"


def stylesheet_href(html: str) -> str:
    """The one style sheet a page links."""
    [href] = _LINK.findall(html)
    return str(href)


@pytest.fixture
def client(app: App) -> Client:
    return Client(app, use_cookies=False)


@pytest.mark.parametrize("path", ["/", "/no-such-page/", "/login"])
def test_pages_link_the_style_sheet_instead_of_carrying_it(client: Client, path: str) -> None:
    html = client.get(path, base_url=SITE).get_data(as_text=True)
    assert "<style" not in html
    assert "box-sizing" not in html  # not a rule of the style sheet in the page
    href = stylesheet_href(html)
    version = hashlib.sha256(PACKAGED.read_bytes()).hexdigest()[:16]
    assert href == f"/site-style.{version}.css"
    assert len(html.encode()) < 2000  # the front page was 7 KB with the style sheet inline


def test_the_current_version_is_immutable_and_revalidates_to_304(client: Client) -> None:
    href = stylesheet_href(client.get("/", base_url=SITE).get_data(as_text=True))
    response = client.get(href, base_url=SITE)
    assert response.status_code == 200
    assert response.mimetype == "text/css"
    assert response.get_data() == PACKAGED.read_bytes()
    assert response.headers["Cache-Control"] == IMMUTABLE
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    etag = response.headers["ETag"]
    assert etag == f'"{href.split(".")[1]}"'
    again = client.get(href, base_url=SITE, headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.get_data() == b""
    assert client.head(href, base_url=SITE).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        STYLESHEET_PATH,
        STYLESHEET_PATH + "?ver=0123456789abcdef",
        STYLESHEET_PATH + "?ver=",
        "/site-style.0123456789abcdef.css",
        "/site-style.0.css",
    ],
)
def test_another_version_gets_the_same_bytes_not_kept(client: Client, path: str) -> None:
    response = client.get(path, base_url=SITE)
    assert response.status_code == 200
    assert response.get_data() == PACKAGED.read_bytes()
    assert response.headers["Cache-Control"] == "no-cache"


def test_only_get_and_head_are_answered(client: Client) -> None:
    response = client.post(STYLESHEET_PATH, base_url=SITE)
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, HEAD"


def test_a_mounted_site_links_the_style_sheet_under_its_mount_point(app: App) -> None:
    client = Client(app, use_cookies=False)
    html = client.get("/", base_url=SITE + "/blog").get_data(as_text=True)
    href = stylesheet_href(html)
    assert re.fullmatch(r"/blog/site-style\.[0-9a-f]{16}\.css", href)
    assert client.get(href.removeprefix("/blog"), base_url=SITE + "/blog").status_code == 200


def test_the_admin_pages_policies_allow_the_sites_own_style_sheet(app: App) -> None:
    app.auth.users.create("ada", "password", "administrator", "a@example.org")
    visitor, admin = Client(app), Client(app)
    admin.post("/login", data={"log": "ada", "pwd": "password"})
    for client, path in [
        (visitor, "/"),
        (visitor, "/login"),
        (admin, "/site-admin/"),
        (admin, "/site-admin/cache"),
    ]:
        response = client.get(path)
        assert response.status_code == 200, path
        policy = dict(
            part.strip().split(" ", 1)
            for part in response.headers["Content-Security-Policy"].split(";")
        )
        assert "'self'" in policy["style-src"].split(), (path, policy)
        assert stylesheet_href(response.get_data(as_text=True)).startswith("/site-style.")


def test_a_themes_style_sheet_has_a_version_of_its_own(
    app_factory: AppFactory, tmp_path: Path
) -> None:
    app = app_factory(application_passwords="on")
    directory = tmp_path / "styled-templates"
    directory.mkdir()
    (directory / "site_style.css").write_text("body { color: rebeccapurple; }\n", "utf-8")
    theme = Theme("styled", "Styled", "1.0", "A theme with its own style.", directory)
    app.themes.discover = lambda: [BUILTIN_THEME, theme]
    client = Client(app, use_cookies=False)
    before = stylesheet_href(client.get("/", base_url=SITE).get_data(as_text=True))
    switched = call(
        Client(app), "POST", "/site/v2/themes/styled", admin_headers(app), {"status": "active"}
    )
    assert switched.status_code == 200
    after = stylesheet_href(client.get("/", base_url=SITE).get_data(as_text=True))
    assert after != before
    served = client.get(after, base_url=SITE)
    assert served.get_data() == b"body { color: rebeccapurple; }\n"
    assert served.headers["Cache-Control"] == IMMUTABLE
    assert client.get(before, base_url=SITE).headers["Cache-Control"] == "no-cache"


def test_an_earlier_releases_query_string_url_still_counts_as_current(client: Client) -> None:
    """Pages stored before the version moved into the path link ``?ver=<hash>``."""
    version = hashlib.sha256(PACKAGED.read_bytes()).hexdigest()[:16]
    response = client.get(f"{STYLESHEET_PATH}?ver={version}", base_url=SITE)
    assert response.headers["Cache-Control"] == IMMUTABLE


@pytest.mark.parametrize(
    "path",
    ["/site-style..css", "/site-style.ABCDEF.css", "/site-style.12.css.map", "/site-style.x"],
)
def test_what_only_looks_like_a_style_sheet_is_a_page_not_found(client: Client, path: str) -> None:
    assert client.get(path, base_url=SITE).status_code == 404


def test_the_page_cache_keeps_the_current_style_sheet(client: Client) -> None:
    """The version is in the path, so the page cache stores the style sheet (a query string
    would make every request a bypass)."""
    href = stylesheet_href(client.get("/", base_url=SITE).get_data(as_text=True))
    first = client.get(href, base_url=SITE)
    second = client.get(href, base_url=SITE)
    assert first.get_data() == second.get_data() == PACKAGED.read_bytes()
    assert second.headers["Cache-Status"].startswith("sitecache; hit")
    assert second.headers["Cache-Control"] == IMMUTABLE
