"""One table of string-format cases: a format, a value, whether the value is valid for it.

Each row is checked twice (tests/schema/test_formats.py): by the format's own checker
(``parse_hex_color``, ``is_ip_address``, ``is_uuid``, ``is_email``, ``parse_date``) and by a
``{"type": "string", "format": ...}`` schema, which passes a valid value and answers an invalid
one with the format's own error code and message. A new case is a new row.

Rows follow WordPress's format functions (``rest_parse_hex_color``, ``rest_is_ip_address``,
``wp_is_uuid``, ``is_email`` step by step, ``rest_parse_date``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

JAN_16_1130_UTC: Final = 1484566200
"""2017-01-16T11:30:00Z, the base of WordPress's date test examples."""

V1_UUID: Final = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
V4_UUID: Final = "123e4567-e89b-42d3-a456-426614174000"

#: What a schema answers for a value its format refuses: (code, message, data), the param
#: being ``p``.
FORMAT_ERRORS: Final[dict[str, tuple[str, str, None]]] = {
    "hex-color": ("rest_invalid_hex_color", "Invalid hex color.", None),
    "date-time": ("rest_invalid_date", "Invalid date.", None),
    "email": ("rest_invalid_email", "Invalid email address.", None),
    "ip": ("rest_invalid_param", "p is not a valid IP address.", None),
    "uuid": ("rest_invalid_uuid", "p is not a valid UUID.", None),
}


def utc_timestamp(year: int, month: int, day: int) -> int:
    """The Unix timestamp of midnight UTC on the given day."""
    return int(datetime(year, month, day, tzinfo=UTC).timestamp())


@dataclass(frozen=True, slots=True)
class FormatCase:
    """A value and whether ``format`` accepts it; ``parsed`` is the Unix timestamp a valid
    ``date-time`` parses to, where the row states it."""

    format: str
    value: object
    valid: bool
    name: str
    parsed: int | None = None

    @property
    def id(self) -> str:
        """The test id: the format and the row's name."""
        return f"{self.format}: {self.name}"


