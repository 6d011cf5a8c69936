"""The package as users install it (#16): a wheel built from the sources, installed (not
editable) in a fresh virtual environment with its dependencies and waitress, serves every page
type of the demo site, finishes a preload asked for over REST and runs GC on schedule.

Before #16 the wheel shipped only ``templates/*.html``: ``/feed/`` and ``/sitemap.xml`` answered
500 (``TemplateNotFound``) from any non-editable install.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitecache.cache.api.timers import GC_NAME
from sitecache.cache.storage import DiskStorage
from tests.e2e.deployment import Deployment, wait_for, warning_codes
from tests.e2e.server import REPOSITORY

#: what a copy of the sources leaves out (a fresh clone has none of it)
IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "var", "build", "dist", "*.egg-info", "__pycache__", "*.pyc",
    ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".import_linter_cache",
)  # fmt: skip


def run(command: list[str], cwd: Path, timeout: float = 600) -> str:
    completed = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert completed.returncode == 0, f"{command}:\n{completed.stdout}\n{completed.stderr}"
    return completed.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(the wheel, the copy of the sources it was built from)``."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    shutil.copytree(REPOSITORY, source, ignore=IGNORED)
    dist = root / "dist"
    run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(dist)],
        cwd=root)  # fmt: skip
    [built] = dist.glob("sitecache-*.whl")
    return built, source


@pytest.fixture(scope="module")
def site(
    wheel: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """The wheel installed in a fresh virtual environment, its demo site under waitress."""
    built, _ = wheel
    root = tmp_path_factory.mktemp("installed")
    venv = root / "venv"
    # No pip of its own (ensurepip costs seconds): this interpreter's pip installs into it.
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=root)
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(built),
         "waitress"], cwd=root)  # fmt: skip
    # The package is the installed one, not the checkout.
    location = run([str(python), "-c", "import sitecache; print(sitecache.__file__)"], cwd=root)
    assert Path(location.strip()).is_relative_to(venv), location
    deployment = Deployment(root / "site", bin_dir=venv / "bin", cwd=root)
    deployment.init(demo=True)
    deployment.serve("waitress")
    try:
        yield deployment
    finally:
        deployment.stop()


def test_the_wheel_ships_every_file_of_the_package(wheel: tuple[Path, Path]) -> None:
    built, source = wheel
    with zipfile.ZipFile(built) as archive:
        shipped = set(archive.namelist())
    package = source / "sitecache"
    wanted = {
        path.relative_to(source).as_posix()
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert wanted - shipped == set()
    assert {"sitecache/py.typed", "sitecache/templates/feed.xml"} <= shipped


def links(site: Deployment, route: str) -> list[str]:
    """The ``link`` of each item a public ``site/v2`` collection lists, as local paths."""
    response = site.request("GET", f"/site-json/site/v2/{route}")
    assert response.status == 200, response.body[:300]
    items: Any = response.json()
    return [str(item["link"]).removeprefix(site.base_url) for item in items]


def test_every_page_type_of_the_demo_site_is_served(site: Deployment) -> None:
    post = links(site, "posts?per_page=1")[0]
    year = site.request("GET", "/site-json/site/v2/posts?per_page=1").json()[0]["date"][:4]  # type: ignore[index]
    pages: dict[str, tuple[str, int, str]] = {
        "home": ("/", 200, "text/html"),
        "single": (post, 200, "text/html"),
        "page": (links(site, "pages?per_page=1")[0], 200, "text/html"),
        "category": (links(site, "categories?hide_empty=true&per_page=1")[0], 200, "text/html"),
        "tag": (links(site, "tags?hide_empty=true&per_page=1")[0], 200, "text/html"),
        "author": (links(site, "users?per_page=1")[0], 200, "text/html"),
        "archives": (f"/{year}/", 200, "text/html"),
        "search": ("/search/cache/", 200, "text/html"),
        "feed": ("/feed/", 200, "application/rss+xml"),
        "sitemap": ("/sitemap.xml", 200, "application/xml"),
        "404": ("/no-such-page-here/", 404, "text/html"),
    }
    for kind, (path, status, content_type) in pages.items():
        response = site.request("GET", path)
        assert response.status == status, (kind, path, response.status, response.body[:300])
        assert response.headers["content-type"].startswith(content_type), (kind, path)
        assert kind in response.headers["x-site-page-type"], (kind, path)
        assert response.body, (kind, path)


def test_a_rest_preload_finishes_and_gc_runs_on_schedule(site: Deployment) -> None:
    site.request("GET", "/")  # waitress hands over the first request: the timers start
    started = site.api("POST", "/preload", {"enable": True})
    assert started["total"] > 200
    progress = wait_for(
        lambda: (p := site.api("GET", "/status")["preload"])["finished"] and not p["running"] and p,
        180,
        "the preload to finish",
    )
    assert (progress["done"], progress["failed"]) == (progress["total"], 0)
    DiskStorage(site.data_dir / "cache").set_value(
        GC_NAME, json.dumps({"last_run": None, "next_run": time.time() - 1}).encode()
    )
    gc = wait_for(lambda: (g := site.api("GET", "/status")["gc"])["last_run"] and g, 30, "GC")
    assert gc["next_run"] > gc["last_run"]
    assert "timers_not_running" not in warning_codes(site.api("GET", "/status"))
