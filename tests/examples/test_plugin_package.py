"""A third-party plugin package (``examples/sitecache-hello-plugin``), installed with pip (not
editable) beside the sitecache wheel in a fresh virtual environment: its REST routes answer,
and its companion cache plugin, found through the ``sitecache.cache_plugins`` entry point, is
listed, switched on over REST and changes the pages stored."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.deployment import Deployment, wait_for
from tests.e2e.server import REPOSITORY
from tests.e2e.test_wheel import IGNORED, run
from tests.e2e.test_wheel import wheel as wheel  # the fixture: the sitecache wheel

PACKAGE = REPOSITORY / "examples" / "sitecache-hello-plugin"
ROUTE = "/site-json/hello/v1/greeting"
FOOTER = b"<!-- cached with sitecache-hello -->"


def install_hello_package(built: Path, root: Path) -> Path:
    """A fresh virtual environment under ``root`` with the sitecache wheel ``built``, the
    example package (built from a copy, not editable) and waitress; returns its directory."""
    # A copy: building in place would leave build/ and *.egg-info in the checkout.
    source = root / "sitecache-hello-plugin"
    shutil.copytree(PACKAGE, source, ignore=IGNORED)
    venv = root / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=root)
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(built),
         str(source), "waitress"], cwd=root)  # fmt: skip
    location = run([str(python), "-c", "import sitecache_hello; print(sitecache_hello.__file__)"],
                   cwd=root)  # fmt: skip
    assert Path(location.strip()).is_relative_to(venv), location
    return venv


@pytest.fixture(scope="module")
def site(
    wheel: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    built, _ = wheel
    root = tmp_path_factory.mktemp("plugin-package")
    venv = install_hello_package(built, root)
    deployment = Deployment(
        root / "site",
        ['plugins = ["sitecache_hello:activate"]'],
        bin_dir=venv / "bin",
        cwd=root,
    )
    deployment.init()
    deployment.serve("waitress")
    try:
        yield deployment
    finally:
        deployment.stop()


def test_the_packages_routes_are_registered_in_rest_api_init(site: Deployment) -> None:
    hello = site.request("GET", f"{ROUTE}?name=Ada")
    assert hello.status == 200
    assert hello.json() == {"message": "Hello, Ada!"}
    assert site.request("GET", ROUTE).json() == {"message": "Hello, world!"}
    refused = site.request("GET", f"{ROUTE}?name=")
    assert refused.status == 400
    assert refused.json()["code"] == "rest_invalid_param"  # type: ignore[index]
    assert site.request("POST", ROUTE, {"message": "Hi"}).status == 401
    created = site.request("POST", ROUTE, {"message": "Hi"}, admin=True)
    assert (created.status, created.json()) == (201, {"message": "Hi"})
    index = site.request("GET", "/site-json/").json()
    assert "hello/v1" in index["namespaces"]  # type: ignore[index]


def test_the_companion_cache_plugin_comes_from_its_entry_point(site: Deployment) -> None:
    plugins = {entry["key"]: entry for entry in site.api("GET", "/plugins")}
    assert plugins["hello_footer"]["title"] == "Hello footer"
    assert plugins["hello_footer"]["enabled"] is False
    site.api("POST", "/cache", {"all": True})
    assert FOOTER not in site.request("GET", "/").body
    switched = {
        entry["key"]: entry for entry in site.api("POST", "/plugins", {"hello_footer": True})
    }
    assert switched["hello_footer"]["enabled"] is True
    site.api("POST", "/cache", {"all": True})

    def stored_page() -> bytes | None:
        page = site.request("GET", "/")
        return page.body if "hit" in page.headers.get("cache-status", "") else None

    def stored_page_with_footer() -> bytes | None:
        page = stored_page()
        return page if page is not None and FOOTER in page else None

    # Every process applies a switch within a second.
    body = wait_for(stored_page_with_footer, 10, "a stored page with the plugin's footer")
    assert body.count(FOOTER) == 1
