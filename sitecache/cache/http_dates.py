"""HTTP dates (RFC 9110 §5.6.7), read strictly: what ``Date``, ``Expires`` and
``Last-Modified`` mean to the cache.

A recipient must accept the three formats HTTP has used: the IMF-fixdate
(``Sun, 06 Nov 1994 08:49:37 GMT``), the obsolete RFC 850 form (``Sunday, 06-Nov-94 08:49:37
GMT``, its two-digit year read as the nearest past or less than 50 years ahead) and C's
``asctime`` form (``Sun Nov  6 08:49:37 1994``). Names of days, months and the zone are matched
without regard to case; anything else (another zone, a two-digit year in the fixed format, a
missing comma, extra spaces, a one-digit hour, periods for colons) is not a date, and
`parse_http_date` answers ``None``: an ``Expires`` that is not a date means "already expired"
(RFC 9111 §5.3), a ``Date`` that is not one is replaced by the time the response arrived.
Pure: no I/O.
"""

from __future__ import annotations

import calendar
import math
import re
import time
from typing import Final

__all__ = ["format_http_date", "parse_http_date"]

_DAYS: Final = "mon|tue|wed|thu|fri|sat|sun"
_LONG_DAYS: Final = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS: Final = (
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
)
_MONTH: Final = "|".join(_MONTHS)
_TIME: Final = r"(\d\d):(\d\d):(\d\d)"

#: ``Sun, 06 Nov 1994 08:49:37 GMT``
_IMF_FIXDATE: Final = re.compile(
    rf"(?:{_DAYS}), (\d\d) ({_MONTH}) (\d{{4}}) {_TIME} gmt", re.IGNORECASE | re.ASCII
)
#: ``Sunday, 06-Nov-94 08:49:37 GMT``
_RFC850: Final = re.compile(
    rf"(?:{_LONG_DAYS}), (\d\d)-({_MONTH})-(\d\d) {_TIME} gmt", re.IGNORECASE | re.ASCII
)
#: ``Sun Nov  6 08:49:37 1994``
_ASCTIME: Final = re.compile(
    rf"(?:{_DAYS}) ({_MONTH}) ( \d|\d\d) {_TIME} (\d{{4}})", re.IGNORECASE | re.ASCII
)


def parse_http_date(value: str, now: float | None = None) -> float | None:
    """The Unix time an HTTP-date names, or ``None`` when ``value`` is not one.

    ``now`` (default: the clock) places an RFC 850 two-digit year: the year of that century
    closest to now, unless it is more than 50 years ahead (then the century before).
    """
    text = value.strip()
    match = _IMF_FIXDATE.fullmatch(text)
    if match:
        day, month, year, hour, minute, second = match.groups()
        return _timestamp(int(year), month, int(day), hour, minute, second)
    match = _RFC850.fullmatch(text)
    if match:
        day, month, short_year, hour, minute, second = match.groups()
        current = time.gmtime(time.time() if now is None else now).tm_year
        year = current - current % 100 + int(short_year)
        if year > current + 50:
            year -= 100
        return _timestamp(year, month, int(day), hour, minute, second)
    match = _ASCTIME.fullmatch(text)
    if match:
        month, day, hour, minute, second, year = match.groups()
        return _timestamp(int(year), month, int(day), hour, minute, second)
    return None


def _timestamp(
    year: int, month: str, day: int, hour: str, minute: str, second: str
) -> float | None:
    """The Unix time of these calendar fields (UTC), or ``None`` for an impossible one."""
    number = _MONTHS.index(month.lower()) + 1
    hours, minutes, seconds = int(hour), int(minute), int(second)
    if hours > 23 or minutes > 59 or seconds > 60 or year < 1:
        return None
    if not 1 <= day <= calendar.monthrange(year, number)[1]:
        return None
    return float(calendar.timegm((year, number, day, hours, minutes, seconds, 0, 0, 0)))


_WEEKDAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTH_NAMES: Final = tuple(month.capitalize() for month in _MONTHS)
#: The last second formatted and its text (a store formats the time it arrived: misses in the
#: same second share one).
_formatted: tuple[int, str] = (-1, "")


def format_http_date(timestamp: float) -> str:
    """``timestamp`` as an IMF-fixdate (its whole second, as ``Last-Modified`` sends it)."""
    global _formatted  # a one-item memo, replaced whole (thread-safe)
    second = math.floor(timestamp)
    last, text = _formatted
    if second != last:
        moment = time.gmtime(second)
        text = (
            f"{_WEEKDAYS[moment.tm_wday]}, {moment.tm_mday:02d} "
            f"{_MONTH_NAMES[moment.tm_mon - 1]} {moment.tm_year:04d} "
            f"{moment.tm_hour:02d}:{moment.tm_min:02d}:{moment.tm_sec:02d} GMT"
        )
        _formatted = (second, text)
    return text
