"""The documentation site builds with warnings as errors (``make docs`` does the same), its
generated references say what the code holds, and the everyday questions are answered within
two clicks of its home page.

One build per module (about ten seconds); the checks read its HTML.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import pytest

from tests.doc_pages import DOCS

#: question -> (the page that answers it, texts the answer must hold)
LOOKUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "how to change the TTL": (
        "howto/tuning.html",
        ("max_age", "sitecache cache settings max_age 600", "/site-cache/v1/settings"),
    ),
    "purging one URL from Python on the built-in site": (
        "howto/purging.html",
        ("app.cache.purge_url(", "Purger.open("),
    ),
    "what each GET /stats field means, with the hit ratio formula": (
        "reference/stats-and-status.html",
        ("hit_ratio = (hit + stale) / (hit + stale + miss)", "bypass_reasons", "series.start"),
    ),
    "running two nodes": ("howto/several-nodes.html", ("$http_host", "cache_backend")),
    "what a Cache-Status value means": (
        "reference/cache-status-header.html",
        ("sitecache; fwd=uri-miss; stored", "detail=logged_in_cookie"),
    ),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site's HTML directory (a fresh build: every page read, every warning seen)."""
    where = tmp_path_factory.mktemp("docs")
    build = [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-b", "html", "-q"]
    result = subprocess.run(
        [*build, "-d", str(where / "doctrees"), str(DOCS), str(where / "html")],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    return where / "html"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [value for name, value in attrs if name == "href" and value]


def links(site: Path, page: str) -> Iterator[str]:
    """The site's pages ``page`` links to (relative to the site's root, fragments dropped)."""
    parser = _Links()
    parser.feed((site / page).read_text(encoding="utf-8"))
    for href in parser.hrefs:
        target, _ = urldefrag(urljoin(page, href))
        if target and "://" not in target and target.endswith(".html"):
            yield target


def clicks_from_home(site: Path) -> dict[str, int]:
    """Each page reachable from index.html and the fewest clicks it takes."""
    depth = {"index.html": 0}
    frontier = ["index.html"]
    while frontier:
        following = []
        for page in frontier:
            for target in links(site, page):
                if target not in depth and (site / target).is_file():
                    depth[target] = depth[page] + 1
                    following.append(target)
        frontier = following
    return depth


def text_of(site: Path, page: str) -> str:
    """A page's text: tags dropped, entities decoded, typographic quotes made plain,
    whitespace collapsed."""
    markup = (site / page).read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", markup))
    for fancy, plain in (("\u2019", "'"), ("\u2018", "'"), ("\u201c", '"'), ("\u201d", '"')):
        text = text.replace(fancy, plain)
    return " ".join(text.split())


@pytest.mark.parametrize("question", LOOKUPS)
def test_each_everyday_question_is_answered_within_two_clicks(site: Path, question: str) -> None:
    page, answers = LOOKUPS[question]
    depth = clicks_from_home(site)
    assert page in depth, f"{page} is not reachable from the home page"
    assert depth[page] <= 2, (question, page, depth[page])
    text = text_of(site, page)
    for answer in answers:
        assert answer in text, (question, page, answer)


def test_every_page_is_reachable_from_the_home_page(site: Path) -> None:
    depth = clicks_from_home(site)
    pages = {
        path.relative_to(site).as_posix()
        for path in site.rglob("*.html")
        if not path.relative_to(site).parts[0].startswith("_")
        and path.name not in ("genindex.html", "search.html", "py-modindex.html")
    }
    assert pages - set(depth) == set()


def test_the_generated_references_hold_what_the_code_holds(site: Path) -> None:
    from sitecache.cache.api.schemas import STATS_SCHEMA, STATUS_WARNINGS
    from sitecache.cache.outcome import explanations
    from sitecache.cache.settings import SETTINGS_SCHEMA
    from sitecache.cli.parser import COMMANDS
    from sitecache.config import CONFIG_SCHEMA

    stats = text_of(site, "reference/stats-and-status.html")
    for name in STATS_SCHEMA["properties"]:
        assert name in stats
    for code in STATUS_WARNINGS:
        assert code in stats
    reasons = text_of(site, "reference/cache-status-header.html")
    for reason, explanation in explanations().items():
        assert f"detail={reason} {explanation}" in reasons
    settings = text_of(site, "reference/cache-settings.html")
    assert all(key in settings for key in SETTINGS_SCHEMA["properties"])
    configuration = text_of(site, "reference/configuration.html")
    assert all(key in configuration for key in CONFIG_SCHEMA["properties"])
    cli = text_of(site, "reference/cli.html")
    for command in COMMANDS:
        assert f"sitecache {command}" in cli, command
    assert "sitecache cache flush" in cli
    assert "--post-id" in cli
    metrics = text_of(site, "reference/metrics.html")
    assert "sitecache_requests_total" in metrics
    assert "sitecache_request_duration_seconds" in metrics
    routes = text_of(site, "reference/rest-site-cache-v1.html")
    for route in ("/settings", "/status", "/stats", "/cache", "/preload", "/cache/test"):
        assert f"/site-json/site-cache/v1{route}" in routes
    assert "/site-json/site/v2/posts" in text_of(site, "reference/rest-site-v2.html")
    errors = text_of(site, "reference/error-codes.html")
    assert "rest_post_invalid_id" in errors
    assert "site_cache_storage_error" in errors
    api = text_of(site, "reference/python-api.html")
    assert "sitecache.cache.PageCache" in api
    assert "purge_url" in api


def test_no_rendered_docstring_names_an_issue(site: Path) -> None:
    text = text_of(site, "reference/python-api.html")
    assert not re.findall(r"\(#\d+", text)
