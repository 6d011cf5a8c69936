"""Stored text made safe to print on a terminal (the command line's listings and messages).

Names, titles and URLs come from users (an application password named
``"\\x1b[31mRED\\x1b[0m\\rFAKE"``, an ``app_name`` from the authorize page): printed raw, their
control characters would drive the reader's terminal (colours, cursor moves, a carriage return
that overwrites the line, a title change). `terminal_text` writes each such character as a
Python-style escape instead, as gunicorn's access log does.

`user_terminal` finds the terminal a person ran a command from, for secrets shown once that
must not land in a log: ``sitecache serve``'s standard output becomes the server's access log.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, TextIO

__all__ = ["terminal_text", "user_terminal"]

#: The controlling terminal of the process (POSIX).
CONTROLLING_TERMINAL: Final = "/dev/tty"

_UNSAFE: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f"  # C0 controls, DEL, C1 controls (U+009B is a CSI on some terminals)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional controls (reorder the line)
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff]"  # lone surrogates (cannot even be encoded)
)
_SHORT: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    point = ord(character)
    return _SHORT.get(character) or (f"\\x{point:02x}" if point <= 0xFF else f"\\u{point:04x}")


def terminal_text(value: object) -> str:
    """``str(value)`` with every character that could act on a terminal rather than show (C0
    and C1 controls including tab and newline, DEL, bidirectional controls, line and paragraph
    separators, lone surrogates) written as ``\\t``, ``\\n``, ``\\r``, ``\\xNN`` or ``\\uNNNN``;
    every other character, backslash included, unchanged. The result is one line."""
    return _UNSAFE.sub(_escape, str(value))


@contextmanager
def user_terminal() -> Iterator[TextIO | None]:
    """The terminal the command was run from: standard output when it is one, else the
    process's controlling terminal; ``None`` when there is none (a service manager, a
    container, output sent to a file or a pipe): then a secret must not be written at all."""
    if sys.stdout.isatty():
        yield sys.stdout
        return
    try:
        terminal = open(CONTROLLING_TERMINAL, "w", encoding="utf-8")  # noqa: SIM115
    except OSError:  # no controlling terminal
        yield None
        return
    with terminal:
        yield terminal