CASES: Final[tuple[FormatCase, ...]] = (
    # hex-color
    FormatCase("hex-color", "#fff", True, "3 digits"),
    FormatCase("hex-color", "#FFF", True, "3 digits uppercase"),
    FormatCase("hex-color", "#abcdef", True, "6 digits"),
    FormatCase("hex-color", "#0A0b0C", True, "6 digits mixed case"),
    FormatCase("hex-color", "#fff\n", True, "trailing newline tolerated"),
    FormatCase("hex-color", "#FFFFFF", True, "#FFFFFF"),
    FormatCase("hex-color", "#abc123", True, "#abc123"),
    FormatCase("hex-color", "#ffff", False, "4 digits"),
    FormatCase("hex-color", "#fffff", False, "5 digits"),
    FormatCase("hex-color", "#fffffff", False, "7 digits"),
    FormatCase("hex-color", "#ffffffff", False, "8 digits"),
    FormatCase("hex-color", "fff", False, "missing hash"),
    FormatCase("hex-color", "ffffff", False, "6 digits missing hash"),
    FormatCase("hex-color", "#", False, "hash only"),
    FormatCase("hex-color", "#ab", False, "2 digits"),
    FormatCase("hex-color", "#jkl", False, "not hex"),
    FormatCase("hex-color", "WordPress", False, "word"),
    FormatCase("hex-color", "", False, "empty"),
    FormatCase("hex-color", " #fff", False, "leading space"),
    FormatCase("hex-color", "#fff\n\n", False, "two trailing newlines"),
    FormatCase("hex-color", "#abcd", False, "4 digits (#abcd)"),
    FormatCase("hex-color", "#abcde", False, "5 digits (#abcde)"),
    FormatCase("hex-color", "#abcdef0", False, "7 digits (#abcdef0)"),
    FormatCase("hex-color", "#abcdef01", False, "8 digits (#abcdef01)"),
    # ip
    FormatCase("ip", "127.0.0.1", True, "ipv4 loopback"),
    FormatCase("ip", "0.0.0.0", True, "ipv4 zeros"),  # noqa: S104
    FormatCase("ip", "255.255.255.255", True, "ipv4 max"),
    FormatCase("ip", "01.02.03.004", True, "ipv4 leading zeros"),
    FormatCase("ip", "192.168.1.10", True, "ipv4 private"),
    FormatCase("ip", "::1", True, "ipv6 loopback"),
    FormatCase("ip", "::", True, "ipv6 unspecified"),
    FormatCase("ip", "1::", True, "ipv6 trailing double colon"),
    FormatCase("ip", "fe80::217:f2ff:fe07:ed62", True, "ipv6 link local"),
    FormatCase("ip", "2001:db8:0:0:0:0:0:1", True, "ipv6 eight groups"),
    FormatCase("ip", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", True, "ipv6 four digit groups"),
    FormatCase("ip", "FF01::101", True, "ipv6 uppercase"),
    FormatCase("ip", "::ffff:192.0.2.128", True, "ipv6 with ipv4 tail"),
    FormatCase("ip", "1:2:3:4:5:6:7:8", True, "v6 eight groups"),
    FormatCase("ip", "", False, "empty"),
    FormatCase("ip", "256.0.0.1", False, "ipv4 part over 255"),
    FormatCase("ip", "1.2.3", False, "ipv4 three parts"),
    FormatCase("ip", "1.2.3.4.5", False, "ipv4 five parts"),
    FormatCase("ip", " 1.2.3.4", False, "ipv4 leading space"),
    FormatCase("ip", "1.2.3.4 ", False, "ipv4 trailing space"),
    FormatCase("ip", "a.b.c.d", False, "ipv4 letters"),
    FormatCase("ip", "FF01::101::2", False, "ipv6 two double colons"),
    FormatCase("ip", "12345::", False, "ipv6 five digit group"),
    FormatCase("ip", "1:2:3:4:5:6:7", False, "ipv6 seven groups"),
    FormatCase("ip", "1:2:3:4:5:6:7:8:9", False, "ipv6 nine groups"),
    FormatCase("ip", "g::1", False, "ipv6 non hex"),
    FormatCase("ip", "::ffff:192.0.2", False, "ipv6 short ipv4 tail"),
    FormatCase("ip", "::ffff:192.0.2.256", False, "ipv6 ipv4 tail over 255"),
    FormatCase("ip", "hello", False, "word"),
    # uuid
    FormatCase("uuid", V4_UUID, True, "lowercase v4"),
    FormatCase("uuid", V1_UUID, True, "lowercase v1"),
    FormatCase("uuid", "00000000-0000-0000-0000-000000000000", True, "nil uuid"),
    FormatCase("uuid", "123e4567-e89b-f2d3-c456-426614174000", True, "any version digit"),
    FormatCase("uuid", "123e4567-e89b-12d3-a456-426614174000", True, "hyphenated v1"),
    FormatCase("uuid", V4_UUID.upper(), False, "uppercase rejected"),
    FormatCase("uuid", "123E4567-e89b-42d3-a456-426614174000", False, "one uppercase letter"),
    FormatCase("uuid", "{" + V4_UUID + "}", False, "braces"),
    FormatCase("uuid", V4_UUID.replace("-", ""), False, "no hyphens"),
    FormatCase("uuid", V4_UUID[:-1], False, "too short"),
    FormatCase("uuid", V4_UUID + "0", False, "too long"),
    FormatCase("uuid", "123e4567-e89b-42d3-a456-42661417400g", False, "non hex"),
    FormatCase("uuid", "", False, "empty"),
    FormatCase("uuid", None, False, "null"),
    FormatCase("uuid", 123, False, "int"),
    FormatCase("uuid", "123E4567-E89B-12D3-A456-426614174000", False, "uppercase (v1)"),
    FormatCase("uuid", "{123e4567-e89b-12d3-a456-426614174000}", False, "braces (v1)"),
    FormatCase("uuid", "123e4567e89b12d3a456426614174000", False, "no hyphens (v1)"),
    FormatCase("uuid", "123e4567-e89b-12d3-a456-42661417400", False, "too short (v1)"),
    # email
    FormatCase("email", "a@b.co", True, "six characters"),
    FormatCase("email", "user@example.com", True, "plain"),
    FormatCase("email", "o'neil+tag@example.com", True, "quote and plus in local part"),
    FormatCase("email", "a!#$%&'*+/=?^_`{|}~.-@example.com", True, "every allowed local symbol"),
    FormatCase("email", "First.Last@Sub.Example.COM", True, "mixed case"),
    FormatCase("email", "a@ex-ample.com", True, "inner hyphen in label"),
    FormatCase("email", "a@123.example", True, "digits in label"),
    FormatCase("email", "USER@EXAMPLE.COM", True, "upper case"),
    FormatCase("email", "o'brien+tag@example.com", True, "allowed local characters"),
    FormatCase("email", "user@ex-ample.com", True, "inner hyphen"),
    FormatCase("email", "a@b.c", False, "step 1 shorter than 6"),
    FormatCase("email", "", False, "step 1 empty"),
    FormatCase("email", "@example.com", False, "step 2 at sign at position 0"),
    FormatCase("email", "userexample.com", False, "step 2 no at sign"),
    FormatCase("email", "a b@example.com", False, "step 3 space in local part"),
    FormatCase("email", 'a"b@example.com', False, "step 3 double quote in local part"),
    FormatCase("email", "a(b)@example.com", False, "step 3 parenthesis in local part"),
    FormatCase("email", "jos\u00e9@example.com", False, "step 3 non ascii local part"),
    FormatCase("email", "a@example..com", False, "step 4 double dot in domain"),
    FormatCase("email", "a@.example.com", False, "step 5 domain starts with dot"),
    FormatCase("email", "a@example.com.", False, "step 5 domain ends with dot"),
    FormatCase("email", "a@ example.com", False, "step 5 domain starts with space"),
    FormatCase("email", "a@example.com ", False, "step 5 domain ends with space"),
    FormatCase("email", "user@localhost", False, "step 6 single label"),
    FormatCase("email", "a@exa_mple.com", False, "step 7 underscore in label"),
    FormatCase("email", "a@-example.com", False, "step 7 leading hyphen"),
    FormatCase("email", "a@example-.com", False, "step 7 trailing hyphen"),
    FormatCase("email", "a@b@example.com", False, "step 7 second at sign in domain"),
    FormatCase("email", "a@ex\u00e4mple.com", False, "step 7 internationalized domain"),
    FormatCase("email", "invalid", False, "no @"),
    FormatCase("email", "user@exa..mple.com", False, ".. in domain"),
    FormatCase("email", "user@.example.com", False, "domain starts with ."),
    FormatCase("email", "user@example.com.", False, "domain ends with ."),
    FormatCase("email", "user@-example.com", False, "label starts with -"),
    FormatCase("email", "user@example-.com", False, "label ends with -"),
    FormatCase("email", "user@exam_ple.com", False, "underscore in label"),
    FormatCase("email", "\u00fcser@example.com", False, "non-ASCII local"),
    # date-time
    FormatCase(
        "date-time",
        "2017-01-16T11:30:00-05:30",
        True,
        "wp test offset",
        parsed=JAN_16_1130_UTC + 19800,
    ),
    FormatCase("date-time", "2017-01-16T11:30:00Z", True, "zulu", parsed=JAN_16_1130_UTC),
    FormatCase(
        "date-time", "2017-01-16T11:30:00", True, "no offset is utc", parsed=JAN_16_1130_UTC
    ),
    FormatCase(
        "date-time", "2017-01-16t11:30:00", True, "lowercase t separator", parsed=JAN_16_1130_UTC
    ),
    FormatCase("date-time", "2017-01-16 11:30:00", True, "space separator", parsed=JAN_16_1130_UTC),
    FormatCase(
        "date-time", "2017-01-16T11:30:00.123Z", True, "fraction ignored", parsed=JAN_16_1130_UTC
    ),
    FormatCase(
        "date-time",
        "2017-01-16T11:30:00.5",
        True,
        "fraction without offset",
        parsed=JAN_16_1130_UTC,
    ),
    FormatCase(
        "date-time", "2017-01-16T11:30:00+05", True, "plus hh", parsed=JAN_16_1130_UTC - 18000
    ),
    FormatCase(
        "date-time", "2017-01-16T11:30:00-05", True, "minus hh", parsed=JAN_16_1130_UTC + 18000
    ),
    FormatCase(
        "date-time", "2017-01-16T11:30:00+05:30", True, "plus hh mm", parsed=JAN_16_1130_UTC - 19800
    ),
    FormatCase(
        "date-time",
        "2017-02-30T00:00:00Z",
        True,
        "feb 30 is mar 2",
        parsed=utc_timestamp(2017, 3, 2),
    ),
    FormatCase(
        "date-time", "2016-02-29T00:00:00Z", True, "leap day", parsed=utc_timestamp(2016, 2, 29)
    ),
    FormatCase("date-time", "1969-12-31T23:59:59Z", True, "before the epoch", parsed=-1),
    FormatCase("date-time", "1970-01-01T00:00:00Z", True, "the epoch is 0", parsed=0),
    FormatCase(
        "date-time",
        "2017-01-16T11:30:00+23:59",
        True,
        "offset 23 59",
        parsed=JAN_16_1130_UTC - 86340,
    ),
    FormatCase("date-time", "0000-01-01T00:00:00", True, "year 0000", parsed=-62167219200),
    FormatCase("date-time", "2017-02-30T11:30:00", True, "Feb 30 rolls over"),
    FormatCase("date-time", "1970-01-01T00:00:00", True, "the epoch without offset"),
    FormatCase("date-time", "1970-01-01T05:30:00+05:30", True, "the epoch in India"),
    FormatCase("date-time", "2017-01-16T11:30:00-23", True, "offset -23"),
    FormatCase("date-time", "2017-01-16T11:30:00+0530", False, "offset without colon"),
    FormatCase("date-time", "2017-01-16T11:30:00-5", False, "one digit offset"),
    FormatCase("date-time", "2017-01-16T11:30:00z", False, "lowercase z"),
    FormatCase("date-time", "2017-01-16T11:30", False, "no seconds"),
    FormatCase("date-time", "2017-01-16", False, "date only"),
    FormatCase("date-time", "2017", False, "year only"),
    FormatCase("date-time", "", False, "empty"),
    FormatCase("date-time", "2017-18-01T00:00:00Z", False, "month 18"),
    FormatCase("date-time", "2017-01-16X11:30:00", False, "bad separator"),
    FormatCase("date-time", " 2017-01-16T11:30:00", False, "leading space"),
    FormatCase("date-time", "2017-1-16T11:30:00", False, "one digit month"),
    FormatCase("date-time", "not a date", False, "words"),
    FormatCase("date-time", "2017-18-16T11:30:00", False, "month 18 (2017-18-16T11:30:00)"),
    FormatCase("date-time", "2017-01-16T11:30:00+24:00", False, "offset +24:00"),
    FormatCase("date-time", "2017-01-16T11:30:00+25:00", False, "offset +25:00"),
    FormatCase("date-time", "2017-01-16T11:30:00+99:99", False, "offset +99:99"),
    FormatCase("date-time", "2017-01-16T11:30:00-23:60", False, "offset -23:60"),
    FormatCase("date-time", "2017-01-16T11:30:00+30", False, "offset +30"),
)
