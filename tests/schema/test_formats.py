"""String formats and their helpers: colours, IP addresses, UUIDs, e-mail, dates, text, URLs.

Rows follow WordPress's schema functions and §4 (the notes on
``sanitize_text_field`` and ``uri``); ``is_uuid``'s ``version`` argument follows WordPress's
``wp_is_uuid``, which the engine mirrors.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

import pytest

from sitecache.schema import (
    SchemaMisuseWarning,
    get_date_with_gmt,
    is_email,
    is_ip_address,
    is_uuid,
    parse_date,
    parse_hex_color,
    sanitize_hex_color,
    sanitize_text_field,
    sanitize_textarea_field,
    sanitize_url,
)

JAN_16_1130_UTC = 1484566200
"""2017-01-16T11:30:00Z, the base of WordPress's date test examples."""

INDIA = timezone(timedelta(hours=5, minutes=30))
NEW_YORK = ZoneInfo("America/New_York")


def utc_timestamp(year: int, month: int, day: int) -> int:
    """The Unix timestamp of midnight UTC on the given day."""
    return int(datetime(year, month, day, tzinfo=UTC).timestamp())


# ---------------------------------------------------------------------- hex colours
@pytest.mark.parametrize(
    "color",
    [
        pytest.param("#fff", id="3-digits"),
        pytest.param("#FFF", id="3-digits-uppercase"),
        pytest.param("#abcdef", id="6-digits"),
        pytest.param("#0A0b0C", id="6-digits-mixed-case"),
        pytest.param("#fff\n", id="trailing-newline-tolerated"),
    ],
)
def test_parse_hex_color_returns_a_valid_color_unchanged(color: str) -> None:
    assert parse_hex_color(color) == color


@pytest.mark.parametrize(
    ("color", "expected"),
    [
        pytest.param("#fff", "#fff", id="valid-3-digits"),
        pytest.param("#0A0b0C", "#0A0b0C", id="valid-6-digits"),
        pytest.param("", "", id="empty-string-stays-empty"),
        pytest.param("#ab", None, id="2-digits-is-null"),
        pytest.param("WordPress", None, id="word-is-null"),
        pytest.param("#jkl", None, id="not-hex-is-null"),
        pytest.param(None, None, id="none-is-null"),
        pytest.param(123, None, id="number-is-null"),
    ],
)
def test_sanitize_hex_color_gives_null_for_an_invalid_color(
    color: object, expected: str | None
) -> None:
    # WordPress's sanitize_hex_color returns null, not "", for a color it refuses.
    assert sanitize_hex_color(color) == expected


@pytest.mark.parametrize(
    "color",
    [
        pytest.param("#ffff", id="4-digits"),
        pytest.param("#fffff", id="5-digits"),
        pytest.param("#fffffff", id="7-digits"),
        pytest.param("#ffffffff", id="8-digits"),
        pytest.param("fff", id="missing-hash"),
        pytest.param("ffffff", id="6-digits-missing-hash"),
        pytest.param("#", id="hash-only"),
        pytest.param("#ab", id="2-digits"),
        pytest.param("#jkl", id="not-hex"),
        pytest.param("WordPress", id="word"),
        pytest.param("", id="empty"),
        pytest.param(" #fff", id="leading-space"),
        pytest.param("#fff\n\n", id="two-trailing-newlines"),
    ],
)
def test_parse_hex_color_rejects_anything_but_3_or_6_hex_digits(color: str) -> None:
    assert parse_hex_color(color) is False


# ---------------------------------------------------------------------- IP addresses
@pytest.mark.parametrize(
    "address",
    [
        pytest.param("127.0.0.1", id="ipv4-loopback"),
        pytest.param("0.0.0.0", id="ipv4-zeros"),  # noqa: S104
        pytest.param("255.255.255.255", id="ipv4-max"),
        pytest.param("01.02.03.004", id="ipv4-leading-zeros"),
        pytest.param("192.168.1.10", id="ipv4-private"),
        pytest.param("::1", id="ipv6-loopback"),
        pytest.param("::", id="ipv6-unspecified"),
        pytest.param("1::", id="ipv6-trailing-double-colon"),
        pytest.param("fe80::217:f2ff:fe07:ed62", id="ipv6-link-local"),
        pytest.param("2001:db8:0:0:0:0:0:1", id="ipv6-eight-groups"),
        pytest.param("2001:0db8:85a3:0000:0000:8a2e:0370:7334", id="ipv6-four-digit-groups"),
        pytest.param("FF01::101", id="ipv6-uppercase"),
        pytest.param("::ffff:192.0.2.128", id="ipv6-with-ipv4-tail"),
    ],
)
def test_is_ip_address_returns_a_valid_address_unchanged(address: str) -> None:
    assert is_ip_address(address) == address


