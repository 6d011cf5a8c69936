"""Numbers, sizes, durations and help texts in words, as the admin pages show them.

Every function here takes values and returns text (no I/O): ``plural(281, "page")`` is
``"281 pages"``, ``human_bytes(1431801)`` is ``"1.4 MB"``, ``inline_code("`utm_*` ends")``
renders the backticks of a schema description as ``<code>`` (escaping everything else). The
template environment offers each as a filter (`sitecache.templating`).
"""

from __future__ import annotations

import re
from typing import Final

from markupsafe import Markup, escape

__all__ = ["human_bytes", "human_duration", "inline_code", "plural", "ratio_percent"]

#: The units of `human_bytes`, each 1024 times the one before (as WordPress's size_format).
_BYTE_UNITS: Final = ("bytes", "KB", "MB", "GB", "TB", "PB")
#: The units of `human_duration`: name and seconds, largest first.
_DURATION_UNITS: Final = (
    ("year", 365 * 86400),
    ("day", 86400),
    ("hour", 3600),
    ("minute", 60),
    ("second", 1),
)
_CODE: Final = re.compile(r"`([^`\n]+)`")


def plural(count: int, singular: str, many: str | None = None) -> str:
    """``count`` and the noun agreeing with it, thousands grouped: ``"1 page"``,
    ``"0 pages"``, ``"1,204 entries"`` (``many`` when adding an ``s`` is wrong)."""
    noun = singular if count == 1 else (many if many is not None else singular + "s")
    return f"{count:,} {noun}"


def human_bytes(count: int) -> str:
    """A size in the largest unit that keeps it at least 1: ``"512 bytes"``, ``"1 byte"``,
    ``"4.2 MB"`` (one decimal below 10, none above)."""
    if count < 1024:
        return "1 byte" if count == 1 else f"{max(count, 0):,} bytes"
    value = float(count)
    unit = 0
    while value >= 1024 and unit < len(_BYTE_UNITS) - 1:
        value /= 1024
        unit += 1
    shown = f"{value:.1f}" if value < 10 else f"{value:,.0f}"
    return f"{shown.removesuffix('.0')} {_BYTE_UNITS[unit]}"


def human_duration(seconds: float, parts: int = 2) -> str:
    """A span of time in its ``parts`` largest units: ``"1 hour"``, ``"2 days 3 hours"``,
    ``"0 seconds"``."""
    left = max(0, int(seconds))
    words = []
    for name, size in _DURATION_UNITS:
        amount, left = divmod(left, size)
        if amount:
            words.append(plural(amount, name))
        if len(words) == parts:
            break
    return " ".join(words) or "0 seconds"


def ratio_percent(ratio: float) -> str:
    """A ratio from 0 to 1 as a percentage with one decimal: ``"87.5 %"``."""
    return f"{ratio * 100:.1f} %"


def inline_code(text: str) -> Markup:
    """``text`` escaped, its Markdown code spans (`` `x` ``) rendered as ``<code>x</code>``:
    a schema description shown as prose, never as Markdown source."""
    escaped = str(escape(text))
    return Markup(_CODE.sub(r"<code>\1</code>", escaped))  # noqa: S704 - escaped above
