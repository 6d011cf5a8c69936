"""Dates for people: PHP ``date()`` format letters, as the ``date_format`` option holds them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Final

__all__ = ["format_php_date", "rfc3339_local"]

_LETTERS: Final[Mapping[str, Callable[[datetime], str]]] = {
    "d": lambda moment: f"{moment.day:02d}",
    "j": lambda moment: str(moment.day),
    "D": lambda moment: moment.strftime("%a"),
    "l": lambda moment: moment.strftime("%A"),
    "N": lambda moment: str(moment.isoweekday()),
    "m": lambda moment: f"{moment.month:02d}",
    "n": lambda moment: str(moment.month),
    "F": lambda moment: moment.strftime("%B"),
    "M": lambda moment: moment.strftime("%b"),
    "Y": lambda moment: f"{moment.year:04d}",
    "y": lambda moment: f"{moment.year % 100:02d}",
    "a": lambda moment: "am" if moment.hour < 12 else "pm",
    "A": lambda moment: "AM" if moment.hour < 12 else "PM",
    "g": lambda moment: str(moment.hour % 12 or 12),
    "h": lambda moment: f"{moment.hour % 12 or 12:02d}",
    "G": lambda moment: str(moment.hour),
    "H": lambda moment: f"{moment.hour:02d}",
    "i": lambda moment: f"{moment.minute:02d}",
    "s": lambda moment: f"{moment.second:02d}",
    "T": lambda moment: moment.strftime("%Z"),
    "c": lambda moment: moment.isoformat(timespec="seconds"),
    "r": lambda moment: moment.strftime("%a, %d %b %Y %H:%M:%S %z"),
    "U": lambda moment: str(int(moment.timestamp())),
}


def format_php_date(moment: datetime, fmt: str) -> str:
    """``moment`` written with PHP ``date()`` letters (a backslash escapes the next
    character; unknown letters stand for themselves)."""
    out: list[str] = []
    escaped = False
    for char in fmt:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            writer = _LETTERS.get(char)
            out.append(writer(moment) if writer else char)
    return "".join(out)


def rfc3339_local(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` without an offset (the REST ``date`` fields); the year has at
    least four digits, as PHP's ``Y`` writes it (``strftime("%Y")`` writes ``999``)."""
    return moment.replace(tzinfo=None, microsecond=0).isoformat()
