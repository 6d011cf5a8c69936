"""The README's commands, read from the README itself (tests/test_readme.py and
tests/e2e/test_readme_commands.py run or check every one of them)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
README = REPOSITORY / "README.md"

#: a code span that is a shell command
_COMMAND_SPAN = re.compile(
    r"`((?:[A-Z_]+=\S+ )*(?:\.venv/bin/)?(?:sitecache|make|pip|curl|waitress-serve)\b[^`]*)`"
)


@dataclass(frozen=True)
class Block:
    """A fenced code block: its language, first line number and text."""

    language: str
    line: int
    text: str


def blocks(text: str | None = None) -> list[Block]:
    """Every fenced code block of the README, in order."""
    text = README.read_text(encoding="utf-8") if text is None else text
    found: list[Block] = []
    language: str | None = None
    start = 0
    lines: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            if language is None:
                language, start, lines = line[3:].strip(), number + 1, []
            else:
                found.append(Block(language, start, "\n".join(lines) + "\n"))
                language = None
        elif language is not None:
            lines.append(line)
    return found


def shell_commands(block: Block) -> list[str]:
    """The commands of a ``sh`` block: continuation lines joined, comments dropped."""
    commands: list[str] = []
    pending = ""
    for raw in block.text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        line = _strip_comment(line).strip()
        if line:
            commands.append(line)
    return commands


def inline_commands(text: str | None = None) -> list[str]:
    """The shell commands written in the README's running text (code spans)."""
    text = README.read_text(encoding="utf-8") if text is None else text
    outside = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return [match.group(1) for match in _COMMAND_SPAN.finditer(outside.replace("\n", " "))]


def synopsis_lines(block: Block) -> list[str]:
    """The ``sitecache …`` lines of the command-line synopsis block (descriptions dropped)."""
    lines = []
    for line in block.text.splitlines():
        if line.startswith("sitecache "):
            lines.append(re.split(r"\s{2,}", line.strip())[0])
        elif lines and line.startswith(" ") and line.strip().startswith("["):
            lines[-1] += " " + re.split(r"\s{2,}", line.strip())[0]
    return lines


def _strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (outside quotes)."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] == " "):
            return line[:index]
    return line
