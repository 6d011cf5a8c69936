"""What every ``sitecache`` command prints: lines and tables on standard output, its user-made
text (names, titles, URLs) escaped by `sitecache.terminal.terminal_text`, and the one-line
failures on standard error."""

from __future__ import annotations

import sys

from sitecache.schema.dates import format_timestamp
from sitecache.terminal import terminal_text

__all__ = ["date_text", "fail", "print_table", "say", "storage_failed", "terminal_text"]


def say(line: str) -> None:
    """Print one line on standard output, shown escaped by `terminal_text`: a stored string
    never drives the reader's terminal."""
    print(terminal_text(line))


def fail(message: str) -> int:
    """Print one line on standard error; the exit status of an expected failure (1)."""
    print(f"sitecache: {terminal_text(message)}", file=sys.stderr)
    return 1


def storage_failed(exc: Exception) -> int:
    """Say on one line that the cache storage failed; the exit status for it (1, whichever
    command, and whether or not it runs on the site's application)."""
    print(f"sitecache: the cache storage failed: {terminal_text(exc)}", file=sys.stderr)
    return 1


def date_text(timestamp: int | None) -> str:
    """A stored Unix time as ISO 8601 UTC (``2026-01-02T03:04:05Z``); "" for none."""
    return "" if timestamp is None else format_timestamp(timestamp).replace(" ", "T") + "Z"


def print_table(rows: list[dict[str, object]], columns: list[str]) -> None:
    """Rows as aligned columns under upper-case headings, every cell through `terminal_text`."""
    cells = [[column.upper() for column in columns]]
    cells += [
        [terminal_text(row[c]) if row[c] is not None else "" for c in columns] for row in rows
    ]
    widths = [max(len(line[index]) for line in cells) for index in range(len(columns))]
    for line in cells:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        )
