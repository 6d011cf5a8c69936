"""The geometry of the admin pages' charts; the templates draw them as inline SVG (no script,
no CDN, every label escaped by Jinja2)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["COLOURS", "Bar", "bar_chart"]

#: outcome -> bar colour
COLOURS: Final = {"hit": "#00a32a", "stale": "#dba617", "miss": "#2271b1", "bypass": "#8c8f94"}
LABEL_WIDTH: Final = 70


@dataclass(frozen=True)
class Bar:
    """One horizontal bar: its label, count, colour and place (in SVG user units)."""

    name: str
    count: int
    colour: str
    y: int
    length: int


def bar_chart(bars: Sequence[tuple[str, int]], width: int = 320, row: int = 28) -> list[Bar]:
    """One bar per ``(name, count)``, in order, scaled so the largest fills the chart's room
    (``width`` less the label and the count); a zero count has no bar."""
    largest = max((count for _, count in bars), default=0) or 1
    room = width - LABEL_WIDTH - 60
    return [
        Bar(
            name=name,
            count=count,
            colour=COLOURS.get(name, "#50575e"),
            y=index * row,
            length=max(1, count * room // largest) if count > 0 else 0,
        )
        for index, (name, count) in enumerate(bars)
    ]
