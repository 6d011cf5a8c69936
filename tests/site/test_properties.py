"""Properties of the theme: every permalink resolves to its post; no text escapes escaping."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from sitecache.app import App, create_app

STRUCTURES = (
    "/%postname%/",
    "/%year%/%monthnum%/%day%/%postname%/",
    "/%year%/%monthnum%/%postname%/",
    "/archives/%post_id%/",
    "/%category%/%postname%/",
    "/%author%/%postname%-%post_id%/",
)
SETTINGS = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def make_app(tmp_path: Path) -> App:
    return create_app(
        {
            "data_dir": str(tmp_path / "var"),
            "site_url": "http://example.org",
            "password_hash_cost": 1024,
            "cache_timers": False,
        }
    )


@SETTINGS
@given(
    structure=st.sampled_from(STRUCTURES),
    title=st.text(min_size=1, max_size=40),
    date=st.integers(min_value=0, max_value=1_700_000_000),
)
def test_every_permalink_resolves_to_its_post(
    tmp_path: Path, structure: str, title: str, date: int
) -> None:
    app = make_app(tmp_path)
    app.content.update_option("permalink_structure", structure)
    author = app.auth.users.find("writer") or app.auth.users.create(
        "writer", "password123", "author"
    )
    category = app.content.get_term_by_slug("category", "news") or app.content.create_term(
        "category", "News"
    )
    post = app.content.create_post(
        title=title, status="publish", date_gmt=date, author=author.id, term_ids=[category.id]
    )
    url = urlsplit(app.site.post_url(post))
    response = Client(app).get(url.path, query_string=url.query)
    assert response.status_code == 200, (structure, url.path)
    assert f"post-{post.id}" in response.headers["Cache-Tag"].split(",")
    assert response.headers["X-Site-Page-Type"] == "single"


@SETTINGS
@given(title=st.text(min_size=1, max_size=60), text=st.text(min_size=1, max_size=200))
def test_no_title_or_content_reaches_the_page_unescaped(
    tmp_path: Path, title: str, text: str
) -> None:
    app = make_app(tmp_path)
    marker_title = f"<x-title>{title}"
    post = app.content.create_post(title=marker_title, content=f"<x-body>{text}", status="publish")
    body = Client(app).get(urlsplit(app.site.post_url(post)).path).get_data(as_text=True)
    assert "<x-title>" not in body
    assert "<x-body>" not in body
    assert "&lt;x-body&gt;" in body
