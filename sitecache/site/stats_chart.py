"""The geometry of the admin pages' charts; the templates draw them as inline SVG (no script,
no CDN, every label escaped by Jinja2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["COLOURS", "WINDOW_MINUTES", "Bar", "Line", "LineChart", "bar_chart", "line_chart"]

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


@dataclass(frozen=True)
class Line:
    """One outcome's line: its name, colour, SVG ``points`` and total."""

    name: str
    colour: str
    points: str
    total: int


@dataclass(frozen=True)
class LineChart:
    """Lines over time, the largest count per bucket, the bucket length and the span shown
    (both in minutes)."""

    lines: list[Line]
    largest: int
    bucket_minutes: int
    width: int
    height: int
    minutes: int = 1440

    @property
    def whole_window(self) -> bool:
        """Whether the chart spans the series' whole window (else: since counting began)."""
        return self.minutes >= WINDOW_MINUTES


#: The series' window, and the shortest span a chart shows (a new site's first hour).
WINDOW_MINUTES: Final = 1440
SHORTEST_SPAN: Final = 60


def line_chart(
    series: Any,
    buckets: int = 48,
    width: int = 480,
    height: int = 160,
    since: int | None = None,
) -> LineChart | None:
    """The ``series`` of ``GET /stats`` (one count per minute per outcome) summed into at most
    ``buckets`` equal spans, as one line per outcome scaled to the largest span's count;
    ``None`` when the API sent no series.

    ``since`` (``GET /stats``'s, when counting began): a site counting for less than the
    window is charted from then on (at least `SHORTEST_SPAN` minutes), so a new site's
    traffic is not a spike at the right edge of 24 empty hours.
    """
    if not isinstance(series, Mapping) or not isinstance(series.get("hit"), list):
        return None
    minutes = len(series["hit"])
    first = 0
    start = series.get("start")
    if isinstance(since, int) and isinstance(start, int):
        first = min(max(0, (since - start) // 60), max(0, minutes - SHORTEST_SPAN))
    shown = minutes - first
    span = max(1, -(-shown // buckets))
    summed: dict[str, list[int]] = {}
    for name in COLOURS:
        counts = [int(value) for value in (series.get(name) or [])[first:]]
        summed[name] = [sum(counts[start : start + span]) for start in range(0, shown, span)]
    largest = max((max(values, default=0) for values in summed.values()), default=0) or 1
    lines = []
    for name, values in summed.items():
        step = width / max(1, len(values) - 1)
        points = " ".join(
            f"{index * step:.1f},{height - value * (height - 4) / largest:.1f}"
            for index, value in enumerate(values)
        )
        lines.append(Line(name, COLOURS[name], points, sum(values)))
    return LineChart(lines, largest, span, width, height, shown)
