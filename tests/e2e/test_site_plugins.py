"""Issue #21's acceptance: the example plugin package, pip-installed into a fresh virtual
environment, is discovered through its ``sitecache.plugins`` entry point, activated over REST
on one worker of a three-worker gunicorn, and its route then answers on every worker;
deactivating makes the route 404 everywhere again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.deployment import Deployment, wait_for
from tests.e2e.test_wheel import wheel as wheel  # the fixture: the sitecache wheel
from tests.examples.test_plugin_package import install_hello_package

pytestmark = pytest.mark.e2e

PLUGIN = "sitecache-hello-plugin/hello"
WORKERS = 3


@pytest.fixture(scope="module")
def site(
    wheel: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    built, _ = wheel
    root = tmp_path_factory.mktemp("site-plugins")
    venv = install_hello_package(built, root)
    deployment = Deployment(root / "site", [], bin_dir=venv / "bin", cwd=root)
    deployment.init()
    deployment.serve("gunicorn-sync", workers=WORKERS)
    try:
        yield deployment
    finally:
        deployment.stop()


def worker_pids(site: Deployment, tries: int) -> set[int]:
    """The pids of the workers that answered ``/hello/v1/worker`` (200) in ``tries`` requests."""
    pids: set[int] = set()
    for _ in range(tries):
        response = site.request("GET", "/site-json/hello/v1/worker")
        assert response.status in (200, 404), response.body[:300]
        if response.status == 200:
            pids.add(response.json()["pid"])  # type: ignore[index]
    return pids


def test_a_plugin_activated_on_one_worker_answers_on_every_worker(site: Deployment) -> None:
    listed = site.request("GET", "/site-json/site/v2/plugins", admin=True)
    assert listed.status == 200
    items = listed.json()
    assert isinstance(items, list)
    plugins = {item["plugin"]: item for item in items}
    assert plugins[PLUGIN]["status"] == "inactive"
    assert plugins[PLUGIN]["version"] == "0.1.0"
    assert site.request("GET", "/site-json/site/v2/plugins").status == 401
    # Every worker answers 404 before activation.
    assert site.request("GET", "/site-json/hello/v1/worker").status == 404

    activated = site.request(
        "POST", f"/site-json/site/v2/plugins/{PLUGIN}", {"status": "active"}, admin=True
    )
    assert (activated.status, activated.json()["status"]) == (200, "active")  # type: ignore[index]
    # Each worker notices within about a second; keep asking until every pid has answered.
    seen: set[int] = set()

    def every_worker() -> set[int] | None:
        seen.update(worker_pids(site, 30))
        return seen if len(seen) == WORKERS else None

    wait_for(every_worker, 30, f"{WORKERS} distinct workers answering the plugin's route")
    greeting = site.request("GET", "/site-json/hello/v1/greeting?name=Ada")
    assert greeting.json() == {"message": "Hello, Ada!"}

    deactivated = site.request(
        "POST", f"/site-json/site/v2/plugins/{PLUGIN}", {"status": "inactive"}, admin=True
    )
    assert deactivated.json()["status"] == "inactive"  # type: ignore[index]

    def all_gone() -> bool | None:
        statuses = {site.request("GET", "/site-json/hello/v1/worker").status for _ in range(30)}
        return statuses == {404} or None

    wait_for(all_gone, 30, "the plugin's route gone from every worker")
