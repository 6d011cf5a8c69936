"""Every Python example of the documentation and the README runs as written (Sybil).

Each page's ``python`` blocks run in page order in one namespace, as a reader types them in, in
a temporary working directory (examples that write, ``var/example-cache``, write there) with
no ``SITECACHE_*`` variable of the caller's; ``>>>`` lines are checked like doctests. A page's
blocks must all run: none is skipped.
"""

from __future__ import annotations

import doctest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sybil import Sybil
from sybil.parsers.myst import PythonCodeBlockParser
from werkzeug.test import Client

from sitecache.app import create_app
from tests.doc_pages import REPOSITORY, blocks, name_of, pages

SYBIL = Sybil(
    parsers=[PythonCodeBlockParser(doctest_optionflags=doctest.ELLIPSIS)],
    path=str(REPOSITORY),
)

#: the pages with Python examples (a page without any is not checked here)
PYTHON_PAGES = [path for path in pages() if any(b.language == "python" for b in blocks(path))]


def test_the_pages_hold_the_examples_this_test_runs() -> None:
    names = {name_of(path) for path in PYTHON_PAGES}
    assert {
        "README.md",
        "docs/tutorials/pagecache-wsgi.md",
        "docs/tutorials/write-a-plugin.md",
        "docs/howto/purging.md",
        "docs/howto/tuning.md",
    } <= names


@pytest.mark.parametrize("path", PYTHON_PAGES, ids=[name_of(p) for p in PYTHON_PAGES])
def test_every_python_example_of_the_page_runs(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("SITECACHE_CONFIG", "SITECACHE_DATA_DIR", "SITECACHE_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    document = SYBIL.parse(path)
    examples = list(document.examples())
    lines = {example.line for example in examples}
    for block in blocks(path):
        if block.language == "python":
            end = block.line + block.text.count("\n")
            assert any(block.line - 1 <= line <= end for line in lines), f"{block.where} not run"
    for example in examples:
        example.evaluate()
    try:
        check = FOLLOW_UPS.get(name_of(path))
        if check is not None:
            check(document.namespace, tmp_path)
    finally:
        for value in list(document.namespace.values()):
            if type(value).__name__ in ("App", "PageCache"):
                value.close()


def _site(directory: Path) -> Any:
    return create_app({"data_dir": str(directory), "cache_timers": False})


def _rest_framework(namespace: dict[str, Any], tmp_path: Path) -> None:
    """The plugin block's route answers; the callbacks block's items keep their own links,
    embedded per item, and context=edit is refused to anonymous callers."""
    app = _site(tmp_path / "greet")
    namespace["activate"](app)
    assert Client(app).get("/site-json/greetings/v1/hello?name=Ada").json == {
        "message": "Hello, Ada!"
    }
    app.close()
    app = _site(tmp_path / "notes")
    app.hooks.add_action("rest_api_init", namespace["register_notes"])
    notes = Client(app)
    [item] = notes.get("/site-json/notes/v1/notes?_embed").get_json()
    assert item["_embedded"]["about"][0]["text"] == "first"
    assert "secret" not in item
    refused = notes.get("/site-json/notes/v1/notes/1?context=edit")
    assert (refused.status_code, refused.get_json()["code"]) == (401, "rest_forbidden_context")
    app.close()


def _content_site(namespace: dict[str, Any], tmp_path: Path) -> None:
    """The blocks block's type renders in a post's content, tagged."""
    app = _site(tmp_path / "blocks")
    namespace["register_blocks"](app)
    post = app.content.create_post(
        title="Count", status="publish", content="<!-- wp:acme/post-count /-->"
    )
    rendered = app.site.blocks.render_content(post)
    assert rendered.html == "<p class='post-count'>1 posts</p>"
    assert rendered.tags == ("post-list",)
    app.close()


def _companion_plugins(namespace: dict[str, Any], tmp_path: Path) -> None:
    """The companion plugins' setup(app) runs on a real application."""
    app = _site(tmp_path / "site")
    namespace["setup"](app)
    assert app.cache_api.plugins.get("purge_webhook").urls == ["https://cdn.example.net/purge"]
    app.close()


#: page -> what to check once its examples ran (their functions called on a real site)
FOLLOW_UPS: dict[str, Callable[[dict[str, Any], Path], None]] = {
    "docs/reference/rest-framework.md": _rest_framework,
    "docs/reference/content-site.md": _content_site,
    "docs/reference/rest-site-cache-v1.md": _companion_plugins,
    "docs/howto/purging.md": _companion_plugins,
}
