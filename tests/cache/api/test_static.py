"""Static-file mode: index.html / index.html.gz under the static root, purges, expiry, nginx."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from sitecache.cache.api.static import nginx_config
from sitecache.cli import main
from tests.cache.api.conftest import Api, add_page


def root(api: Api) -> Path:
    return api.site.app.cache_api.static.root


def test_nothing_is_written_while_the_mode_is_off(api: Api) -> None:
    add_page(api.site, "/post/")
    api.page("/post/")
    assert not (root(api) / "example.org" / "post" / "index.html").exists()


def test_a_stored_page_is_written_as_index_html_and_its_gzip_copy(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True})
    add_page(api.site, "/post/")
    body = api.page("/post/").get_data()
    directory = root(api) / "example.org" / "post"
    assert (directory / "index.html").read_bytes() == body
    assert gzip.decompress((directory / "index.html.gz").read_bytes()) == body
    home = api.page("/").get_data()
    assert (root(api) / "example.org" / "index.html").read_bytes() == home
    assert not [name for name in os.listdir(directory) if name.startswith(".tmp")]


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/query?a=1", {}),
        ("/json", {"Content-Type": "application/json"}),
        ("/varies", {"Vary": "Accept-Language"}),
        ("/.hidden", {}),
    ],
)
def test_pages_a_web_server_must_not_serve_alone_get_no_static_copy(
    api: Api, path: str, headers: dict[str, str]
) -> None:
    api.json("POST", "/settings", {"static_files": True, "cache_query_strings": True})
    add_page(api.site, path.split("?")[0], headers=headers)
    response = api.page(path)
    assert "stored" in response.headers["Cache-Status"]
    assert not list(root(api).rglob("index.html"))


def test_a_purge_removes_the_static_copies(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True})
    for path in ("/a/", "/b/"):
        add_page(api.site, path)
        api.page(path)
    api.json("POST", "/cache", {"url": "/a/", "soft": True})
    assert not (root(api) / "example.org" / "a" / "index.html").exists()
    assert (root(api) / "example.org" / "b" / "index.html").exists()
    api.json("POST", "/cache", {})
    assert not list(root(api).rglob("index.html*"))


def test_the_gc_sweep_removes_expired_static_copies(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True, "max_age": 60})
    add_page(api.site, "/old/")
    api.page("/old/")
    page = root(api) / "example.org" / "old" / "index.html"
    past = time.time() - 120
    os.utime(page, (past, past))
    assert api.site.app.cache_api.static.sweep() == 1
    assert not page.exists()
    assert (page.parent / "index.html.gz").exists()  # written just now: still fresh


def test_the_nginx_config_serves_static_copies_to_anonymous_gets_only(tmp_path: Path) -> None:
    text = nginx_config(server_name="example.org", static_root=tmp_path)
    assert f"root {tmp_path.resolve()};" in text
    assert "gzip_static on;" in text
    assert "try_files /$host$sitecache_static/index.html @sitecache;" in text
    assert "sitecache_session" in text
    assert "wordpress_logged_in" in text
    assert "comment_author" in text
    assert "$query_string" in text
    assert "$http_authorization" in text
    assert "proxy_pass http://sitecache;" in text


def test_the_command_prints_the_server_block_for_the_configured_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    config = tmp_path / "sitecache.toml"
    config.write_text('site_url = "https://example.org"\n', encoding="utf-8")
    code = main(
        ["--config", str(config), "--data-dir", str(tmp_path / "var"), "nginx-config",
         "--upstream", "127.0.0.1:9000", "--no-check"]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "server_name example.org;" in text
    assert "server 127.0.0.1:9000;" in text
    assert f"root {(tmp_path / 'var' / 'static').resolve()};" in text


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed")
def test_nginx_accepts_the_config(tmp_path: Path) -> None:
    nginx = shutil.which("nginx")
    assert nginx is not None
    server = nginx_config(
        server_name="example.org", static_root=tmp_path / "static", listen="127.0.0.1:18080"
    )
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
        "events {}\n"
        f"http {{\n access_log off;\n client_body_temp_path {tmp_path};\n{server}\n}}\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [nginx, "-t", "-c", str(conf), "-p", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert "syntax is ok" in result.stderr
