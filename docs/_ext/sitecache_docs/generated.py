"""What a generator answers, and the Markdown helpers they share."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

#: what a cell without a value shows
NONE: Final = "\N{EN DASH}"


@dataclass
class Generated:
    """A generated Markdown section and the drifts found while writing it (each one fails the
    build)."""

    text: str
    problems: list[str] = field(default_factory=list)


def cell(text: object) -> str:
    """A table cell: pipes escaped, on one line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown (GFM) table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def code(text: object) -> str:
    """``text`` as a code span (backticks inside doubled around)."""
    value = str(text)
    return f"`` {value} ``" if "`" in value else f"`{value}`"
