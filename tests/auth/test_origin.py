"""`sitecache.auth.origin`: the one cross-site check of state-changing form POSTs (#15 point 10).

Each row is a request's headers and whether a POST with them is taken by a site whose URLs are
``http://example.org`` (its home) and ``http://localhost`` (where the request was sent).
"""

from __future__ import annotations

import pytest

from sitecache.auth.origin import cross_site_reason, origin_of

SITE_URLS = ("http://example.org", "http://localhost/")

CASES: list[tuple[str, dict[str, str], bool]] = [
    ("no headers at all (curl, scripts)", {}, True),
    ("the home URL's origin", {"Origin": "http://example.org"}, True),
    ("the address the request was sent to", {"Origin": "http://localhost"}, True),
    ("the default port written out", {"Origin": "http://example.org:80"}, True),
    ("upper-case scheme and host", {"Origin": "HTTP://EXAMPLE.ORG"}, True),
    ("a fully qualified host name", {"Origin": "http://example.org."}, True),
    ("a same-origin Referer with a path", {"Referer": "http://example.org/login?x=1"}, True),
    ("a same-origin fetch", {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost"}, True),
    ("a typed address (Sec-Fetch-Site: none)", {"Sec-Fetch-Site": "none"}, True),
    ("lower-case header names", {"origin": "http://example.org"}, True),
    ("Origin wins over Referer", {
        "Origin": "http://example.org", "Referer": "http://x.test/"}, True),
    ("another site's Origin", {"Origin": "https://evil.example"}, False),
    ("a null Origin", {"Origin": "null"}, False),
    ("a look-alike host", {"Origin": "http://example.org.evil.example"}, False),
    ("a user-info trick", {"Origin": "http://example.org@evil.example"}, False),
    ("another scheme", {"Origin": "https://example.org"}, False),
    ("another port", {"Origin": "http://example.org:8080"}, False),
    ("a sibling subdomain", {"Origin": "http://www.example.org"}, False),
    ("a port out of range", {"Origin": "http://example.org:99999"}, False),
    ("a broken IPv6 literal", {"Origin": "http://[::1"}, False),
    ("a non-http scheme", {"Origin": "file://example.org"}, False),
    ("another site's Referer", {"Referer": "https://evil.example/page"}, False),
    ("a foreign Origin with a same-origin Referer", {
        "Origin": "https://evil.example", "Referer": "http://example.org/"}, False),
    ("a cross-site fetch without Origin", {"Sec-Fetch-Site": "cross-site"}, False),
    ("a cross-site fetch, any capitalization", {"sec-fetch-site": "Cross-Site"}, False),
    ("a cross-site fetch claiming this origin", {
        "Sec-Fetch-Site": "cross-site", "Origin": "http://example.org"}, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("headers", "taken"), [(headers, taken) for _, headers, taken in CASES],
    ids=[name for name, _, _ in CASES],
)  # fmt: skip
def test_a_form_post_is_taken_only_from_this_site(headers: dict[str, str], taken: bool) -> None:
    reason = cross_site_reason(headers, SITE_URLS)
    assert (reason is None) is taken, reason


def test_the_reason_names_the_header_and_bounds_what_the_client_sent() -> None:
    reason = cross_site_reason({"Origin": "https://evil.example/" + "x" * 5000}, SITE_URLS)
    assert reason is not None
    assert reason.startswith("Origin ")
    assert len(reason) < 300


def test_a_site_without_usable_urls_takes_only_posts_without_origin_headers() -> None:
    assert cross_site_reason({}, ()) is None
    assert cross_site_reason({"Origin": "http://example.org"}, ("not a url",)) is not None


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://Example.ORG/blog/", ("https", "example.org", 443)),
        ("http://[::1]:8000/", ("http", "::1", 8000)),
        ("http://127.0.0.1:8000", ("http", "127.0.0.1", 8000)),
        ("null", None),
        ("", None),
        ("/relative/path", None),
        ("javascript:alert(1)", None),
        ("http://:80/", None),
    ],
)
def test_origins_are_scheme_host_and_port(url: str, origin: object) -> None:
    assert origin_of(url) == origin
