"""Static-file mode end to end: nginx (when installed) serves stored pages, gunicorn the rest."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.server import REPOSITORY, LiveServer, free_port

NGINX = shutil.which("nginx")
pytestmark = pytest.mark.skipif(
    NGINX is None or os.geteuid() != 0, reason="needs nginx installed and root to run it"
)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[LiveServer, int]]:
    """gunicorn (static_files on, behind one proxy) and nginx with `sitecache nginx-config`."""
    port = free_port()  # nginx's; the site's URL names it (a real site: 80 or 443)
    server = LiveServer(
        data_dir=tmp_path / "var",
        config_lines=[f'site_url = "http://example.org:{port}"', "proxy_count = 1"],
    )
    server.start()
    try:
        yield from _with_nginx(server, tmp_path, port)
    finally:
        server.stop()


def _with_nginx(server: LiveServer, tmp_path: Path, port: int) -> Iterator[tuple[LiveServer, int]]:
    block = subprocess.run(
        [sys.executable, "-m", "sitecache.cli", "--data-dir", str(server.data_dir), "--config",
         str(server.data_dir.parent / "sitecache.toml"), "nginx-config",
         "--upstream", f"127.0.0.1:{server.port}", "--listen", f"127.0.0.1:{port}"],
        capture_output=True, text=True, check=True, timeout=60, cwd=REPOSITORY,
        env={k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")},
    ).stdout  # fmt: skip
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        f"user root;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/nginx-error.log;\n"
        "daemon on;\nevents {}\n"
        f"http {{\n access_log off;\n client_body_temp_path {tmp_path};\n"
        f" proxy_temp_path {tmp_path};\n{block}\n}}\n",
        encoding="utf-8",
    )
    assert NGINX is not None
    subprocess.run([NGINX, "-c", str(conf), "-p", str(tmp_path)], check=True, timeout=30)
    try:
        yield server, port
    finally:
        subprocess.run([NGINX, "-c", str(conf), "-p", str(tmp_path), "-s", "stop"],
                       check=False, timeout=30)  # fmt: skip


def get(
    port: int, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    deadline = time.monotonic() + 10
    while True:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            connection.request(
                "GET", path, headers={"Host": f"example.org:{port}", **(headers or {})}
            )
            response = connection.getresponse()
            return (
                response.status,
                {k.lower(): v for k, v in response.getheaders()},
                response.read(),
            )
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
        finally:
            connection.close()


def test_nginx_serves_the_stored_page_and_sends_the_rest_to_gunicorn(
    site: tuple[LiveServer, int],
) -> None:
    server, port = site
    # Turn static-file mode on through the storage the server uses.
    from sitecache.cache.storage import DiskStorage

    DiskStorage(server.data_dir / "cache").set_value(
        "settings", json.dumps({"static_files": True}).encode()
    )
    time.sleep(1.1)
    deadline = time.monotonic() + 10
    status, headers, first = get(port, "/")
    while status == 502 and time.monotonic() < deadline:  # nginx's workers still starting
        time.sleep(0.2)
        status, headers, first = get(port, "/")
    assert status == 200
    assert "sitecache; fwd=uri-miss; stored" in headers["cache-status"]
    assert (server.data_dir / "static" / "example.org" / "index.html").exists()
    status, headers, second = get(port, "/")
    assert (status, headers["cache-status"]) == (200, "nginx; hit")
    assert second == first
    status, headers, compressed = get(port, "/", {"Accept-Encoding": "gzip"})
    assert headers.get("content-encoding") == "gzip"
    assert gzip.decompress(compressed) == first
    status, headers, _ = get(port, "/", {"Cookie": "sitecache_session=abc"})
    assert "nginx" not in headers["cache-status"]
    status, headers, _ = get(port, "/?s=x")
    assert "nginx" not in headers["cache-status"]
