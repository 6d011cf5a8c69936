"""`make cache-tests` (``bench/cache_tests.py``): how results are scored and written, what it says
without a checkout of the suite, and the WSGI reverse proxy `PageCache` fronts the suite's
server through (``bench/reverse_proxy.py``), against real origins on free loopback ports."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from werkzeug.test import Client

from bench.cache_tests import Checkout, main
from bench.cache_tests_report import (
    BEGIN,
    END,
    FAILURE_REASONS,
    Suite,
    reason_for,
    render_markdown,
    replace_section,
    score,
)
from bench.reverse_proxy import ReverseProxy, kept_response_headers
from tests.test_bench_runner import runner


def case(test_id: str, kind: str = "required", depends: tuple[str, ...] = (),
         browser_only: bool = False) -> dict[str, Any]:  # fmt: skip
    return {"id": test_id, "kind": kind, "depends_on": list(depends), "browser_only": browser_only,
            "name": test_id, "suite": "s"}  # fmt: skip


SUITE = Suite(
    tests=[
        case("none", "check"),
        case("base", "optimal", ("none",)),
        case("a", "required", ("base",)),
        case("b", "optimal", ("base",)),
        case("c", "required", ("a",)),
        case("browser", "required", browser_only=True),
        case("check", "check", ("base",)),
        case("lonely", "required"),
    ]
)


# (results, graded passed one by one, passed under the cache-tests.fyi rule)
SCORE_CASES: list[tuple[dict[str, Any], int, int]] = [
    ({"none": True, "base": True, "a": True, "b": True, "c": True, "lonely": True}, 5, 5),
    # The check every test depends on answered no: one by one they count, not under the rule.
    ({"none": ["Assertion", "no"], "base": True, "a": True, "b": True, "c": True}, 4, 0),
    # A prerequisite's prerequisite failed.
    ({"none": True, "base": True, "a": ["Assertion", "x"], "b": True, "c": True}, 3, 2),
    # A setup failure is no pass; an untested test neither.
    ({"none": True, "base": True, "a": ["Setup", "x"], "b": True}, 2, 2),
    ({}, 0, 0),
]


@pytest.mark.parametrize(("results", "passed", "ruled"), SCORE_CASES)
def test_graded_tests_are_scored_one_by_one_and_under_the_prerequisite_rule(
    results: dict[str, Any], passed: int, ruled: int
) -> None:
    result = score(SUITE, results)
    assert result.graded == 5  # required and optimal, not browser-only
    assert (result.passed, result.passed_with_prerequisites) == (passed, ruled)


def test_failures_are_listed_with_their_message_and_our_reason(tmp_path: Path) -> None:
    results = {"none": True, "base": True, "a": ["Assertion", "Response 2 | not cached"]}
    suite = Suite(tests=SUITE.tests, published=[("Peer 1.0", {"base": True, "a": True})])
    section = render_markdown(suite, {"memory": score(suite, results)}, heading="## cache-tests")
    assert section.startswith(BEGIN)
    assert section.endswith(END)
    assert "| **sitecache PageCache, memory** | **1** | **1** |" in section
    assert "| Peer 1.0 (published) | 2 | 0 |" in section
    assert "| `a` | required | all | Response 2 \\| not cached | (not explained yet) |" in section
    page = tmp_path / "page.md"
    page.write_text("# Title\n\nBefore.\n", encoding="utf-8")
    replace_section(page, section)
    replace_section(page, section.replace("**1**", "**3**"))  # written again: replaced
    text = page.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1
    assert "**3**" in text
    assert text.startswith("# Title\n\nBefore.\n")
    assert runner().cache_tests_section(page) == section.replace("**1**", "**3**")


def test_a_test_failing_on_one_storage_only_is_put_down_to_timing() -> None:
    good = {"none": True, "base": True, "a": True}
    flaky = {"none": True, "base": True, "a": ["Assertion", "not cached"]}
    section = render_markdown(SUITE, {"disk": score(SUITE, good), "redis": score(SUITE, flaky)})
    assert "| `a` | required | redis | not cached | Timing: passed on disk." in section


def test_every_reason_names_tests_by_id_or_by_a_prefix() -> None:
    assert reason_for("interim-103").startswith("WSGI limit")
    assert reason_for("other-authorization-public").startswith("Deliberate (security)")
    assert reason_for("freshness-max-age") == ""
    assert all(reason.endswith(")") or reason.endswith(".") for reason in FAILURE_REASONS.values())


@pytest.mark.parametrize(
    ("setup", "said"),
    [
        (None, "CACHE_TESTS_DIR is not set"),
        ("empty", "holds no package.json"),
        ("other", "is not a checkout of the cache-tests suite"),
        ("bare", "has no node_modules"),
    ],
)
def test_without_a_prepared_checkout_it_says_why_and_does_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    setup: str | None, said: str,
) -> None:  # fmt: skip
    if setup is None:
        monkeypatch.delenv("CACHE_TESTS_DIR", raising=False)
    else:
        if setup != "empty":
            name = "http-cache-tests" if setup == "bare" else "something-else"
            (tmp_path / "package.json").write_text(json.dumps({"name": name}), encoding="utf-8")
        monkeypatch.setenv("CACHE_TESTS_DIR", str(tmp_path))
    found = Checkout.find(None if setup is None else str(tmp_path))
    assert isinstance(found, str)
    assert said in found
    assert main(["--write"]) == 0
    assert f"cache-tests skipped: {found}" in capsys.readouterr().out


class Origin(BaseHTTPRequestHandler):
    """An origin that echoes what it received and answers with the fields it is told."""

    protocol_version = "HTTP/1.1"
    answer_fields: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.dumps({
            "method": self.command, "path": self.path,
            "body": self.rfile.read(length).decode(),
            "headers": [[name.lower(), value] for name, value in self.headers.items()],
        }).encode()  # fmt: skip
        self.send_response(200)
        for name, value in self.answer_fields:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def origin() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_the_proxy_forwards_the_request_and_answers_with_the_origins_fields(origin: int) -> None:
    Origin.answer_fields = [
        ("Cache-Control", "max-age=60"), ("Cache-Control", "public"), ("Connection", "x-a"),
        ("X-A", "hop"), ("X-B", "kept"), ("Keep-Alive", "timeout=5"),
        ("Proxy-Authentication-Info", "kept for the cache to drop"),
    ]  # fmt: skip
    client = Client(ReverseProxy("127.0.0.1", origin))
    answer = client.post("/test/x?q=1", base_url="http://example.org", data=b"abc",
                         headers={"X-Token": "t", "Connection": "x-token-2",
                                  "X-Token-2": "hop"})  # fmt: skip
    seen = json.loads(answer.data)
    assert (seen["method"], seen["path"], seen["body"]) == ("POST", "/test/x?q=1", "abc")
    sent = dict(seen["headers"])
    assert sent["x-token"] == "t"
    assert sent["host"] == "example.org"
    assert "x-token-2" not in sent
    assert answer.headers.getlist("Cache-Control") == ["max-age=60", "public"]
    assert answer.headers["X-B"] == "kept"
    assert answer.headers["Proxy-Authentication-Info"] == "kept for the cache to drop"
    for name in ("X-A", "Keep-Alive", "Connection"):
        assert name not in answer.headers


def test_hop_by_hop_fields_and_those_connection_names_are_not_kept() -> None:
    assert kept_response_headers(
        [("Connection", "close, X-A"), ("x-a", "1"), ("TE", "t"), ("Upgrade", "h2"), ("B", "2")]
    ) == [("B", "2")]


def serve_raw(reply: bytes, delay: float = 0.0) -> tuple[int, threading.Thread]:
    """A one-connection origin that sends ``reply`` (after ``delay``) whatever it is asked."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def run() -> None:
        connection, _ = listener.accept()
        with connection, listener:
            connection.recv(65536)
            time.sleep(delay)
            if reply:
                connection.sendall(reply)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return int(listener.getsockname()[1]), thread


def test_interim_responses_are_dropped_and_the_final_one_answers() -> None:
    port, thread = serve_raw(
        b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Final: 1\r\n\r\nok"
    )
    answer = Client(ReverseProxy("127.0.0.1", port)).get("/")
    thread.join(5)
    assert (answer.status_code, answer.data, answer.headers["X-Final"]) == (200, b"ok", "1")
    assert "Link" not in answer.headers


@pytest.mark.parametrize(
    ("reply", "delay", "status"),
    [(b"", 0.0, 502), (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 0.0, 502),
     (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 2.0, 504)],
)  # fmt: skip
def test_an_origin_that_fails_is_a_gateway_error_no_cache_keeps(
    reply: bytes, delay: float, status: int
) -> None:
    port, thread = serve_raw(reply, delay)
    answer = Client(ReverseProxy("127.0.0.1", port, timeout=1.0)).get("/")
    thread.join(5)
    assert answer.status_code == status
    assert answer.headers["Cache-Control"] == "no-store"


def test_an_origin_nobody_listens_on_is_a_bad_gateway() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = int(probe.getsockname()[1])
    probe.close()
    assert Client(ReverseProxy("127.0.0.1", port)).get("/").status_code == 502
