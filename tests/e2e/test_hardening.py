"""Hardening end to end, through gunicorn with ``sitecache serve``'s settings (#10 points 1, 3,
4, 8 and 10): non-ASCII nonces, chunked bodies over the limit, forwarded headers nobody
configured, forged access-log lines and slow clients."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest

from sitecache.rest.http import MAX_BODY_BYTES
from sitecache.serving import DEFAULT_THREADS
from tests.e2e.server import REPOSITORY, LiveServer, free_port

ADMIN_ONLY = "/site-json/e2e/v1/admin-only"


def raw_request(port: int, head: bytes, body: bytes = b"", timeout: float = 30) -> bytes:
    """Send bytes as they are; return everything the server answered before closing."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(head + body)
        connection.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def status_and_body(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


# ---------------------------------------------------------------------- 1. non-ASCII nonces
@pytest.mark.parametrize("nonce", ["%C3%A9", "%E2%82%AC"])
def test_a_non_ascii_nonce_parameter_is_a_json_403(live_server: LiveServer, nonce: str) -> None:
    response = live_server.request("GET", f"{ADMIN_ONLY}?_sitenonce={nonce}")
    assert response.status == 403
    assert response.headers["content-type"].startswith("application/json")
    assert json.loads(response.body)["code"] == "rest_cookie_invalid_nonce"


def test_a_nonce_parameter_that_is_not_utf8_is_a_json_400(live_server: LiveServer) -> None:
    # A query that is not UTF-8 is refused before anything reads it (attack report item 8).
    response = live_server.request("GET", f"{ADMIN_ONLY}?_sitenonce=%FF%FE")
    assert response.status == 400
    assert response.headers["content-type"].startswith("application/json")
    assert json.loads(response.body)["code"] == "rest_invalid_param"


def test_a_non_ascii_nonce_header_is_a_json_403(live_server: LiveServer) -> None:
    answer = raw_request(
        live_server.port,
        b"GET " + ADMIN_ONLY.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"X-Site-Nonce: \xc3\xa9\r\nConnection: close\r\n\r\n",
    )
    status, _, body = status_and_body(answer)
    assert status == 403
    assert json.loads(body)["code"] == "rest_cookie_invalid_nonce"


def logged_in_cookie(live_server: LiveServer) -> str:
    subprocess.run(
        [sys.executable, "-m", "sitecache.cli", "--data-dir", str(live_server.data_dir),
         "user", "create", "nina", "--role", "administrator", "--password", "nina-password"],
        env={k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")},
        cwd=REPOSITORY, check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    response = live_server.request(
        "POST",
        "/login",
        urlencode({"log": "nina", "pwd": "nina-password"}),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status == 303
    cookie = SimpleCookie()
    for value in response.header_values("Set-Cookie"):
        cookie.load(value)
    return f"sitecache_session={cookie['sitecache_session'].value}"


def test_logout_with_a_non_ascii_nonce_is_the_expired_link_page(live_server: LiveServer) -> None:
    cookie = logged_in_cookie(live_server)
    response = live_server.request(
        "POST",
        "/logout",
        "_sitenonce=%C3%A9",
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
    )
    assert response.status == 403
    assert b"expired" in response.body


# ---------------------------------------------------------------------- 3. chunked bodies
def chunked_post(port: int, path: str, content_type: str, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode()
    step = 1024 * 1024
    chunks = b"".join(
        f"{len(body[i : i + step]):x}\r\n".encode() + body[i : i + step] + b"\r\n"
        for i in range(0, len(body), step)
    )
    try:
        return raw_request(port, head, chunks + b"0\r\n\r\n", timeout=60)
    except (BrokenPipeError, ConnectionResetError) as exc:  # pragma: no cover - diagnostics
        pytest.fail(f"the server dropped the connection instead of answering: {exc}")


def test_a_chunked_json_body_over_the_limit_is_a_json_413(live_server: LiveServer) -> None:
    body = b'{"x": "' + b"a" * MAX_BODY_BYTES + b'"}'
    status, _, answer = status_and_body(
        chunked_post(live_server.port, "/site-json/e2e/v1/echo", "application/json", body)
    )
    assert status == 413
    assert json.loads(answer)["code"] == "rest_payload_too_large"


def test_a_chunked_login_form_over_the_limit_is_413(live_server: LiveServer) -> None:
    body = b"log=nobody&pwd=x&pad=" + b"a" * MAX_BODY_BYTES
    status, headers, _ = status_and_body(
        chunked_post(live_server.port, "/login", "application/x-www-form-urlencoded", body)
    )
    assert status == 413
    assert "set-cookie" not in headers


def test_a_small_chunked_json_body_is_read_whole(live_server: LiveServer) -> None:
    status, _, answer = status_and_body(
        chunked_post(
            live_server.port, "/site-json/e2e/v1/echo", "application/json", b'{"count": 3}'
        )
    )
    assert status == 200
    assert json.loads(answer) == {"count": 3, "tags": []}


# ---------------------------------------------------------------------- 4. forwarded headers
FORWARDED = {"X-Forwarded-Proto": "https", "X-Forwarded-Ssl": "on", "X-Forwarded-Host": "evil"}


def test_forwarded_headers_are_ignored_without_proxy_count(live_server: LiveServer) -> None:
    response = live_server.request("GET", "/site-json/", headers=FORWARDED)
    assert response.status == 200
    assert response.headers["link"].startswith("<http://127.0.0.1:")
    index = json.loads(response.body)
    assert not str(index["url"]).startswith("https://")
    assert "evil" not in response.body.decode()


def test_a_plain_http_login_behind_forged_forwarded_headers_gets_no_secure_cookie(
    live_server: LiveServer,
) -> None:
    subprocess.run(
        [sys.executable, "-m", "sitecache.cli", "--data-dir", str(live_server.data_dir),
         "user", "create", "otto", "--role", "administrator", "--password", "otto-password"],
        env={k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")},
        cwd=REPOSITORY, check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    response = live_server.request(
        "POST",
        "/login",
        urlencode({"log": "otto", "pwd": "otto-password"}),
        {"Content-Type": "application/x-www-form-urlencoded", **FORWARDED},
    )
    assert response.status == 303
    [cookie] = response.header_values("Set-Cookie")
    assert "secure" not in cookie.lower()


@contextlib.contextmanager
def serving(root: Path, bind: str, ready: Callable[[], bool]) -> Iterator[None]:
    """``sitecache serve`` itself (the real command, one worker) on ``bind``, until it exits."""
    config = root / "sitecache.toml"
    config.write_text("password_hash_cost = 1024\n", encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
    environment["SITECACHE_CONFIG"] = str(config)
    log = (root / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "sitecache.cli", "--data-dir", str(root / "var"), "serve",
         "--bind", bind, "--workers", "1"],
        env=environment, cwd=REPOSITORY, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not ready():
            assert process.poll() is None, (root / "serve.log").read_text()
            assert time.monotonic() < deadline, (root / "serve.log").read_text()
            time.sleep(0.1)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def answers(address: tuple[str, int] | str) -> bool:
    """Whether something accepts connections at ``address`` (TCP or a unix socket path)."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        try:
            probe.connect(address)
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def sitecache_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """``sitecache serve`` on a free loopback port."""
    port = free_port()
    root = tmp_path_factory.mktemp("serve")
    with serving(root, f"127.0.0.1:{port}", partial(answers, ("127.0.0.1", port))):
        yield port


@pytest.fixture(scope="module")
def sitecache_serve_unix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``sitecache serve`` on a unix socket (where gunicorn trusts every peer's forwarded
    headers unless told otherwise)."""
    root = tmp_path_factory.mktemp("serve-unix")
    path = str(root / "site.sock")
    with serving(root, f"unix:{path}", partial(answers, path)):
        yield path


def test_sitecache_serve_ignores_forwarded_headers_from_loopback(sitecache_serve: int) -> None:
    head = "".join(f"{name}: {value}\r\n" for name, value in FORWARDED.items())
    answer = raw_request(
        sitecache_serve,
        f"GET /site-json/ HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Connection: close\r\n\r\n".encode(),
    )
    status, headers, body = status_and_body(answer)
    assert status == 200
    assert f"<http://127.0.0.1:{sitecache_serve}/site-json/>" in headers["link"]
    assert b"https://127.0.0.1" not in body


def test_sitecache_serve_on_a_unix_socket_ignores_forwarded_headers(
    sitecache_serve_unix: str,
) -> None:
    head = "".join(f"{name}: {value}\r\n" for name, value in FORWARDED.items())
    request = f"GET /site-json/ HTTP/1.1\r\nHost: localhost\r\n{head}Connection: close\r\n\r\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(30)
        connection.connect(sitecache_serve_unix)
        connection.sendall(request.encode())
        connection.shutdown(socket.SHUT_WR)
        answer = b"".join(iter(partial(connection.recv, 65536), b""))
    status, headers, body = status_and_body(answer)
    assert status == 200
    assert headers["link"].startswith("<http://localhost/site-json/>"), headers["link"]
    assert b"https://localhost" not in body
    assert b"evil" not in body


# ---------------------------------------------------------------------- 8. the access log
def test_a_basic_auth_user_name_cannot_forge_an_access_log_line(live_server: LiveServer) -> None:
    forged = 'evil\n6.6.6.6 - admin [01/Jan/2030:00:00:00 +0000] "GET /forged HTTP/1.1" 200 0'
    token = base64.b64encode(f"{forged}:password".encode()).decode()
    live_server.request("GET", "/site-json/", headers={"Authorization": f"Basic {token}"})
    # The access log is written after the answer, the whole line at once.
    deadline = time.monotonic() + 10
    while "evil" not in (log := live_server.log()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "evil\\x0a6.6.6.6" in log
    assert not any(line.startswith("6.6.6.6") for line in log.splitlines())


# ---------------------------------------------------------------------- 10. slow clients
class Trickler(threading.Thread):
    """A client sending its request one byte every ``interval`` seconds, forever."""

    def __init__(self, port: int, interval: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.interval = interval
        self.stop = threading.Event()
        self.dropped_after: float | None = None

    def run(self) -> None:
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as connection:
            payload = b"POST /site-json/ HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
            payload += b"x" * 1_000_000
            for byte in payload:
                if self.stop.is_set():
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    self.dropped_after = time.monotonic() - started
                    return
                if self.stop.wait(self.interval):
                    return


@pytest.fixture
def one_worker(tmp_path: Path) -> Iterator[LiveServer]:
    """gunicorn with one worker (so every slow client lands on it) and a 4 s read bound."""
    server = LiveServer(data_dir=tmp_path / "var", config_lines=[], workers=1, timeout=4)
    server.start()
    yield server
    server.stop()


def test_slow_clients_on_all_threads_but_one_do_not_stall_normal_requests(
    one_worker: LiveServer,
) -> None:
    slow = [Trickler(one_worker.port) for _ in range(DEFAULT_THREADS - 1)]
    for client in slow:
        client.start()
    try:
        time.sleep(1.5)  # every slow client is holding a thread by now
        for _ in range(5):
            started = time.monotonic()
            response = one_worker.request("GET", "/site-json/")
            assert response.status == 200
            # Generous: a stalled server would take the read bound (4 s) or forever.
            assert time.monotonic() - started < 3
    finally:
        for client in slow:
            client.stop.set()


def test_a_client_trickling_its_request_is_dropped_at_the_read_bound(
    one_worker: LiveServer,
) -> None:
    slow = Trickler(one_worker.port, interval=0.2)
    slow.start()
    slow.join(timeout=30)
    slow.stop.set()
    assert slow.dropped_after is not None, "the slow client was never dropped"
    assert slow.dropped_after < 4 + 6  # the bound, plus gunicorn's wait for a first byte
