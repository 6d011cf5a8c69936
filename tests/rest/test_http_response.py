"""A REST answer is sent as built, exactly as werkzeug would send the same response (#18).

`to_http` builds the response from final header pairs without werkzeug's per-header work and
sends it without copying them again; every case where werkzeug would change something (HEAD,
bodiless statuses, ``Location``, close callbacks) still goes through werkzeug.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Response

from sitecache.rest import RestResponse
from sitecache.rest.http_response import RestHttpResponse, merge_headers, to_http

HEADERS = {"Content-Type": "application/json; charset=UTF-8", "X-Robots-Tag": "noindex"}


def unused_write(data: bytes) -> object:
    """WSGI's legacy ``write`` callable, which a werkzeug response never calls."""
    raise AssertionError("write() is not used")


def sent(response: Response, method: str = "GET") -> tuple[str, list[tuple[str, str]], bytes]:
    environ = EnvironBuilder(path="/site-json/thing", method=method).get_environ()
    started: list[Any] = []

    def start_response(
        status: str, headers: list[tuple[str, str]], exc_info: object = None, /
    ) -> Callable[[bytes], object]:
        started.extend([status, headers])
        return unused_write

    chunks: Iterable[bytes] = response(environ, start_response)
    body = b"".join(chunks)
    close = getattr(chunks, "close", None)
    if close is not None:
        close()
    return started[0], list(started[1]), body


def werkzeugs(status: int, headers: dict[str, str], body: str | None, head: bool) -> Response:
    """The response as werkzeug builds it from the same parts (what `to_http` did before)."""
    response = Response(
        b"" if body is None else body.encode(), status=status, headers=list(headers.items())
    )
    if head:
        response.headers.pop("Content-Length", None)
    return response


@pytest.mark.parametrize(
    ("status", "extra", "body"),
    [
        (200, {}, '{"ok":true}'),
        (401, {"Allow": "GET"}, '{"code":"rest_forbidden"}'),
        (201, {"Location": "/site-json/thing/ünï"}, "{}"),
        (204, {}, None),
        (304, {"ETag": '"x"'}, None),
        (200, {"content-length": "999"}, "[]"),
        (200, {}, None),
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_an_answer_is_sent_as_werkzeug_sends_it(
    status: int, extra: dict[str, str], body: str | None, method: str
) -> None:
    headers = {**HEADERS, **extra}
    head = method == "HEAD"
    ours = to_http(status, headers, None if head else body, {}, head=head)
    theirs = werkzeugs(status, headers, None if head else body, head)
    assert isinstance(ours, RestHttpResponse)
    assert sent(ours, method) == sent(theirs, method)


def test_headers_added_after_building_are_sent_too() -> None:
    ours = to_http(200, HEADERS, "{}", {})
    theirs = werkzeugs(200, HEADERS, "{}", False)
    for response in (ours, theirs):
        response.headers.setdefault("X-Frame-Options", "SAMEORIGIN")
        response.headers.setdefault("X-Robots-Tag", "all")
    assert sent(ours) == sent(theirs)
    assert ours.mimetype == "application/json"


def test_a_close_callback_still_runs() -> None:
    closed: list[bool] = []
    response = to_http(200, HEADERS, "{}", {})
    response.call_on_close(lambda: closed.append(True))
    assert sent(response)[2] == b"{}"
    assert closed == [True]


def test_debug_headers_come_last_and_every_value_is_one_line() -> None:
    response = to_http(200, {**HEADERS, "X-Note": "a\nb"}, "{}", {"x-robots-tag": "none"})
    status, headers, _ = sent(response)
    assert status == "200 OK"
    assert headers == [
        ("Content-Type", "application/json; charset=UTF-8"),
        ("x-robots-tag", "none"),
        ("X-Note", "a b"),
        ("Content-Length", "2"),
    ]


def test_merging_header_layers_is_setting_them_one_by_one() -> None:
    base = {"Content-Type": "application/json", "Last-Modified": "x", "Vary": "Accept"}
    own = {"vary": "Origin", "X-Own": "1"}
    nocache = {"Cache-Control": "no-store", "x-own": "2"}
    one_by_one = RestResponse(None, 200, base)
    for layer in (own, nocache):
        for name, value in layer.items():
            one_by_one.header(name, value)
    one_by_one.remove_header("last-modified")
    merged = merge_headers(base, own, nocache, drop="last-modified")
    assert list(merged.items()) == list(one_by_one.get_headers().items())
    assert list(merge_headers(base).items()) == list(base.items())
