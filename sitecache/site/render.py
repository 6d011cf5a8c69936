"""Post and comment text as HTML: escaped, paragraphs from blank lines, line breaks kept.

Post content and comments are stored as plain text (a deliberate difference from WordPress,
which stores HTML): every character a writer types is escaped, so no stored text can run
script in a reader's browser.
"""

from __future__ import annotations

import re
from typing import Final

from markupsafe import Markup, escape

__all__ = ["excerpt_text", "paragraphs"]

_BLANK_LINES: Final = re.compile(r"\n\s*\n")
EXCERPT_WORDS: Final = 55


def paragraphs(text: str) -> Markup:
    """``text`` as escaped ``<p>`` paragraphs (a single newline becomes ``<br>``)."""
    blocks = [block.strip() for block in _BLANK_LINES.split(text.replace("\r\n", "\n"))]
    return Markup("\n").join(
        Markup("<p>{}</p>").format(
            Markup("<br>\n").join(escape(line) for line in block.split("\n"))
        )
        for block in blocks
        if block
    )


def excerpt_text(excerpt: str, content: str, words: int = EXCERPT_WORDS) -> str:
    """The excerpt, or else the first ``words`` words of the content with ``…`` when cut."""
    if excerpt.strip():
        return excerpt.strip()
    parts = content.split()
    if len(parts) <= words:
        return " ".join(parts)
    return " ".join(parts[:words]) + " [\u2026]"