@pytest.mark.parametrize(
    "address",
    [
        pytest.param("", id="empty"),
        pytest.param("256.0.0.1", id="ipv4-part-over-255"),
        pytest.param("1.2.3", id="ipv4-three-parts"),
        pytest.param("1.2.3.4.5", id="ipv4-five-parts"),
        pytest.param(" 1.2.3.4", id="ipv4-leading-space"),
        pytest.param("1.2.3.4 ", id="ipv4-trailing-space"),
        pytest.param("a.b.c.d", id="ipv4-letters"),
        pytest.param("FF01::101::2", id="ipv6-two-double-colons"),
        pytest.param("12345::", id="ipv6-five-digit-group"),
        pytest.param("1:2:3:4:5:6:7", id="ipv6-seven-groups"),
        pytest.param("1:2:3:4:5:6:7:8:9", id="ipv6-nine-groups"),
        pytest.param("g::1", id="ipv6-non-hex"),
        pytest.param("::ffff:192.0.2", id="ipv6-short-ipv4-tail"),
        pytest.param("::ffff:192.0.2.256", id="ipv6-ipv4-tail-over-255"),
        pytest.param("hello", id="word"),
    ],
)
def test_is_ip_address_rejects_invalid_addresses(address: str) -> None:
    assert is_ip_address(address) is False


# ---------------------------------------------------------------------- UUIDs
V1_UUID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
V4_UUID = "123e4567-e89b-42d3-a456-426614174000"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(V4_UUID, True, id="lowercase-v4"),
        pytest.param(V1_UUID, True, id="lowercase-v1"),
        pytest.param("00000000-0000-0000-0000-000000000000", True, id="nil-uuid"),
        pytest.param("123e4567-e89b-f2d3-c456-426614174000", True, id="any-version-digit"),
        pytest.param(V4_UUID.upper(), False, id="uppercase-rejected"),
        pytest.param("123E4567-e89b-42d3-a456-426614174000", False, id="one-uppercase-letter"),
        pytest.param("{" + V4_UUID + "}", False, id="braces"),
        pytest.param(V4_UUID.replace("-", ""), False, id="no-hyphens"),
        pytest.param(V4_UUID[:-1], False, id="too-short"),
        pytest.param(V4_UUID + "0", False, id="too-long"),
        pytest.param("123e4567-e89b-42d3-a456-42661417400g", False, id="non-hex"),
        pytest.param("", False, id="empty"),
        pytest.param(None, False, id="null"),
        pytest.param(123, False, id="int"),
    ],
)
def test_is_uuid_accepts_lowercase_hyphenated_strings_only(value: object, expected: bool) -> None:
    assert is_uuid(value) is expected


@pytest.mark.parametrize(
    ("value", "version", "expected"),
    [
        pytest.param(V4_UUID, 4, True, id="v4-as-v4"),
        pytest.param("123e4567-e89b-42d3-8456-426614174000", 4, True, id="v4-variant-8"),
        pytest.param(V1_UUID, 4, False, id="v1-is-not-v4"),
        pytest.param("123e4567-e89b-42d3-c456-426614174000", 4, False, id="v4-bad-variant"),
        pytest.param(V4_UUID.upper(), 4, False, id="v4-uppercase"),
    ],
)
def test_is_uuid_with_a_version_checks_for_a_version_4_uuid(
    value: str, version: int, expected: bool
) -> None:
    assert is_uuid(value, version) is expected


@pytest.mark.parametrize("version", [1, 3, 5, "7"])
def test_is_uuid_reports_any_version_other_than_4_as_misuse_and_refuses(
    version: int | str,
) -> None:
    with pytest.warns(SchemaMisuseWarning, match="Only UUID V4 is supported at this time."):
        assert is_uuid(V1_UUID, version) is False


