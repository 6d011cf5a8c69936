"""One truth for warnings on a site run as ``make run`` runs it: ``sitecache serve --bind``
with no ``site_url`` in the configuration (the server caches its bind address), where the
command line once warned ``loopback_only`` while ``GET /status``, the dashboard and ``/healthz``
said nothing. All of them now derive their warnings with one function from the same inputs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.deployment import Deployment, wait_for, warning_codes
from tests.e2e.server import stopped_after


@pytest.fixture
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    deployment = Deployment(tmp_path / "site")
    deployment.init()
    deployment.serve("serve", workers=1)
    with stopped_after(deployment, request, "serve"):
        yield deployment


def test_the_command_line_rest_and_healthz_warn_alike(site: Deployment) -> None:
    assert site.request("GET", "/").status == 200  # the first request starts the timers

    def settled() -> list[str] | None:
        codes = list(warning_codes(site.api("GET", "/status")))
        return None if "timers_not_running" in codes else codes

    rest = wait_for(settled, 20, "the timers to start")
    command_line = warning_codes(site.cli_json("cache", "status"))
    assert command_line == rest
    assert "loopback_only" not in rest  # the server caches the host it is bound to
    health = site.request("GET", "/healthz").json()
    assert isinstance(health, dict)
    assert health["warnings"] == rest
    # A change both see: caching turned off is one more warning, everywhere.
    site.api("POST", "/settings", {"enabled": False})
    assert warning_codes(site.cli_json("cache", "status")) == [*rest, "cache_disabled"]
    assert warning_codes(site.api("GET", "/status")) == [*rest, "cache_disabled"]
