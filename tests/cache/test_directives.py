"""The one ``Cache-Control`` parser (RFC 9111 §5.2), ``CDN-Cache-Control`` (RFC 9213) and HTTP
dates (RFC 9110 §5.6.7), as tables."""

from __future__ import annotations

from email.utils import formatdate
from typing import Any

import pytest

from sitecache.cache.directives import (
    MAX_DELTA_SECONDS,
    parse_cache_control,
    parse_targeted,
    split_list,
)
from sitecache.cache.http_dates import format_http_date, parse_http_date

# (field lines, directives with a valid value, directives present with an invalid one)
CACHE_CONTROL_CASES: list[tuple[list[str], dict[str, Any], set[str]]] = [
    (["max-age=60"], {"max-age": 60}, set()),
    (["MAX-AGE=60, Public"], {"max-age": 60, "public": True}, set()),
    (['max-age="60"'], {"max-age": 60}, set()),
    (["max-age=0060"], {"max-age": 60}, set()),
    (["max-age=99999999999"], {"max-age": MAX_DELTA_SECONDS}, set()),
    # The first occurrence counts, on one line or over several.
    (["max-age=60, max-age=1"], {"max-age": 60}, set()),
    (["max-age=60", "max-age=1", "s-maxage=5"], {"max-age": 60, "s-maxage": 5}, set()),
    (["max-age=-1, max-age=60"], {}, {"max-age"}),
    # Commas and directive names inside a quoted string are one extension's argument.
    (['ext="max-age=60, private", max-age=1'], {"ext": "max-age=60, private", "max-age": 1},
     set()),
    (['ext="a \\"quoted\\" b"'], {"ext": 'a "quoted" b'}, set()),
    # Invalid arguments.
    (["max-age=-1"], {}, {"max-age"}),
    (["max-age=60a"], {}, {"max-age"}),
    (["max-age=6.0"], {}, {"max-age"}),
    (["max-age='60'"], {}, {"max-age"}),
    (["max-age= 60"], {}, {"max-age"}),
    (["max-age"], {}, {"max-age"}),
    (['max-age="60'], {}, {"max-age"}),
    # A name that is not a token is no directive at all.
    (["max-age =60"], {}, set()),
    # Field lists: qualified no-cache and private name fields (lower case).
    (['no-cache="Set-Cookie, X-User"'], {"no-cache": ("set-cookie", "x-user")}, set()),
    (["no-cache, private"], {"no-cache": (), "private": ()}, set()),
    (["max-stale"], {"max-stale": True}, set()),
    (["max-stale=5"], {"max-stale": 5}, set()),
    # Flags take no argument, but one given does not unmake them.
    (["no-store=1"], {"no-store": True}, set()),
    ([", ,", ""], {}, set()),
]  # fmt: skip


@pytest.mark.parametrize(("lines", "values", "invalid"), CACHE_CONTROL_CASES)
def test_cache_control_is_read_as_rfc_9111_says(
    lines: list[str], values: dict[str, Any], invalid: set[str]
) -> None:
    directives = parse_cache_control(lines)
    assert dict(directives.values) == values
    assert directives.invalid == invalid
    for name in invalid:
        assert directives.present(name)
        assert directives.seconds(name) is None


# (field lines, directives, or None when the field is ignored)
TARGETED_CASES: list[tuple[list[str], dict[str, Any] | None]] = [
    (["max-age=60"], {"max-age": 60}),
    (["max-age=60, no-transform"], {"max-age": 60, "no-transform": True}),
    (["max-age=99999999999"], {"max-age": MAX_DELTA_SECONDS}),
    (['no-cache="set-cookie"'], {"no-cache": ("set-cookie",)}),
    # Wrong types: the directive is dropped.
    (['max-age="60"'], {}),
    (["max-age=6.5"], {}),
    (["max-age=-6"], {}),
    (["no-store=?0"], {}),
    # Not a Structured Fields dictionary: the whole field is ignored.
    (["max-age=60, &&&&"], None),
    (["MAX-AGE=60"], None),
    ([], None),
]


@pytest.mark.parametrize(("lines", "values"), TARGETED_CASES)
def test_cdn_cache_control_is_a_structured_fields_dictionary(
    lines: list[str], values: dict[str, Any] | None
) -> None:
    directives = parse_targeted(lines)
    if values is None:
        assert directives is None
    else:
        assert directives is not None
        assert dict(directives.values) == values


def test_list_items_are_split_outside_quoted_strings() -> None:
    assert split_list(' a , "b, c" ,,d="e\\",f" ') == ["a", '"b, c"', 'd="e\\",f"']


AUG_18_2050 = 2544400878.0

# (value, the time it names, or None when it is not an HTTP-date)
DATE_CASES: list[tuple[str, float | None]] = [
    ("Thu, 18 Aug 2050 02:01:18 GMT", AUG_18_2050),
    ("THU, 18 AUG 2050 02:01:18 gmt", AUG_18_2050),
    ("Thursday, 18-Aug-50 02:01:18 GMT", AUG_18_2050),
    ("Thu Aug 18 02:01:18 2050", AUG_18_2050),
    ("Thu Aug  8 02:01:18 2050", AUG_18_2050 - 10 * 86400),
    ("Tue, 19 Jan 2038 03:14:08 GMT", 2**31),
    ("Sat, 20 Nov 2286 17:46:39 GMT", 9999999999.0),
    ("Thu, 18 Aug 2050 02:01:18 UTC", None),
    ("Thu, 18 Aug 2050 02:01:18 AEST", None),
    ("Thu, 18 Aug 50 02:01:18 GMT", None),
    ("Thu 18 Aug 2050 02:01:18 GMT", None),
    ("Thu, 18  Aug  2050 02:01:18 GMT", None),
    ("Thu, 18-Aug-2050 02:01:18 GMT", None),
    ("Thu, 18 Aug 2050 02.01.18 GMT", None),
    ("Thu, 18 Aug 2050 2:01:18 GMT", None),
    ("Thu, 31 Feb 2050 02:01:18 GMT", None),
    ("0", None),
    ("", None),
]


@pytest.mark.parametrize(("value", "expected"), DATE_CASES)
def test_http_dates_are_read_strictly(value: str, expected: float | None) -> None:
    assert parse_http_date(value, now=1_800_000_000.0) == expected


def test_a_two_digit_year_more_than_50_years_ahead_is_of_the_century_before() -> None:
    assert parse_http_date("Friday, 18-Aug-89 02:01:18 GMT", now=1_800_000_000.0) == (
        parse_http_date("Fri, 18 Aug 1989 02:01:18 GMT")
    )


@pytest.mark.parametrize(
    "stamp",
    [0.0, 784111777.0, 784111777.999, 1_800_000_000.5, 4_102_444_799.9, 951_782_400.25],
)
def test_http_dates_are_written_as_imf_fixdates_of_the_whole_second(stamp: float) -> None:
    text = format_http_date(stamp)
    assert text == formatdate(int(stamp), usegmt=True)
    assert parse_http_date(text) == float(int(stamp))


def test_the_formatted_date_follows_the_clock_from_one_second_to_the_next() -> None:
    # The last second formatted is remembered: the next second must not reuse it.
    assert format_http_date(784111777.2) == "Sun, 06 Nov 1994 08:49:37 GMT"
    assert format_http_date(784111777.9) == "Sun, 06 Nov 1994 08:49:37 GMT"
    assert format_http_date(784111778.0) == "Sun, 06 Nov 1994 08:49:38 GMT"
    assert format_http_date(784111777.5) == "Sun, 06 Nov 1994 08:49:37 GMT"
