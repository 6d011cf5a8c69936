"""Static-file mode with a stock nginx (#16): its workers run as ``www-data``, as Debian's do.

``sitecache serve`` runs behind one proxy with ``static_root`` outside its private (0700) data
directory; nginx runs with the block ``sitecache nginx-config`` printed. Stored pages are
answered by nginx from their files, with the headers sitecache sends with its own pages; every
other request reaches sitecache; ``POST /cache/test`` leaves no file behind.
"""

from __future__ import annotations

import gzip
import http.client
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import brotli
import pytest

from sitecache.cache.api.static_nginx import BROTLI_STATIC_MODULES
from tests.e2e.deployment import Deployment
from tests.e2e.server import free_port

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
WEB_USER = "www-data"


def _skip_reason() -> str | None:
    if NGINX is None:
        return "needs nginx installed (Debian: apt-get install nginx-light)"
    if os.geteuid() != 0:
        return "needs root to start nginx with `user www-data;`"
    try:
        pwd.getpwnam(WEB_USER)
    except KeyError:
        return f"needs the {WEB_USER} user that nginx's workers run as"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))
SECURITY_HEADERS = (
    "x-content-type-options",
    "content-security-policy",
    "x-frame-options",
    "referrer-policy",
)


@pytest.fixture
def public_dir() -> Iterator[Path]:
    """A directory every user may enter (pytest's own temporary directories are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="sitecache-nginx-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def write_nginx_conf(deployment: Deployment, port: int, tmp_path: Path, public_dir: Path) -> Path:
    """nginx.conf in ``tmp_path`` around the block `sitecache nginx-config` prints now."""
    block = deployment.cli(
        "nginx-config", "--upstream", f"127.0.0.1:{deployment.port}",
        "--listen", f"127.0.0.1:{port}", "--user", WEB_USER,
    ).stdout  # fmt: skip
    conf = tmp_path / "nginx.conf"
    temporary = public_dir / "nginx"  # the workers (www-data) write here
    # The block turns brotli_static on where the module is installed; a stock nginx.conf
    # loads it from modules-enabled, this one names it.
    modules = [path for path in BROTLI_STATIC_MODULES if path.suffix == ".so" and path.exists()]
    load = f"load_module {modules[0]};\n" if "brotli_static on;" in block and modules else ""
    conf.write_text(
        f"{load}user {WEB_USER};\npid {tmp_path}/nginx.pid;\n"
        f"error_log {tmp_path}/nginx-error.log;\ndaemon on;\nevents {{}}\n"
        f"http {{\n access_log off;\n client_body_temp_path {temporary}-body;\n"
        f" proxy_temp_path {temporary}-proxy;\n fastcgi_temp_path {temporary}-fastcgi;\n"
        f" uwsgi_temp_path {temporary}-uwsgi;\n scgi_temp_path {temporary}-scgi;\n"
        f"{block}\n}}\n",
        encoding="utf-8",
    )
    return conf


@pytest.fixture
def site(tmp_path: Path, public_dir: Path) -> Iterator[tuple[Deployment, int]]:
    """sitecache serve (static_root in ``public_dir``) and nginx as www-data in front."""
    port = free_port()  # nginx's; the site's URL names it (a real site: 80 or 443)
    deployment = Deployment(
        tmp_path / "site",
        [
            f'site_url = "http://example.org:{port}"',
            "proxy_count = 1",
            f'static_root = "{public_dir / "static"}"',
            f'uploads_root = "{public_dir / "uploads"}"',
        ],
    )
    deployment.init()
    deployment.serve("serve")
    try:
        conf = write_nginx_conf(deployment, port, tmp_path, public_dir)
        assert NGINX is not None
        subprocess.run([NGINX, "-c", str(conf), "-p", str(tmp_path)], check=True, timeout=30)
        try:
            yield deployment, port
        finally:
            subprocess.run([NGINX, "-c", str(conf), "-p", str(tmp_path), "-s", "stop"],
                           check=False, timeout=30)  # fmt: skip
            error_log = tmp_path / "nginx-error.log"
            if error_log.exists():
                print(f"\n----- nginx error log -----\n{error_log.read_text(errors='replace')}")
    finally:
        deployment.stop()


def get(
    port: int, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """GET through nginx as a visitor of example.org (every value of a repeated header)."""
    deadline = time.monotonic() + 10
    while True:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            connection.request(
                "GET", path, headers={"Host": f"example.org:{port}", **(headers or {})}
            )
            response = connection.getresponse()
            found: dict[str, str] = {}
            for name, value in response.getheaders():
                key = name.lower()
                found[key] = f"{found[key]}, {value}" if key in found else value
            status = response.status
            body = response.read()
            if status != 502 or time.monotonic() > deadline:  # 502: workers still starting
                return status, found, body
        except OSError:
            if time.monotonic() > deadline:
                raise
        finally:
            connection.close()
        time.sleep(0.2)


def test_a_stock_nginx_serves_stored_pages_with_sitecaches_headers(
    site: tuple[Deployment, int], public_dir: Path
) -> None:
    deployment, port = site
    deployment.api("POST", "/settings", {"static_files": True})
    time.sleep(1.1)  # every worker reads the settings within a second
    status, own, first = get(port, "/")
    assert status == 200
    assert "sitecache; fwd=uri-miss; stored" in own["cache-status"]
    copy = public_dir / "static" / "example.org" / "index.html"
    assert copy.exists()
    assert stat.S_IMODE(copy.stat().st_mode) == 0o644
    # Secrets stay private: the data directory is still 0700.
    assert stat.S_IMODE(deployment.data_dir.stat().st_mode) == 0o700

    status, served, second = get(port, "/")
    assert (status, served["cache-status"]) == (200, "nginx; hit")
    assert second == first
    assert served["content-type"] == "text/html; charset=utf-8"
    # A copy says it varies by encoding to every client, once (not gzip_vary's: see the block).
    assert served["vary"] == "Accept-Encoding"
    for name in SECURITY_HEADERS:
        assert served[name] == own[name], name
    api_root = f'<http://example.org:{port}/site-json/>; rel="https://api.w.org/"'
    assert api_root in own["link"]
    assert served["link"] == api_root

    status, zipped, compressed = get(port, "/", {"Accept-Encoding": "gzip"})
    assert (status, zipped["cache-status"]) == (200, "nginx; hit")
    assert zipped.get("content-encoding") == "gzip"
    assert zipped["vary"] == "Accept-Encoding"
    assert gzip.decompress(compressed) == first
    for name in SECURITY_HEADERS:
        assert zipped[name] == own[name], name
    if BROTLI_STATIC_MODULES[-1].exists():  # #32: index.html.br for brotli_static
        status, squeezed, compressed = get(port, "/", {"Accept-Encoding": "br"})
        assert (status, squeezed["cache-status"]) == (200, "nginx; hit")
        assert squeezed.get("content-encoding") == "br"
        assert brotli.decompress(compressed) == first

    for headers, path in (({"Cookie": "sitecache_session=abc"}, "/"), ({}, "/?s=x")):
        _, answered, _ = get(port, path, headers)
        assert "nginx" not in answered["cache-status"], (path, headers)


def test_the_cache_test_leaves_no_file_behind(
    site: tuple[Deployment, int], public_dir: Path
) -> None:
    deployment, port = site
    deployment.api("POST", "/settings", {"static_files": True})
    created = deployment.request(
        "POST",
        "/site-json/site/v2/posts",
        {"title": "Tested page", "content": "Words.", "status": "publish"},
        admin=True,
    )
    assert created.status == 201, created.body[:300]
    link = str(created.json()["link"])  # type: ignore[index]
    assert link.startswith(f"http://example.org:{port}/")
    time.sleep(1.1)
    answer = deployment.api("POST", "/cache/test", {"url": link})
    assert answer["status"] is True, answer
    slug = link.rstrip("/").rsplit("/", 1)[-1]
    assert not (public_dir / "static" / "example.org" / slug).joinpath("index.html").exists()
    assert not list((public_dir / "static").rglob("index.html*"))
    # nginx has nothing to serve: the page comes from sitecache.
    _, served, _ = get(port, f"/{slug}/")
    assert served["cache-status"].startswith("sitecache")


def test_nginx_serves_uploaded_media_from_the_uploads_root(
    site: tuple[Deployment, int], public_dir: Path
) -> None:
    from io import BytesIO

    from PIL import Image

    deployment, port = site
    buffer = BytesIO()
    Image.new("RGB", (7, 5), "orange").save(buffer, "PNG")
    image = buffer.getvalue()
    created = deployment.request(
        "POST",
        "/site-json/site/v2/media",
        image,
        {"Content-Type": "image/png", "Content-Disposition": 'attachment; filename="n.png"'},
        admin=True,
    )
    assert created.status == 201, created.body[:300]
    source = str(created.json()["source_url"])  # type: ignore[index]
    path = "/uploads/" + source.split("/uploads/", 1)[1]
    assert (public_dir / "uploads" / path.removeprefix("/uploads/")).exists()
    status, served, body = get(port, path)
    assert (status, body) == (200, image)
    assert served["content-type"] == "image/png"
    assert served["x-content-type-options"] == "nosniff"
    assert "max-age=31536000" in served["cache-control"]
    assert "cache-status" not in served  # nginx answered from the file, not sitecache
    assert get(port, "/uploads/../nginx.conf")[0] in (400, 404)
    assert stat.S_IMODE(deployment.data_dir.stat().st_mode) == 0o700


def test_nginx_sends_the_visitors_the_settings_exclude_to_sitecache(
    site: tuple[Deployment, int], tmp_path: Path, public_dir: Path
) -> None:
    # Trial 2: nginx handed its copies to visitors with a rejected cookie or user agent, and
    # to anyone with a cookie under bypass_any_cookie: its rules knew none of the settings.
    deployment, port = site
    deployment.api("POST", "/settings", {"static_files": True})
    time.sleep(1.1)
    get(port, "/")
    assert get(port, "/")[1]["cache-status"] == "nginx; hit"
    deployment.api("POST", "/settings", {"rejected_cookies": ["cart_"],
                                          "rejected_user_agents": ["Lynx/"]})  # fmt: skip
    assert [w["code"] for w in deployment.api("GET", "/status")["warnings"]] == [
        "nginx_rules_outdated"
    ]
    conf = write_nginx_conf(deployment, port, tmp_path, public_dir)
    assert NGINX is not None
    subprocess.run([NGINX, "-c", str(conf), "-p", str(tmp_path), "-s", "reload"],
                   check=True, timeout=30)  # fmt: skip
    assert deployment.api("GET", "/status")["warnings"] == []
    time.sleep(1.0)  # the old workers finish
    excluded = ({"Cookie": "cart_items=3"}, {"User-Agent": "Lynx/2.9"}, {"Cookie": "theme=dark"})
    for headers in excluded[:2]:
        assert "nginx" not in get(port, "/", headers)[1]["cache-status"], headers
    assert get(port, "/", excluded[2])[1]["cache-status"] == "nginx; hit"
    deployment.api("POST", "/settings", {"known_users": "bypass_any_cookie"})
    conf = write_nginx_conf(deployment, port, tmp_path, public_dir)
    subprocess.run([NGINX, "-c", str(conf), "-p", str(tmp_path), "-s", "reload"],
                   check=True, timeout=30)  # fmt: skip
    time.sleep(1.0)
    assert "nginx" not in get(port, "/", excluded[2])[1]["cache-status"]
    assert get(port, "/")[1]["cache-status"] == "nginx; hit"
