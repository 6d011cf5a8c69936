"""``/site-admin/metrics``, ``/healthz`` and ``/site-json-openapi`` in process (#19 points 4-6)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from sitecache.cache.latency import BUCKETS, LatencyRecorder, histogram
from sitecache.cache.storage import StorageError
from sitecache.disk_space import DiskReading, DiskSpace
from tests.auth.conftest import Site, build_site
from tests.cache.api.conftest import add_page
from tests.conftest import AppFactory
from tests.doc_pages import blocks, page

TOKEN = "metrics-token-0123456789"
BASE = "http://example.org"


@pytest.fixture
def site(app_factory: AppFactory) -> Site:
    return build_site(app_factory(metrics_token=TOKEN))


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text exposition, parsed by prometheus_client."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def metrics(site: Site, **headers: str) -> Any:
    return site.client().get("/site-admin/metrics", base_url=BASE, headers=headers)


def test_metrics_count_outcomes_bypasses_purges_entries_and_latency(site: Site) -> None:
    add_page(site, "/a", headers={"Cache-Tag": "tag-a"})
    client = site.client()
    for _ in range(3):
        client.get("/a", base_url=BASE)
    client.get("/a?x=1", base_url=BASE)  # a query string: bypass
    site.app.cache.engine.purge_tags(["tag-a"])
    response = metrics(site, Authorization=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert response.headers["Cache-Control"] == "no-store, private"
    found = samples(response.get_data(as_text=True))
    assert found[("sitecache_requests_total", (("outcome", "miss"),))] == 1
    assert found[("sitecache_requests_total", (("outcome", "hit"),))] == 2
    assert found[("sitecache_bypasses_total", (("reason", "query_string"),))] == 1
    assert found[("sitecache_purges_total", (("scope", "tag"),))] == 1
    assert found[("sitecache_purged_entries_total", (("scope", "tag"),))] == 1
    assert found[("sitecache_entries", (("status", "fresh"),))] == 0
    assert ("sitecache_bytes", (("kind", "body"),)) in found
    assert found[("sitecache_storage_errors_total", ())] == 0
    assert found[("sitecache_preload_running", ())] == 0
    assert found[("sitecache_preload_urls", (("state", "total"),))] == 0
    # Every request the application answered is in the histogram (this scrape once it ends).
    count = found[("sitecache_request_duration_seconds_count", ())]
    assert count >= 4
    assert found[("sitecache_request_duration_seconds_bucket", (("le", "+Inf"),))] == count
    assert found[("sitecache_request_duration_seconds_sum", ())] > 0
    after = samples(metrics(site, Authorization=f"Bearer {TOKEN}").get_data(as_text=True))
    assert after[("sitecache_request_duration_seconds_count", ())] == count + 1


def test_an_administrators_session_reads_the_metrics(site: Site) -> None:
    client = site.logged_in("administrator")
    response = client.get("/site-admin/metrics", base_url="http://localhost")
    assert response.status_code == 200
    assert samples(response.get_data(as_text=True))


@pytest.mark.parametrize(
    ("headers", "role", "status"),
    [
        ({}, None, 401),
        ({"Authorization": "Bearer wrong-token-0123456789"}, None, 401),
        ({"Authorization": f"Bearer {TOKEN[:-1]}"}, None, 401),
        ({"Authorization": f"Basic {TOKEN}"}, None, 401),
        ({}, "editor", 403),
        ({}, "subscriber", 403),
    ],
)
def test_others_get_a_json_error(
    site: Site, headers: dict[str, str], role: str | None, status: int
) -> None:
    client = site.logged_in(role) if role else site.client()
    response = client.get("/site-admin/metrics", base_url="http://localhost", headers=headers)
    assert response.status_code == status
    body = response.get_json()
    assert body["code"] == "rest_forbidden"
    assert body["data"] == {"status": status}
    assert response.headers["Cache-Control"] == "no-store, private"
    assert "sitecache_requests_total" not in response.get_data(as_text=True)


def test_without_a_configured_token_no_bearer_is_accepted(app_factory: AppFactory) -> None:
    site = build_site(app_factory())
    assert metrics(site, Authorization="Bearer ").status_code == 401
    assert metrics(site, Authorization="Bearer x").status_code == 401


def test_a_failing_storage_is_a_503_and_is_counted(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = site.app.cache.engine

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise StorageError("down")

    monkeypatch.setattr(engine.storage, "generation", broken)
    add_page(site, "/a")
    assert "storage_error" in site.client().get("/a", base_url=BASE).headers["Cache-Status"]
    monkeypatch.undo()
    found = samples(metrics(site, Authorization=f"Bearer {TOKEN}").get_data(as_text=True))
    assert found[("sitecache_storage_errors_total", ())] >= 1
    assert found[("sitecache_bypasses_total", (("reason", "storage_error"),))] == 1
    monkeypatch.setattr(engine.storage, "summary", broken)
    response = metrics(site, Authorization=f"Bearer {TOKEN}")
    assert response.status_code == 503
    assert response.get_json()["code"] == "site_cache_storage_error"


def test_the_histogram_is_cumulative_and_bounded() -> None:
    counts: dict[str, int] = {}

    def count_all(amounts: tuple[tuple[str, int], ...]) -> None:
        for name, amount in amounts:
            counts[name] = counts.get(name, 0) + amount

    recorder = LatencyRecorder(count_all)
    for seconds in (0.0, 0.0005, 0.0007, 0.3, 99.0):
        recorder.observe(seconds)
    figures = histogram(counts)
    bounds = [bound for bound, _ in figures.buckets]
    assert bounds == [f"{bound:g}" for bound in BUCKETS] + ["+Inf"]
    cumulative = dict(figures.buckets)
    assert (cumulative["0.0005"], cumulative["0.001"], cumulative["0.5"]) == (2, 3, 4)
    assert cumulative["+Inf"] == figures.count == 5
    assert figures.sum_seconds == pytest.approx(99.3012)


# ---------------------------------------------------------------------- health
def test_healthz_answers_200_naming_each_part_without_auth(site: Site) -> None:
    site.app.disk.low_bytes, site.app.disk.low_percent = 0, 0.0  # whatever this disk holds
    response = site.client().get("/healthz", base_url=BASE)
    assert response.status_code == 200
    body = response.get_json()
    disk = body["checks"].pop("disk")
    # The codes of the warnings GET /status shows (one function, the same inputs).
    assert body.pop("warnings") == [w["code"] for w in site.app.cache_api.status()["warnings"]]
    assert body == {
        "status": "ok",
        "checks": {"storage": {"status": "ok", "backend": "disk"}, "database": {"status": "ok"}},
    }
    # One disk (the data directory and the static root share it), no path: the check is public.
    assert disk["status"] == "ok"
    assert [set(reading) for reading in disk["disks"]] == [{"free_bytes", "free_percent", "level"}]
    assert str(site.app.data_dir) not in response.get_data(as_text=True)
    assert response.headers["Cache-Control"] == "no-store, private"
    assert "detail=rest_or_admin" in response.headers["Cache-Status"]  # never looked up
    assert site.app.cache.engine.list_entries()[1] == 0


def test_a_failing_cache_storage_keeps_healthz_200_with_a_warning(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cache is disposable: pages are still served (uncached), so the node stays in the
    # load balancer and says what is degraded.
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise StorageError("down at redis://:secret@10.0.0.1")

    monkeypatch.setattr(site.app.cache.engine.storage, "get_value", broken)
    response = site.client().get("/healthz", base_url=BASE)
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "warn"
    assert "failing" not in body
    assert body["checks"]["storage"] == {
        "status": "warn",
        "backend": "disk",
        "error": "did not answer",
    }
    assert body["checks"]["database"] == {"status": "ok"}
    assert body["warnings"][0] == "cache_storage_unusable"
    assert "secret" not in response.get_data(as_text=True)
    assert site.client().get("/", base_url=BASE).status_code == 200  # the site does serve


def test_healthz_names_a_broken_database(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> Any:
        raise OSError("disk gone")

    monkeypatch.setattr(site.app.auth.store, "connection", broken)
    response = site.client().get("/healthz", base_url=BASE)
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "fail"
    assert body["failing"] == ["database"]
    assert body["checks"]["database"] == {"status": "fail", "error": "did not answer"}


def test_healthz_is_503_when_the_data_directory_cannot_be_written(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (Root may write anywhere, so the directory the check looks at is made to be missing.)
    monkeypatch.setattr(site.app.ops, "data_dir", tmp_path / "gone")
    response = site.client().get("/healthz", base_url=BASE)
    assert response.status_code == 503
    body = response.get_json()
    assert body["failing"] == ["disk"]
    assert body["checks"]["disk"]["error"] == "unwritable"
    assert str(tmp_path) not in response.get_data(as_text=True)


def fake_disks(free_by_path: dict[Path, int]) -> Callable[[str], os.statvfs_result]:
    """An ``os.statvfs`` whose disks (4 KB blocks, 400 MB each) have ``free_by_path`` bytes
    free (the data directory's disk unless another directory is named)."""

    def statvfs(path: str) -> os.statvfs_result:
        free = next((f for p, f in free_by_path.items() if str(p) == path), 400 * 1024**2)
        blocks = free // 4096
        return os.statvfs_result((4096, 4096, 100_000, blocks, blocks, 0, 0, 0, 0, 255))

    return statvfs


def test_healthz_is_503_when_the_data_directorys_disk_is_full(site: Site) -> None:
    data_dir = site.app.data_dir
    site.app.ops.disk = DiskSpace([data_dir], statvfs=fake_disks({data_dir: 4096}))
    response = site.client().get("/healthz", base_url=BASE)
    assert response.status_code == 503
    body = response.get_json()
    assert body["failing"] == ["disk"]
    assert body["checks"]["disk"]["error"] == "full"
    assert body["checks"]["disk"]["disks"][0]["level"] == "full"


def test_a_full_disk_of_the_cache_alone_keeps_healthz_200(site: Site, tmp_path: Path) -> None:
    # Another file system (a fake device number) holds only the disk cache; it is full.
    data_dir, cache_dir = site.app.data_dir, tmp_path / "cache-disk"
    cache_dir.mkdir()
    disk = DiskSpace([data_dir, cache_dir], statvfs=fake_disks({cache_dir: 4096}))
    real = disk._measure()
    assert len(real) == 1  # one real device: give the cache's reading one of its own
    full = disk.level_of(4096, 400 * 1024**2)
    reading = DiskReading(str(cache_dir), 4096, 400 * 1024**2, full, device=-1)
    disk._measure = lambda: [*real, reading]  # type: ignore[method-assign]
    site.app.ops.disk = disk
    response = site.client().get("/healthz", base_url=BASE)
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "warn"
    assert body["checks"]["disk"]["status"] == "warn"
    assert [d["level"] for d in body["checks"]["disk"]["disks"]] == ["ok", "full"]


def shape(value: Any) -> Any:
    """``value`` with its numbers and strings left out: the keys and the nesting."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value[:1]]
    return type(value).__name__


@pytest.mark.parametrize(
    ("name", "storage_down"),
    [("howto/monitoring.md", False), ("reference/stats-and-status.md", True)],
)
def test_the_docs_healthz_examples_have_the_answers_shape(
    site: Site, monkeypatch: pytest.MonkeyPatch, name: str, storage_down: bool
) -> None:
    site.app.disk.low_bytes, site.app.disk.low_percent = 0, 0.0
    if storage_down:

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise StorageError("down")

        monkeypatch.setattr(site.app.cache.engine.storage, "get_value", broken)
    [example] = [
        json.loads(block.text)
        for block in blocks(page(name))
        if block.language == "json" and '"checks"' in block.text
    ]
    answer = site.client().get("/healthz", base_url=BASE).get_json()
    assert answer["status"] == example["status"]
    assert set(example["warnings"]) <= set(answer["warnings"])
    answer["warnings"] = example["warnings"]  # (this site's own warnings vary)
    answer["checks"]["storage"]["backend"] = example["checks"]["storage"]["backend"]
    assert shape(answer) == shape(example)


def test_only_get_and_head_are_answered(site: Site) -> None:
    for path in ("/healthz", "/site-admin/metrics", "/site-json-openapi"):
        response = site.client().post(path, base_url=BASE)
        assert response.status_code == 405
        assert response.headers["Allow"] == "GET, HEAD"


# ---------------------------------------------------------------------- OpenAPI
def test_the_openapi_document_lists_every_route_with_this_host(site: Site) -> None:
    response = site.client().get("/site-json-openapi", base_url=BASE)
    assert response.status_code == 200
    assert "detail=rest_or_admin" in response.headers["Cache-Status"]
    document = json.loads(response.get_data(as_text=True))
    assert document["openapi"] == "3.1.0"
    assert document["servers"] == [{"url": BASE}]
    paths = document["paths"]
    assert set(paths["/site-json/site-cache/v1/cache"]) == {"get", "post"}
    post = paths["/site-json/site/v2/posts/{id}"]
    assert {"get", "post", "put", "patch", "delete"} <= set(post)
    assert post["get"]["parameters"][0]["name"] == "id"
    assert post["get"]["parameters"][0]["in"] == "path"
    purge = paths["/site-json/site-cache/v1/cache"]["post"]["requestBody"]
    fields = purge["content"]["application/json"]["schema"]["properties"]
    assert {"all", "url", "urls", "post_id", "tag", "tags", "soft"} <= set(fields)
    assert "deleted" not in fields  # read-only fields are not sent


def test_a_plugins_routes_are_in_the_document(app_factory: AppFactory) -> None:
    from sitecache.rest import return_true
    from sitecache.rest.openapi import openapi_document

    app = app_factory()

    def register(server: Any) -> None:
        server.register_rest_route(
            "greetings/v1",
            "/hello/(?P<name>[a-z]+)",
            {
                "methods": "GET",
                "callback": lambda request: {"message": "hi"},
                "permission_callback": return_true,
                "args": {"loud": {"type": "boolean", "required": True, "context": ["view"]}},
            },
        )

    app.hooks.add_action("rest_api_init", register)
    operation = openapi_document(app.server)["paths"]["/site-json/greetings/v1/hello/{name}"]
    parameters = {parameter["name"]: parameter for parameter in operation["get"]["parameters"]}
    assert parameters["name"]["in"] == "path"
    assert parameters["loud"] == {
        "name": "loud",
        "in": "query",
        "schema": {"type": "boolean"},
        "required": True,
    }
