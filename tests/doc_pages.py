"""The documentation's pages (docs/**/*.md) and the README, read as a reader reads them: their
fenced code blocks and the commands written in their running text (tests/docs and
tests/e2e/test_docs_commands.py run or check every one)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
DOCS = REPOSITORY / "docs"

#: a code span that is a shell command
_COMMAND_SPAN = re.compile(
    r"`((?:[A-Z_]+=\S+ )*(?:\.venv/bin/)?(?:sitecache|make|pip|curl|waitress-serve)\b[^`]*)`"
)


def pages() -> list[Path]:
    """The README and every page of the documentation site, in a stable order."""
    found = sorted(path for path in DOCS.rglob("*.md") if "_build" not in path.parts)
    return [REPOSITORY / "README.md", *found]


def page(name: str) -> Path:
    """The page at ``name`` under docs/ (``howto/several-nodes.md``)."""
    return DOCS / name


def name_of(path: Path) -> str:
    """``path`` relative to the repository (``docs/howto/tuning.md``)."""
    return path.relative_to(REPOSITORY).as_posix()


@dataclass(frozen=True)
class Block:
    """A fenced code block: its page, language, first line number and text."""

    path: Path
    language: str
    line: int
    text: str

    @property
    def where(self) -> str:
        """``page:line``."""
        return f"{name_of(self.path)}:{self.line}"


def blocks(path: Path | None = None) -> list[Block]:
    """Every fenced code block of one page, or of every page, in order."""
    if path is None:
        return [block for each in pages() for block in blocks(each)]
    found: list[Block] = []
    language: str | None = None
    start = 0
    lines: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("```"):
            if language is None:
                language, start, lines = line[3:].strip(), number + 1, []
            else:
                found.append(Block(path, language, start, "\n".join(lines) + "\n"))
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


def inline_commands(path: Path | None = None) -> list[str]:
    """The shell commands written in the running text (code spans) of one page or all."""
    if path is None:
        return [command for each in pages() for command in inline_commands(each)]
    outside = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [match.group(1) for match in _COMMAND_SPAN.finditer(outside.replace("\n", " "))]


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