# ---------------------------------------------------------------------- e-mail
@pytest.mark.parametrize(
    "address",
    [
        pytest.param("a@b.co", id="six-characters"),
        pytest.param("user@example.com", id="plain"),
        pytest.param("o'neil+tag@example.com", id="quote-and-plus-in-local-part"),
        pytest.param("a!#$%&'*+/=?^_`{|}~.-@example.com", id="every-allowed-local-symbol"),
        pytest.param("First.Last@Sub.Example.COM", id="mixed-case"),
        pytest.param("a@ex-ample.com", id="inner-hyphen-in-label"),
        pytest.param("a@123.example", id="digits-in-label"),
    ],
)
def test_is_email_returns_a_valid_address_unchanged(address: str) -> None:
    assert is_email(address) == address


@pytest.mark.parametrize(
    "address",
    [
        pytest.param("a@b.c", id="step-1-shorter-than-6"),
        pytest.param("", id="step-1-empty"),
        pytest.param("@example.com", id="step-2-at-sign-at-position-0"),
        pytest.param("userexample.com", id="step-2-no-at-sign"),
        pytest.param("a b@example.com", id="step-3-space-in-local-part"),
        pytest.param('a"b@example.com', id="step-3-double-quote-in-local-part"),
        pytest.param("a(b)@example.com", id="step-3-parenthesis-in-local-part"),
        pytest.param("jos\u00e9@example.com", id="step-3-non-ascii-local-part"),
        pytest.param("a@example..com", id="step-4-double-dot-in-domain"),
        pytest.param("a@.example.com", id="step-5-domain-starts-with-dot"),
        pytest.param("a@example.com.", id="step-5-domain-ends-with-dot"),
        pytest.param("a@ example.com", id="step-5-domain-starts-with-space"),
        pytest.param("a@example.com ", id="step-5-domain-ends-with-space"),
        pytest.param("user@localhost", id="step-6-single-label"),
        pytest.param("a@exa_mple.com", id="step-7-underscore-in-label"),
        pytest.param("a@-example.com", id="step-7-leading-hyphen"),
        pytest.param("a@example-.com", id="step-7-trailing-hyphen"),
        pytest.param("a@b@example.com", id="step-7-second-at-sign-in-domain"),
        pytest.param("a@ex\u00e4mple.com", id="step-7-internationalized-domain"),
    ],
)
def test_is_email_rejects_an_address_failing_any_step(address: str) -> None:
    assert is_email(address) is False


# ---------------------------------------------------------------------- parse_date
@pytest.mark.parametrize(
    ("date", "expected"),
    [
        pytest.param("2017-01-16T11:30:00-05:30", JAN_16_1130_UTC + 19800, id="wp-test-offset"),
        pytest.param("2017-01-16T11:30:00Z", JAN_16_1130_UTC, id="zulu"),
        pytest.param("2017-01-16T11:30:00", JAN_16_1130_UTC, id="no-offset-is-utc"),
        pytest.param("2017-01-16t11:30:00", JAN_16_1130_UTC, id="lowercase-t-separator"),
        pytest.param("2017-01-16 11:30:00", JAN_16_1130_UTC, id="space-separator"),
        pytest.param("2017-01-16T11:30:00.123Z", JAN_16_1130_UTC, id="fraction-ignored"),
        pytest.param("2017-01-16T11:30:00.5", JAN_16_1130_UTC, id="fraction-without-offset"),
        pytest.param("2017-01-16T11:30:00+05", JAN_16_1130_UTC - 18000, id="plus-hh"),
        pytest.param("2017-01-16T11:30:00-05", JAN_16_1130_UTC + 18000, id="minus-hh"),
        pytest.param("2017-01-16T11:30:00+05:30", JAN_16_1130_UTC - 19800, id="plus-hh-mm"),
        pytest.param("2017-02-30T00:00:00Z", utc_timestamp(2017, 3, 2), id="feb-30-is-mar-2"),
        pytest.param("2016-02-29T00:00:00Z", utc_timestamp(2016, 2, 29), id="leap-day"),
        pytest.param("1969-12-31T23:59:59Z", -1, id="before-the-epoch"),
        pytest.param("1970-01-01T00:00:00Z", 0, id="the-epoch-is-0"),
        pytest.param("2017-01-16T11:30:00+23:59", JAN_16_1130_UTC - 86340, id="offset-23-59"),
        pytest.param("0000-01-01T00:00:00", -62167219200, id="year-0000"),
    ],
)
def test_parse_date_gives_the_unix_timestamp_of_an_rfc3339_date(date: str, expected: int) -> None:
    result = parse_date(date)
    assert type(result) is int
    assert result == expected


