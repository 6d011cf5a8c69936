"""What a stored page keeps of the application's answer (RFC 9111 §3.1), and how ``Vary`` keys
its copies (§4.1), through `PageCache`."""

from __future__ import annotations

import gzip

import pytest

from tests.cache.conftest import PageApp
from tests.cache.test_middleware import build, get

# (fields the application sends beside max-age, fields a hit must not carry, fields it keeps)
FIELD_CASES: list[tuple[list[tuple[str, str]], set[str], dict[str, str]]] = [
    # RFC 9111 §3.1: the fields of one connection, and the proxy's own, are never stored.
    ([("Connection", "x-a, x-b"), ("X-A", "1"), ("X-B", "2"), ("X-C", "3")],
     {"connection", "x-a", "x-b"}, {"X-C": "3"}),
    ([("Keep-Alive", "timeout=5"), ("Proxy-Connection", "close"), ("Upgrade", "h2c"),
      ("Trailer", "X-Sum"), ("TE", "trailers")],
     {"keep-alive", "proxy-connection", "upgrade", "trailer", "te"}, {}),
    ([("Proxy-Authenticate", "Basic"), ("Proxy-Authentication-Info", "nextnonce=1"),
      ("Proxy-Authorization", "Basic eA==")],
     {"proxy-authenticate", "proxy-authentication-info", "proxy-authorization"}, {}),
    # A qualified no-cache or private withholds the fields it names.
    ([("Cache-Control", 'no-cache="X-User"'), ("X-User", "ada"), ("X-Page", "1")],
     {"x-user"}, {"X-Page": "1"}),
    ([("Cache-Control", 'private="X-User, X-Mood"'), ("X-User", "ada"), ("X-Mood", "sunny")],
     {"x-user", "x-mood"}, {}),
    # Everything else is replayed as sent.
    ([("X-Frame-Options", "sameorigin"), ("Content-Security-Policy", "default-src 'self'"),
      ("Content-Location", "/bar"), ("Expires", "Mon, 11 Jan 2038 11:11:11 GMT")],
     set(), {"X-Frame-Options": "sameorigin", "Content-Location": "/bar",
             "Expires": "Mon, 11 Jan 2038 11:11:11 GMT"}),
    ([("ETag", 'W/"weak"')], set(), {"ETag": 'W/"weak"'}),
    ([("Set-Cookie2", "a=b")], set(), {"Set-Cookie2": "a=b"}),
]  # fmt: skip


@pytest.mark.parametrize(("headers", "absent", "kept"), FIELD_CASES)
def test_a_hit_replays_what_the_application_sent_but_what_may_not_be_stored(
    page_app: PageApp, headers: list[tuple[str, str]], absent: set[str], kept: dict[str, str]
) -> None:
    page_app.headers += [("Cache-Control", "max-age=60"), *headers]
    cache = build(page_app)
    first = get(cache, "/a/")
    hit = get(cache, "/a/")
    assert hit.headers["Cache-Status"].startswith("sitecache; hit")
    for answer in (first, hit):
        names = {name.lower() for name, _ in answer.headers}
        assert not names & absent
        for name, value in kept.items():
            assert answer.headers[name] == value


# (request fields of the one that stored the page, of the next one, is the next one a hit?)
VARY_CASES: list[tuple[dict[str, str], dict[str, str], bool]] = [
    ({"X_Token": "1"}, {"X_Token": "1"}, True),
    ({"X_Token": "1"}, {"X_Token": "2"}, False),
    ({"X_Token": "1"}, {}, False),
    ({}, {"X_Token": "1"}, False),
    # RFC 9111 §4.1: a header absent is not the header empty.
    ({}, {"X_Token": ""}, False),
    ({"X_Token": ""}, {}, False),
    ({}, {}, True),
    # Whitespace around list members and the case of language tags do not make a variant.
    ({"X_Token": "1,2"}, {"X_Token": " 1, 2 "}, True),
    ({"Accept_Language": "en, DE"}, {"Accept_Language": "EN, de"}, True),
    ({"Accept_Language": "en, de"}, {"Accept_Language": "de, en"}, False),
]


@pytest.mark.parametrize(("stored", "asked", "hit"), VARY_CASES)
def test_vary_keys_a_copy_by_the_request_fields_it_names(
    page_app: PageApp, stored: dict[str, str], asked: dict[str, str], hit: bool
) -> None:
    page_app.headers.append(("Vary", "X-Token, Accept-Language"))
    cache = build(page_app)
    assert "stored" in get(cache, "/a/", **stored).headers["Cache-Status"]
    status = get(cache, "/a/", **asked).headers["Cache-Status"]
    assert status.startswith("sitecache; hit") is hit, status


def test_a_body_the_application_encoded_is_stored_as_sent_and_keyed_on_accept_encoding(
    page_app: PageApp,
) -> None:
    page_app.headers.append(("Content-Encoding", "gzip"))
    page_app.body = gzip.compress(b"<p>already compressed</p>" * 20)
    cache = build(page_app)
    first = get(cache, "/a/", Accept_Encoding="gzip")
    assert "stored" in first.headers["Cache-Status"]
    hit = get(cache, "/a/", Accept_Encoding="gzip")
    assert hit.headers["Cache-Status"].startswith("sitecache; hit")
    assert hit.headers["Content-Encoding"] == "gzip"
    assert hit.headers["Vary"] == "Accept-Encoding"
    assert hit.data == first.data
    # A client that asks for another coding (or none) is another variant: the app answers it.
    assert "hit" not in get(cache, "/a/").headers["Cache-Status"].split("; ")
    assert page_app.calls == 2
