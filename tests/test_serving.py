"""`sitecache.serving`: the escaping access log, the read deadline (#10 points 8 and 10) and
reading parked connections (#15 point 11)."""

from __future__ import annotations

import logging
import socket
import time
from typing import Any

import pytest
from gunicorn.config import Config

from sitecache.serving import (
    DeadlineSocket,
    EscapingAccessLog,
    ReadDeadlineExceededError,
    escape_log_value,
    redact_url,
)


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("plain text/ok", "plain text/ok"),
        ("evil\n6.6.6.6 - admin", "evil\\x0a6.6.6.6 - admin"),
        ('quote " and \\ backslash', "quote \\x22 and \\x5c backslash"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("caf\u00e9 \u20ac \ud800", "caf\\xe9 \\u20ac \\ud800"),
        ("\r\t\x00", "\\x0d\\x09\\x00"),
    ],
)
def test_log_values_are_one_printable_line(text: str, escaped: str) -> None:
    assert escape_log_value(text) == escaped


class FakeResponse:
    status = "200 OK"
    status_code = 200
    response_length = 10
    sent = 10
    headers: tuple[tuple[str, str], ...] = ()


class FakeRequest:
    headers = (("USER-AGENT", "agent\nforged"),)


def test_every_access_log_field_a_client_controls_is_escaped() -> None:
    logger = EscapingAccessLog(Config())
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": "/path\nforged",
        "PATH_INFO": "/path\nforged",
        "QUERY_STRING": "",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_USER_AGENT": "agent\nforged",
        "HTTP_REFERER": 'ref"erer',
        # Basic base64("evil\nline:password")
        "HTTP_AUTHORIZATION": "Basic ZXZpbApsaW5lOnBhc3N3b3Jk",
    }
    atoms = logger.atoms(FakeResponse(), FakeRequest(), environ, _Delta())
    line = logger.cfg.access_log_format % atoms
    assert "\n" not in line
    assert "evil\\x0aline" in line
    assert "agent\\x0aforged" in line
    assert "ref\\x22erer" in line


def test_secrets_in_urls_and_headers_never_reach_the_access_log() -> None:
    logger = EscapingAccessLog(Config())
    logger.cfg.set(
        "access_log_format",
        '"%(r)s" "%(q)s" "%(f)s" %({cookie}i)s %({x-site-nonce}i)s %({http_authorization}e)s',
    )
    query = "id=7&password=opensesame&_sitenonce=n0nce&Pass%77ord=two&pwd=three&next=%2F"
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"/posts/7?{query}",
        "PATH_INFO": "/posts/7",
        "QUERY_STRING": query,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_REFERER": "http://example.org/?_sitenonce=fromreferer#password=x",
        "HTTP_COOKIE": "site_session=cookievalue",
        "HTTP_AUTHORIZATION": "Basic ZXZpbApsaW5lOnBhc3N3b3Jk",
    }

    class Request:
        headers = (("COOKIE", "site_session=cookievalue"), ("X-SITE-NONCE", "headernonce"))

    atoms = logger.atoms(FakeResponse(), Request(), environ, _Delta())
    line = logger.cfg.access_log_format % atoms
    for secret in ("opensesame", "n0nce", "two", "three", "fromreferer", "cookievalue",
                   "headernonce", "ZXZpbApsaW5l"):  # fmt: skip
        assert secret not in line, (secret, line)
    assert "GET /posts/7?id=7&password=***&_sitenonce=***&Pass%77ord=***&pwd=***&next=%2F" in line
    assert "#password=x" in line  # a fragment is not a parameter


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("/a?password=x", "/a?password=***"),
        ("/a?passwordx=1&b", "/a?passwordx=1&b"),
        ("/a?password", "/a?password"),
        ("/a", "/a"),
        ("GET /a?_wpnonce=1 HTTP/1.1", "GET /a?_wpnonce=*** HTTP/1.1"),
        ("/a?x=1?token=2", "/a?x=1?token=2"),
    ],
)
def test_redact_url(text: str, redacted: str) -> None:
    assert redact_url(text) == redacted


class _Delta:
    seconds = 0
    microseconds = 1000

    def total_seconds(self) -> float:
        return 0.001


def test_a_read_past_the_deadline_gives_up() -> None:
    left, right = socket.socketpair()
    with left, right:
        wrapped = DeadlineSocket(left, write_timeout=5)
        right.sendall(b"abc")
        wrapped.deadline = time.monotonic() + 0.3
        assert wrapped.recv(10) == b"abc"
        started = time.monotonic()
        with pytest.raises(ReadDeadlineExceededError):
            wrapped.recv(10)  # nothing more arrives
        assert time.monotonic() - started < 2
        with pytest.raises(ReadDeadlineExceededError):
            wrapped.recv(10)  # the deadline has passed: no wait at all
        assert left.gettimeout() is None  # the socket is left blocking for gunicorn


def test_the_application_log_escapes_a_path(caplog: pytest.LogCaptureFixture) -> None:
    from werkzeug.test import Client

    from sitecache.app import App

    failing = App.__new__(App)

    def broken(request: Any) -> Any:
        raise RuntimeError("boom")

    failing.handle = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, logger="sitecache"):
        response = Client(failing._serve).get("/a%0Aforged")
    assert response.status_code == 500
    [record] = caplog.records
    assert "\n" not in record.getMessage()
    assert "\\n" in record.getMessage()


def test_reading_what_has_arrived_never_waits() -> None:
    """The worker's poller reads parked connections with `recv_nowait` (#15 point 11)."""
    left, right = socket.socketpair()
    with left, right:
        wrapped = DeadlineSocket(left, write_timeout=5)
        left.setblocking(False)
        assert wrapped.recv_nowait(10) is None  # nothing yet: no wait, no error
        right.sendall(b"GET / HT")
        assert wrapped.recv_nowait(4) == b"GET "
        assert wrapped.recv_nowait(10) == b"/ HT"
        right.close()
        assert wrapped.recv_nowait(10) == b""  # the client's end
