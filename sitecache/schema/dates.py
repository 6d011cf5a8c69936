"""RFC 3339 dates: parsing to a Unix timestamp and deriving local and UTC wall times.

Mirrors ``rest_parse_date`` (a strict shape check, then PHP ``strtotime`` arithmetic, where
out-of-range days roll over: February 30 is March 2) and ``rest_get_date_with_gmt``. The
site's timezone is passed in, so this module stays free of I/O.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo

from sitecache.schema import php

__all__ = ["format_timestamp", "get_date_with_gmt", "parse_date"]

_DATE_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?"
    r"(Z|[+-]\d{2}(?::\d{2})?)?$",
    re.ASCII,
)
_FORCE_UTC_OFFSET = re.compile(r"[+-]\d+:?\d+$", re.ASCII)
_HAS_OFFSET = re.compile(r"(Z|[+-]\d{2}(:\d{2})?)$", re.ASCII)
_SECONDS_PER_DAY = 86400


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, day may overflow)."""
    year -= month <= 2
    era = year // 400  # Python's // already floors (the C original corrects truncation)
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + (3 if month_index < 10 else -9)
    return year_of_era + era * 400 + (month <= 2), month, day


def format_timestamp(timestamp: int) -> str:
    """PHP ``gmdate('Y-m-d H:i:s', timestamp)``."""
    days, seconds = divmod(timestamp, _SECONDS_PER_DAY)
    year, month, day = _civil_from_days(days)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{year:04d}-{month:02d}-{day:02d} {hours:02d}:{minutes:02d}:{secs:02d}"


def _offset_seconds(zone: str) -> int:
    if zone in ("", "Z"):
        return 0
    sign = -1 if zone[0] == "-" else 1
    hours = int(zone[1:3])
    minutes = int(zone[4:6]) if len(zone) > 3 else 0
    return sign * (hours * 3600 + minutes * 60)


def parse_date(date: object, force_utc: bool = False) -> int | bool:
    """The Unix timestamp of an RFC 3339 date-time, or ``False``.

    Accepts ``YYYY-MM-DD``, ``T``/``t``/space, ``hh:mm:ss``, an optional fraction (ignored) and an
    optional ``Z``, ``±hh`` or ``±hh:mm`` offset up to ±23:59; a date without one is UTC. Fields
    roll over as in PHP (day 0 to 31, month 0 to 12, hour up to 24, second up to 60). With
    ``force_utc`` the
    trailing offset is replaced by ``+00:00`` first (which damages a date-only string, so it fails).
    """
    if not isinstance(date, str):
        if date is None or not php.is_scalar(date):
            return False
        date = php.to_php_string(date)
    if force_utc:
        date = _FORCE_UTC_OFFSET.sub("+00:00", date, count=1)
    match = _DATE_TIME.search(date)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    if month > 12 or day > 31 or hour > 24 or minute > 59 or second > 60:
        return False
    zone = match.group(7) or ""
    if len(zone) > 1 and (int(zone[1:3]) > 23 or int(zone[4:6] or 0) > 59):
        return False  # an offset outside ±23:59 is no time zone
    if month == 0:
        year, month = year - 1, 12
    days = _days_from_civil(year, month, 1) + day - 1
    timestamp = days * _SECONDS_PER_DAY + hour * 3600 + minute * 60 + second
    return timestamp - _offset_seconds(zone)


def _wall_time(moment: datetime) -> str:
    """``Y-m-d H:i:s`` with a year of at least four digits, as PHP writes it (``strftime``'s
    ``%Y`` writes the year 999 as ``999``, which no date-time check accepts)."""
    return moment.replace(tzinfo=None).isoformat(sep=" ", timespec="seconds")


def get_date_with_gmt(
    date: object, is_utc: bool = False, *, timezone: tzinfo = UTC
) -> tuple[str, str] | None:
    """``(local, gmt)`` wall times formatted ``Y-m-d H:i:s``, or ``None`` when parsing fails.

    With no offset in the string and ``is_utc`` false, the time is local to ``timezone`` (the
    site's timezone; UTC by default) and UTC is derived from it; otherwise the parsed instant is
    UTC and the local time is derived.
    """
    text = date if isinstance(date, str) else php.to_php_string(date)
    has_offset = _HAS_OFFSET.search(text) is not None
    timestamp = parse_date(text)
    if timestamp is False or isinstance(timestamp, bool):
        return None
    wall = format_timestamp(timestamp)
    if timezone is UTC:
        return wall, wall
    try:
        if not is_utc and not has_offset:
            local = datetime.strptime(wall, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone)
            return wall, _wall_time(local.astimezone(UTC))
        instant = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=timestamp)
        return _wall_time(instant.astimezone(timezone)), wall
    except (ValueError, OverflowError):
        # Outside the years 1 to 9999 that datetime can convert in a non-UTC zone.
        return None
