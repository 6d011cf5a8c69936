"""Server-side SVG charts for the admin pages (no script, no CDN)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from markupsafe import Markup, escape

__all__ = ["bar_chart"]

#: outcome -> bar colour
COLOURS: Final = {"hit": "#00a32a", "stale": "#dba617", "miss": "#2271b1", "bypass": "#8c8f94"}


def bar_chart(bars: Sequence[tuple[str, int]], width: int = 320, row: int = 28) -> Markup:
    """A horizontal bar chart, one labelled bar per ``(name, count)``, scaled to the largest.

    It scales to its container (``viewBox``), so it fits a 360 px wide screen.
    """
    largest = max((count for _, count in bars), default=0) or 1
    label = 70
    room = width - label - 60
    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {width} {row * len(bars)}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>Requests by cache outcome</title>'
    ]
    for index, (name, count) in enumerate(bars):
        y = index * row
        length = max(1, count * room // largest) if count else 0
        colour = COLOURS.get(name, "#50575e")
        parts.append(
            f'<text x="0" y="{y + 18}" font-size="13">{escape(name)}</text>'
            f'<rect x="{label}" y="{y + 5}" width="{length}" height="{row - 10}" fill="{colour}"/>'
            f'<text x="{label + length + 4}" y="{y + 18}" font-size="13">{count}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