@pytest.mark.parametrize(
    "date",
    [
        pytest.param("2017-01-16T11:30:00+0530", id="offset-without-colon"),
        pytest.param("2017-01-16T11:30:00-5", id="one-digit-offset"),
        pytest.param("2017-01-16T11:30:00z", id="lowercase-z"),
        pytest.param("2017-01-16T11:30", id="no-seconds"),
        pytest.param("2017-01-16", id="date-only"),
        pytest.param("2017", id="year-only"),
        pytest.param("", id="empty"),
        pytest.param("2017-18-01T00:00:00Z", id="month-18"),
        pytest.param("2017-01-16X11:30:00", id="bad-separator"),
        pytest.param(" 2017-01-16T11:30:00", id="leading-space"),
        pytest.param("2017-1-16T11:30:00", id="one-digit-month"),
        pytest.param("not a date", id="words"),
    ],
)
def test_parse_date_rejects_other_shapes(date: str) -> None:
    assert parse_date(date) is False


@pytest.mark.parametrize(
    ("date", "expected"),
    [
        pytest.param("2017-01-16T11:30:00-05:30", JAN_16_1130_UTC, id="offset-ignored"),
        pytest.param("2017-01-16T11:30:00+05", JAN_16_1130_UTC, id="short-offset-ignored"),
        pytest.param("2017-01-16T11:30:00Z", JAN_16_1130_UTC, id="zulu"),
        pytest.param("2017-01-16T11:30:00", JAN_16_1130_UTC, id="no-offset"),
        pytest.param("2017-01-16", False, id="date-only-is-damaged-and-fails"),
    ],
)
def test_parse_date_with_force_utc_ignores_the_offset(date: str, expected: int | bool) -> None:
    result = parse_date(date, force_utc=True)
    assert type(result) is type(expected)
    assert result == expected


# ---------------------------------------------------------------------- get_date_with_gmt
@pytest.mark.parametrize(
    ("date", "expected"),
    [
        pytest.param("0000-01-01T00:00:00", "0000-01-01 00:00:00", id="year-0-january-1"),
        pytest.param("0000-02-29T12:00:00Z", "0000-02-29 12:00:00", id="year-0-leap-day"),
        pytest.param("0000-12-31T23:59:59", "0000-12-31 23:59:59", id="year-0-last-second"),
        pytest.param("-0001-01-01T00:00:00", None, id="negative-years-do-not-parse"),
        pytest.param("1970-01-01T00:00:00Z", "1970-01-01 00:00:00", id="the-epoch"),
    ],
)
def test_get_date_with_gmt_keeps_the_day_of_early_years(date: str, expected: str | None) -> None:
    assert get_date_with_gmt(date) == (None if expected is None else (expected, expected))


def test_get_date_with_gmt_writes_four_digit_years_in_any_timezone() -> None:
    """Found by sitecache.testing.check_routes (#20): strftime's %Y wrote the year 999 as
    "999", a wall time no date-time check accepts; PHP writes "0999"."""
    assert get_date_with_gmt("1000-00-00T00:00:00", timezone=INDIA) == (
        "0999-11-30 00:00:00",
        "0999-11-29 18:30:00",
    )
    assert get_date_with_gmt("0999-11-30T00:00:00Z", timezone=INDIA) == (
        "0999-11-30 05:30:00",
        "0999-11-30 00:00:00",
    )


@pytest.mark.parametrize(
    ("date", "is_utc", "expected"),
    [
        pytest.param(
            "2017-01-16T11:30:00",
            False,
            ("2017-01-16 11:30:00", "2017-01-16 11:30:00"),
            id="no-offset",
        ),
        pytest.param(
            "2017-01-16T11:30:00",
            True,
            ("2017-01-16 11:30:00", "2017-01-16 11:30:00"),
            id="no-offset-is-utc",
        ),
        pytest.param(
            "2017-01-16T11:30:00-05:30",
            False,
            ("2017-01-16 17:00:00", "2017-01-16 17:00:00"),
            id="offset-converted-to-utc",
        ),
        pytest.param(
            "2017-01-16 11:30:00.25Z",
            False,
            ("2017-01-16 11:30:00", "2017-01-16 11:30:00"),
            id="space-fraction-zulu",
        ),
    ],
)
def test_get_date_with_gmt_in_the_default_utc_site_timezone(
    date: str, is_utc: bool, expected: tuple[str, str]
) -> None:
    assert get_date_with_gmt(date, is_utc) == expected


