"""``POST /cache {"all": true}`` (and ``{}``) in O(1) as the API shows it (#18): the answer,
the counts and listing right after, ``/status``'s ``gc.pending`` until GC is done, the static
copies, and ``sitecache cache flush --all``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sitecache.cache.api import ROUTE_SCHEMAS
from sitecache.cli import main
from sitecache.schema import validate_value_from_schema
from tests.auth.conftest import FakeClock, build_site
from tests.cache.api.conftest import Api, add_page
from tests.conftest import AppFactory

PATHS = [f"/page-{number}/" for number in range(12)]


def fill(api: Api) -> None:
    for path in PATHS:
        if path not in api.site.app.views:
            add_page(api.site, path)
        assert "stored" in api.page(path).headers["Cache-Status"]


def status(api: Api) -> dict[str, Any]:
    answer = api.json("GET", "/status")
    assert validate_value_from_schema(answer, ROUTE_SCHEMAS["/status"]) is True
    return dict(answer)


@pytest.mark.parametrize("body", [{"all": True}, {}])
def test_a_purge_of_everything_shows_at_once_and_gc_removes_it_in_slices(
    api: Api, body: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitecache.cache.api import timers as timers_module

    fill(api)
    engine = api.site.app.cache.engine
    held = api.json("GET", "/stats")["bytes"]
    answer = api.json("POST", "/cache", body)
    assert answer == {
        "deleted": len(PATHS),
        "bytes": held["total"] + held["compressed"],
        "scope": "all" if body else "site",
        "urls": [],
    }
    # Right after the answer: nothing counted, listed or served.
    assert api.json("GET", "/stats")["entries"] == {"total": 0, "fresh": 0, "expired": 0}
    listing = api.call("GET", "/cache")
    assert (listing.get_json(), listing.headers["X-Site-Total"]) == ([], "0")
    pending = status(api)["gc"]["pending"]
    assert pending == {"entries": len(PATHS), "bytes": answer["bytes"]}
    assert all("hit" not in api.page(path).headers["Cache-Status"] for path in PATHS[:3])
    # A page stored again takes its old row's place: GC has that much less to do.
    assert status(api)["gc"]["pending"]["entries"] == len(PATHS) - 3
    pending = status(api)["gc"]["pending"]
    # GC, four rows a tick: pending until done, never more than it was.
    monkeypatch.setattr(engine.storage, "batch_size", 4)
    monkeypatch.setattr(timers_module, "GC_BUDGET", 0.0)
    seen = [pending["entries"]]
    for _ in range(10):
        api.site.app.cache_api.timers.tick()
        seen.append(status(api)["gc"]["pending"]["entries"])
    assert seen[-1] == 0
    assert seen == sorted(seen, reverse=True)
    assert len(set(seen)) > 2  # slices, not one sweep
    assert api.json("GET", "/stats")["entries"]["total"] == 3  # the pages visited after


def test_static_copies_go_at_once_and_the_trash_is_emptied_by_the_timers(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True})
    fill(api)
    static = api.site.app.cache_api.static
    assert static is not None
    assert len(list(static.root.rglob("index.html"))) == len(PATHS)
    api.json("POST", "/cache", {"all": True})
    assert not list(static.root.rglob("index.html*"))  # nothing left for nginx to serve
    assert list(static.trash.rglob("index.html"))
    api.site.app.cache_api.timers.tick()
    assert not static.trash.exists()
    assert static.root.is_dir()  # the root itself stays (its owner and mode are nginx's)


def test_a_site_purge_moves_only_the_sites_hosts_aside(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True})
    fill(api)
    static = api.site.app.cache_api.static
    assert static is not None
    foreign = static.root / "other.example" / "index.html"
    foreign.parent.mkdir()
    foreign.write_text("another site's copy", encoding="utf-8")
    api.json("POST", "/cache", {})
    assert not (static.root / "example.org").exists()
    assert foreign.exists()


def test_flush_all_answers_at_once_and_status_shows_what_gc_has_left(
    app_factory: AppFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("SITECACHE_CONFIG", "SITECACHE_DATA_DIR", "SITECACHE_SITE_URL"):
        monkeypatch.delenv(name, raising=False)
    data_dir = tmp_path / "var"
    api = Api(build_site(app_factory(data_dir=str(data_dir)), FakeClock()))
    fill(api)
    config = tmp_path / "sitecache.toml"
    config.write_text('site_url = "http://example.org"\n', encoding="utf-8")
    options = ["--config", str(config), "--data-dir", str(data_dir), "cache"]
    assert main([*options, "flush", "--all", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == len(PATHS)
    assert main([*options, "status"]) == 0
    assert f"{len(PATHS)} purged entries" in capsys.readouterr().out
    assert main([*options, "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gc"]["pending"]["entries"] == len(PATHS)
    # The server's timers remove them.
    api.site.app.cache_api.timers.tick()
    assert api.json("GET", "/status")["gc"]["pending"] == {"entries": 0, "bytes": 0}
    assert main([*options, "status"]) == 0
    assert "purged" not in capsys.readouterr().out
    fill(api)
    assert main([*options, "flush", "--all"]) == 0
    assert "the server's timers remove them in the background" in capsys.readouterr().out


def test_every_page_number_of_the_listing_answers_as_before(api: Api) -> None:
    fill(api)
    everything = api.json("GET", "/cache", query={"per_page": 100})
    assert len(everything) == len(PATHS)
    for query in ({}, {"search": "page-1"}, {"status": "fresh"}, {"status": "expired"}):
        wanted = [
            row
            for row in everything
            if query.get("search", "") in row["url"]
            and query.get("status", row["status"]) == row["status"]
        ]
        for page in range(1, len(wanted) // 5 + 2):
            answer = api.call("GET", "/cache", query={**query, "per_page": 5, "page": page})
            assert answer.get_json() == wanted[(page - 1) * 5 : page * 5], (query, page)
            assert answer.headers["X-Site-Total"] == str(len(wanted))
