"""Strings for the validating formats: ones each format's check accepts, and near misses.

The valid strings are built from the shapes `sitecache.schema.formats` and
`sitecache.schema.dates` accept (PCRE's ``$`` before a final newline included); the near misses
are filtered through the engine's own format checks (`FORMAT_CHECKS`), so a string announced as
rejected is rejected.
"""

from __future__ import annotations

from typing import Any, Final

from hypothesis import strategies as st

from sitecache.schema import messages
from sitecache.schema.validation import FORMAT_CHECKS

__all__ = ["FORMAT_CODES", "TEXT", "invalid_format_strings", "valid_format_strings"]

Strategy = st.SearchStrategy[Any]

TEXT: Final = st.characters(codec="utf-8")
"""Any code point that UTF-8 (hence JSON and a query string) can carry: no lone surrogates."""

FORMAT_CODES: Final[dict[str, str]] = {
    "hex-color": messages.INVALID_HEX_COLOR,
    "date-time": messages.INVALID_DATE,
    "email": messages.INVALID_EMAIL,
    "ip": messages.INVALID_PARAM,
    "uuid": messages.INVALID_UUID,
}
"""The error code of each format that validates (the others only sanitize)."""

_HEX = "0123456789abcdefABCDEF"
_FINAL_NEWLINE = st.sampled_from(["", "", "", "\n"])  # PCRE's $ matches before a final newline


def _hex_colors() -> Strategy:
    digits = st.sampled_from([3, 6]).flatmap(
        lambda size: st.text(st.sampled_from(_HEX), min_size=size, max_size=size)
    )
    return st.builds(lambda body, end: f"#{body}{end}", digits, _FINAL_NEWLINE)


def _two(low: int, high: int) -> Strategy:
    return st.integers(low, high).map(lambda number: f"{number:02d}")


def _date_times() -> Strategy:
    # Fields roll over as in PHP: month 0 to 12, day 0 to 31, hour 0 to 24, second 0 to 60.
    zone = st.one_of(
        st.just(""),
        st.just("Z"),
        st.builds(
            lambda sign, hours, minutes: f"{sign}{hours}{minutes}",
            st.sampled_from("+-"),
            _two(0, 23),
            st.one_of(st.just(""), _two(0, 59).map(lambda text: ":" + text)),
        ),
    )
    return st.builds(
        lambda y, mo, d, sep, h, mi, s, frac, z, end: (
            f"{y:04d}-{mo}-{d}{sep}{h}:{mi}:{s}{frac}{z}{end}"
        ),
        st.integers(1000, 2999),
        _two(0, 12),
        _two(0, 31),
        st.sampled_from("Tt "),
        _two(0, 24),
        _two(0, 59),
        _two(0, 60),
        st.sampled_from(["", ".5", ".123456"]),
        zone,
        _FINAL_NEWLINE,
    )


_LOCAL_CHARACTERS = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~.-"
)
_LABEL = st.from_regex(r"\A[a-zA-Z0-9]([a-zA-Z0-9-]{0,6}[a-zA-Z0-9])?\Z")


def _emails() -> Strategy:
    return st.builds(
        lambda local, labels: f"{local}@{'.'.join(labels)}",
        st.text(st.sampled_from(_LOCAL_CHARACTERS), min_size=1, max_size=10),
        st.lists(_LABEL, min_size=2, max_size=3),
    ).filter(lambda text: len(text.encode("utf-8")) >= 6)


def _ipv4_with_zeros() -> Strategy:
    # The check's octet is [01]?[0-9][0-9]?: "010" and "001" are valid.
    octet = st.integers(0, 255).flatmap(
        lambda n: st.sampled_from([str(n), f"{n:03d}"] if n < 200 else [str(n)])
    )
    return st.lists(octet, min_size=4, max_size=4).map(".".join)


def _ip_addresses() -> Strategy:
    v6 = st.ip_addresses(v=6).flatmap(
        lambda address: st.sampled_from(
            [str(address), address.exploded, address.compressed.upper()]
        )
    )
    mapped = st.ip_addresses(v=4).map(lambda address: f"::ffff:{address}")
    return st.one_of(st.ip_addresses(v=4).map(str), _ipv4_with_zeros(), v6, mapped)


_VALID: Final[dict[str, Strategy]] = {
    "hex-color": _hex_colors(),
    "date-time": _date_times(),
    "email": _emails(),
    "ip": _ip_addresses(),
    "uuid": st.uuids().map(str),
}

_NEAR_MISSES: Final[dict[str, tuple[str, ...]]] = {
    "hex-color": ("#abcd", "#ab", "abc", "#ggg", "#abc ", " #abc", "#abc\n\n", "#", "fff"),
    "date-time": (
        "2020-13-01T00:00:00",
        "2020-01-32T00:00:00",
        "2020-01-01T25:00:00",
        "2020-01-01T00:60:00",
        "2020-01-01T00:00:61",
        "2020-01-01",
        "2020-01-01T00:00:00+24:00",
        "2020-01-01T00:00:00+0530",
        "20-01-01T00:00:00",
        "2020-01-01X00:00:00",
        "tomorrow",
        "",
    ),
    "email": ("a@b", "ab@c", "@example.org", "a b@example.org", "a@-x.org", "a@x..org", ""),
    "ip": ("256.1.1.1", "1.2.3", "1.2.3.4.5", "::1::", "12345::", "1:2:3:4:5:6:7:8:9", "x", ""),
    "uuid": (
        "123E4567-E89B-42D3-A456-426614174000",
        "123e4567e89b42d3a456426614174000",
        "123e4567-e89b-42d3-a456-42661417400",
        "{123e4567-e89b-42d3-a456-426614174000}",
        "",
    ),
}


def valid_format_strings(name: str) -> Strategy | None:
    """Strings the ``name`` format's check accepts, or ``None`` when that format does not
    validate (``uri``, ``text-field``, ``textarea-field`` and unknown names only sanitize)."""
    return _VALID.get(name)


def invalid_format_strings(name: str) -> Strategy | None:
    """Strings the ``name`` format's check refuses (near misses and random text), or ``None``
    when the format does not validate."""
    check = FORMAT_CHECKS.get(name)
    if check is None:
        return None
    candidates = st.one_of(st.sampled_from(_NEAR_MISSES[name]), st.text(TEXT, max_size=12))
    return candidates.filter(lambda text: check(text, "") is not None)
