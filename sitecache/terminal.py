"""Stored text made safe to print on a terminal (the command line's listings and messages).

Names, titles and URLs come from users (an application password named
``"\\x1b[31mRED\\x1b[0m\\rFAKE"``, an ``app_name`` from the authorize page): printed raw, their
control characters would drive the reader's terminal (colours, cursor moves, a carriage return
that overwrites the line, a title change). `terminal_text` writes each such character as a
Python-style escape instead, as gunicorn's access log does.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["terminal_text"]

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
