"""Metrics, health and the OpenAPI document through gunicorn with two workers (#19 points 4-6)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter

from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.server import REPOSITORY, LiveServer

TOKEN = "e2e-metrics-token-0123456789"
PLUGINS = ["tests.e2e.ops_plugin:activate"]
SERVER_CONFIG = [f'metrics_token = "{TOKEN}"']


def scrape(server: LiveServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = server.request(
        "GET", "/site-admin/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status == 200, response.body
    found = {}
    for family in text_string_to_metric_families(response.body.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_metrics_add_up_the_counts_of_every_worker(live_server: LiveServer) -> None:
    answered: Counter[int] = Counter()
    deadline = time.monotonic() + 30
    # Until both workers have answered (and at least 20 requests were made).
    while len(answered) < 2 or sum(answered.values()) < 20:
        assert time.monotonic() < deadline, f"one worker answered everything: {answered}"
        response = live_server.request("GET", "/site-json/ops-e2e/v1/pid")
        assert response.status == 200
        pid = response.json()["pid"]  # type: ignore[index]
        answered[pid] += 1
    made = sum(answered.values())
    # Each worker's timer flushes its counts within about a second.
    deadline = time.monotonic() + 20
    while True:
        found = scrape(live_server)
        counted = found[("sitecache_bypasses_total", (("reason", "rest_or_admin"),))]
        # The latency of a request is recorded after its answer, so it may reach the next
        # flush: wait for both counts.
        latency = found[("sitecache_request_duration_seconds_count", ())]
        if (counted >= made and latency >= made) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    # More than any one worker answered: the figures are the site's, not one process's.
    assert counted >= made > max(answered.values())
    assert latency >= made


def test_metrics_refuse_a_scraper_without_the_token(live_server: LiveServer) -> None:
    response = live_server.request("GET", "/site-admin/metrics")
    assert response.status == 401
    assert json.loads(response.body)["code"] == "rest_forbidden"
    response = live_server.request(
        "GET", "/site-admin/metrics", headers={"Authorization": "Bearer not-the-token-at-all"}
    )
    assert response.status == 401


def test_healthz_answers_without_auth_and_is_never_stored(live_server: LiveServer) -> None:
    for _ in range(3):
        response = live_server.request("GET", "/healthz")
        assert response.status == 200
        assert json.loads(response.body)["checks"]["storage"] == {"status": "ok", "backend": "disk"}
        assert response.headers["cache-control"] == "no-store, private"
        assert "hit" not in response.headers["cache-status"]


def test_the_served_document_is_the_one_the_command_prints(live_server: LiveServer) -> None:
    served = json.loads(live_server.request("GET", "/site-json-openapi").body)
    assert served["servers"] == [{"url": live_server.base_url}]
    assert "/site-json/ops-e2e/v1/pid" in served["paths"]  # a plugin's route
    printed = subprocess.run(
        [sys.executable, "-m", "sitecache.cli", "openapi"],
        capture_output=True,
        check=True,
        cwd=REPOSITORY,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(REPOSITORY),
            "SITECACHE_DATA_DIR": str(live_server.data_dir),
            "SITECACHE_CONFIG": str(live_server.data_dir.parent / "sitecache.toml"),
        },
    )
    tool = subprocess.run(
        [sys.executable, "-m", "json.tool"], input=printed.stdout, capture_output=True, check=True
    )
    document = json.loads(tool.stdout)
    assert document["paths"] == served["paths"]