@pytest.mark.parametrize(
    ("date", "is_utc", "zone", "expected"),
    [
        pytest.param(
            "2017-01-16T11:30:00",
            False,
            INDIA,
            ("2017-01-16 11:30:00", "2017-01-16 06:00:00"),
            id="fixed-offset-no-offset-is-local",
        ),
        pytest.param(
            "2017-01-16T11:30:00",
            True,
            INDIA,
            ("2017-01-16 17:00:00", "2017-01-16 11:30:00"),
            id="fixed-offset-is-utc",
        ),
        pytest.param(
            "2017-01-16T11:30:00Z",
            False,
            INDIA,
            ("2017-01-16 17:00:00", "2017-01-16 11:30:00"),
            id="fixed-offset-zulu",
        ),
        pytest.param(
            "2017-01-16T11:30:00-05:30",
            False,
            INDIA,
            ("2017-01-16 22:30:00", "2017-01-16 17:00:00"),
            id="fixed-offset-with-other-offset",
        ),
        pytest.param(
            "2017-01-16T20:00:00+02",
            False,
            INDIA,
            ("2017-01-16 23:30:00", "2017-01-16 18:00:00"),
            id="fixed-offset-with-hh-offset",
        ),
        pytest.param(
            "2017-01-16T23:00:00",
            False,
            INDIA,
            ("2017-01-16 23:00:00", "2017-01-16 17:30:00"),
            id="fixed-offset-same-day",
        ),
        pytest.param(
            "2017-01-16T02:00:00",
            False,
            INDIA,
            ("2017-01-16 02:00:00", "2017-01-15 20:30:00"),
            id="fixed-offset-previous-utc-day",
        ),
        pytest.param(
            "2017-01-16T11:30:00",
            False,
            NEW_YORK,
            ("2017-01-16 11:30:00", "2017-01-16 16:30:00"),
            id="new-york-winter-est",
        ),
        pytest.param(
            "2017-07-16T11:30:00",
            False,
            NEW_YORK,
            ("2017-07-16 11:30:00", "2017-07-16 15:30:00"),
            id="new-york-summer-edt",
        ),
        pytest.param(
            "2017-03-12T01:30:00",
            False,
            NEW_YORK,
            ("2017-03-12 01:30:00", "2017-03-12 06:30:00"),
            id="new-york-before-spring-forward",
        ),
        pytest.param(
            "2017-03-12T03:30:00",
            False,
            NEW_YORK,
            ("2017-03-12 03:30:00", "2017-03-12 07:30:00"),
            id="new-york-after-spring-forward",
        ),
        pytest.param(
            "2017-01-16T16:30:00Z",
            False,
            NEW_YORK,
            ("2017-01-16 11:30:00", "2017-01-16 16:30:00"),
            id="new-york-winter-from-utc",
        ),
        pytest.param(
            "2017-07-16T15:30:00",
            True,
            NEW_YORK,
            ("2017-07-16 11:30:00", "2017-07-16 15:30:00"),
            id="new-york-summer-is-utc",
        ),
    ],
)
def test_get_date_with_gmt_converts_through_the_site_timezone(
    date: str, is_utc: bool, zone: tzinfo, expected: tuple[str, str]
) -> None:
    assert get_date_with_gmt(date, is_utc, timezone=zone) == expected


@pytest.mark.parametrize(
    "date",
    [
        pytest.param("2017-01-16", id="date-only"),
        pytest.param("2017-01-16T11:30:00+0530", id="offset-without-colon"),
        pytest.param("2017-18-01T00:00:00", id="month-18"),
        pytest.param("", id="empty"),
        pytest.param("2017-01-16T11:30:00+25:00", id="offset-plus-25"),
        pytest.param("2017-01-16T11:30:00+99:99", id="offset-plus-99-99"),
        pytest.param("2017-01-16T11:30:00-24:00", id="offset-minus-24"),
    ],
)
def test_get_date_with_gmt_returns_none_when_parsing_fails(date: str) -> None:
    assert get_date_with_gmt(date) is None
    assert get_date_with_gmt(date, True, timezone=NEW_YORK) is None


