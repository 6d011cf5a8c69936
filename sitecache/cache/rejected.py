"""``rejected_uris``: the administrator's path patterns, compiled once, matched on a total budget.

Patterns are regular expressions (Python ``re`` syntax through the `regex` package, for its
matching time bound). Every pattern that can be joined without changing its meaning (no
backreference, no inline flag applying to the whole pattern) is joined into one alternation, so
a path costs one search however many patterns there are; the others are searched one by one.
All searches of one path share one time budget (`TOTAL_BUDGET`): a path that exhausts it is
rejected (fail closed: an uncached page is always correct). The list's combined size is bounded
by the settings (`MAX_TOTAL_LENGTH`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Final

import regex

__all__ = ["MAX_TOTAL_LENGTH", "TOTAL_BUDGET", "RejectedUris", "compile_rejected_uri"]

#: Seconds all the patterns together may spend on one path.
TOTAL_BUDGET: Final = 0.05
#: Characters all the patterns together may hold.
MAX_TOTAL_LENGTH: Final = 10_000

#: Constructs whose meaning changes inside an alternation of other patterns: numbered or named
#: backreferences and inline flags (``(?i)`` applies to the whole expression).
_NOT_JOINABLE: Final = regex.compile(r"\\[1-9]|\\g<|\(\?P=|\(\?[aiLmsux]+\)|\(\?[aiLmsux]*-")


def compile_rejected_uri(pattern: str) -> regex.Pattern[str]:
    """One ``rejected_uris`` entry, compiled alone (Python ``re`` syntax).

    Raises:
        regex.error: the pattern is not a valid regular expression.
    """
    return regex.compile(pattern, flags=regex.VERSION0)


class RejectedUris:
    """The compiled ``rejected_uris`` (see the module docstring).

    Args:
        patterns: the setting's list (each already checked to compile).
        budget: seconds all searches of one path may take together.
    """

    def __init__(self, patterns: Sequence[str], budget: float = TOTAL_BUDGET) -> None:
        self.patterns = tuple(patterns)
        self.budget = budget
        joinable = [p for p in patterns if _NOT_JOINABLE.search(p) is None]
        separate = [p for p in patterns if _NOT_JOINABLE.search(p) is not None]
        self.joined: regex.Pattern[str] | None = None
        if joinable:
            try:
                self.joined = compile_rejected_uri("|".join(f"(?:{p})" for p in joinable))
            except regex.error:  # a pattern valid alone that does not join: keep it apart
                separate = list(patterns)
        self.separate = tuple(compile_rejected_uri(p) for p in separate)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def matches(self, path: str) -> bool:
        """Whether ``path`` is rejected: a pattern matches, or the budget ran out."""
        if not self.patterns:
            return False
        deadline = time.monotonic() + self.budget
        searches = ([self.joined] if self.joined is not None else []) + list(self.separate)
        try:
            for pattern in searches:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                if pattern.search(path, timeout=remaining) is not None:
                    return True
        except TimeoutError:
            return True  # SECURITY: fail closed: a path the patterns cannot judge is not stored
        return False
