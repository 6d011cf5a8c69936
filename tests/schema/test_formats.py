"""String formats and their helpers: colours, IP addresses, UUIDs, e-mail, dates, text, URLs.

Which values each format accepts is one table (`tests.schema.format_cases`), checked through
each format's checker and through a schema; the tests below it cover what the table does not
(sanitizers, dates converted between timezones, ``is_uuid``'s version).

Rows follow WordPress's schema functions and §4 (the notes on
``sanitize_text_field`` and ``uri``); ``is_uuid``'s ``version`` argument follows WordPress's
``wp_is_uuid``, which the engine mirrors.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sitecache.errors import RestError
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
    validate_value_from_schema,
)
from tests.schema.format_cases import (
    CASES,
    FORMAT_ERRORS,
    JAN_16_1130_UTC,
    V1_UUID,
    V4_UUID,
    FormatCase,
)

INDIA = timezone(timedelta(hours=5, minutes=30))
NEW_YORK = ZoneInfo("America/New_York")

#: The checker of each format: what it returns for a valid value, ``False`` for another.
CHECKERS: dict[str, Callable[[Any], object]] = {
    "hex-color": parse_hex_color,
    "ip": is_ip_address,
    "uuid": is_uuid,
    "email": is_email,
    "date-time": parse_date,
}


# ---------------------------------------------------------------------- the table of cases
def test_the_table_covers_every_checked_format_both_ways() -> None:
    assert {(case.format, case.valid) for case in CASES} == {
        (name, valid) for name in CHECKERS for valid in (True, False)
    }
    assert set(FORMAT_ERRORS) == set(CHECKERS)
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_each_format_checker_accepts_a_valid_value_and_refuses_another(case: FormatCase) -> None:
    result = CHECKERS[case.format](case.value)
    if not case.valid:
        assert result is False
    elif case.format == "uuid":
        assert result is True
    elif case.format == "date-time":
        assert type(result) is int  # the Unix timestamp
        assert case.parsed is None or result == case.parsed
    else:
        assert result == case.value  # returned unchanged


@pytest.mark.parametrize(
    "case", [case for case in CASES if isinstance(case.value, str)], ids=lambda case: case.id
)
def test_a_string_schema_with_the_format_passes_or_answers_its_own_error(
    case: FormatCase,
) -> None:
    result = validate_value_from_schema(case.value, {"type": "string", "format": case.format}, "p")
    if case.valid:
        assert result is True
    else:
        assert isinstance(result, RestError)
        assert (result.code, result.message, result.data) == FORMAT_ERRORS[case.format]


# ---------------------------------------------------------------------- hex colours
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


# ---------------------------------------------------------------------- UUIDs
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


# ---------------------------------------------------------------------- parse_date
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