# ---------------------------------------------------------------------- text fields
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(" a%20b\tc\n ", "ab c", id="octets-removed-whitespace-collapsed"),
        pytest.param("a < b", "a &lt; b", id="lone-less-than-escaped"),
        pytest.param("<p>Hello World</p>", "Hello World", id="tags-stripped"),
        pytest.param("<script>alert(1)</script>Hi", "Hi", id="script-content-removed"),
        pytest.param("<style>p { color: red }</style>Text", "Text", id="style-content-removed"),
        pytest.param("<SCRIPT>x</SCRIPT>ok", "ok", id="uppercase-script-removed"),
        pytest.param("  multiple   spaces  ", "multiple spaces", id="spaces-collapsed-trimmed"),
        pytest.param("line\nbreak\r\nand\ttab", "line break and tab", id="newlines-and-tabs"),
        pytest.param("%AB%cdtext", "text", id="octets-any-case"),
        pytest.param("x%2%200", "x", id="octets-removed-repeatedly"),
        pytest.param("a  %20  b", "a b", id="spaces-recollapsed-after-octets"),
        pytest.param("100%", "100%", id="lone-percent-kept"),
        pytest.param("h\u00e9llo w\u00f6rld", "h\u00e9llo w\u00f6rld", id="utf8-kept"),
        pytest.param("a\ud800b", "", id="invalid-utf8-becomes-empty"),
        pytest.param(5, "5", id="int-cast-to-string"),
        pytest.param(["a"], "", id="array-becomes-empty"),
    ],
)
def test_sanitize_text_field_follows_the_wordpress_steps(value: object, expected: str) -> None:
    assert sanitize_text_field(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(" a\tb\n c ", "a\tb\n c", id="inner-whitespace-kept-ends-trimmed"),
        pytest.param("line1\n\nline2", "line1\n\nline2", id="blank-line-kept"),
        pytest.param("<p>Hi</p>\nthere", "Hi\nthere", id="tags-stripped-newline-kept"),
        pytest.param("a < b", "a &lt; b", id="lone-less-than-escaped"),
        pytest.param("<script>alert(1)</script>\nok", "ok", id="script-removed-then-trimmed"),
        pytest.param("a%20\nb", "a\nb", id="octets-removed"),
    ],
)
def test_sanitize_textarea_field_keeps_newlines_and_tabs(value: str, expected: str) -> None:
    assert sanitize_textarea_field(value) == expected


# ---------------------------------------------------------------------- URLs
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("hello world", "http://hello%20world", id="space-encoded-scheme-added"),
        pytest.param("example.com", "http://example.com", id="scheme-added"),
        pytest.param("https://example.com/a b", "https://example.com/a%20b", id="https-kept"),
        pytest.param(
            "http://example.com/?a=1&b=2", "http://example.com/?a=1&b=2", id="ampersand-kept"
        ),
        pytest.param("ftp://example.com/file", "ftp://example.com/file", id="ftp-allowed"),
        pytest.param("mailto:a@b.co", "mailto:a@b.co", id="mailto-allowed"),
        pytest.param("/relative/path", "/relative/path", id="root-relative-path-kept"),
        pytest.param("#section", "#section", id="fragment-kept"),
        pytest.param("?page=2", "?page=2", id="query-kept"),
        pytest.param("index.php?p=1", "index.php?p=1", id="php-file-kept"),
        pytest.param("javascript:alert(1)", "", id="javascript-removed"),
        pytest.param("JavaScript:alert(1)", "", id="javascript-any-case-removed"),
        pytest.param("data:text/html,hi", "", id="data-protocol-removed"),
        pytest.param("", "", id="empty"),
        pytest.param("%0d%0a", "http://", id="only-crlf-escapes-scheme-still-added"),
    ],
)
def test_sanitize_url_encodes_spaces_adds_a_scheme_and_drops_bad_protocols(
    value: str, expected: str
) -> None:
    assert sanitize_url(value) == expected
