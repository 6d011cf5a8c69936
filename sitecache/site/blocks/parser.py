"""WordPress's block serialization, parsed: ``<!-- wp:name {"attr": 1} /-->`` and
``<!-- wp:name -->inner<!-- /wp:name -->`` found in a post's text.

Pure (no I/O): `parse_blocks` turns text into `Text` and `BlockNode` values and never raises.
The delimiter grammar is WordPress's (``WP_Block_Parser``): ``<!--``, whitespace, an optional
``/`` (a closer), ``wp:``, an optional ``namespace/`` (``core/`` when absent), a name, an
optional JSON object followed by whitespace, an optional ``/`` (a void block), ``-->``. Like
WordPress, a closer without an opener is dropped and an opener never closed takes the rest
of the text as its inner content. Attributes that are not a JSON object are kept as an error
(`BlockNode.attrs_error`) rather than dropped: the renderer says so instead of rendering.
Nesting deeper than `MAX_DEPTH` is read as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["MAX_DEPTH", "BlockNode", "Node", "Text", "parse_blocks", "strip_blocks"]

MAX_DEPTH: Final = 32
"""Deepest nesting of blocks read as blocks."""

_OPEN: Final = re.compile(
    r"<!--\s+(?P<closer>/)?wp:(?P<namespace>[a-z][a-z0-9_-]*/)?(?P<name>[a-z][a-z0-9_-]*)\s+"
)
_ATTRS_END: Final = re.compile(r"\}\s+(?P<void>/)?-->")
_PLAIN_END: Final = re.compile(r"(?P<void>/)?-->")


@dataclass(frozen=True, slots=True)
class Text:
    """Text between block delimiters (the post's own words)."""

    text: str


@dataclass(frozen=True, slots=True)
class BlockNode:
    """One block: its full name (``core/latest-posts``), its attributes (``{}`` when none were
    written), why they could not be read (``None`` when they could) and its inner nodes."""

    name: str
    attrs: dict[str, Any] = field(default_factory=dict)
    attrs_error: str | None = None
    inner: tuple[Node, ...] = ()


Node = Text | BlockNode


@dataclass(frozen=True, slots=True)
class _Delimiter:
    start: int
    end: int
    name: str
    closer: bool
    void: bool
    attrs: dict[str, Any]
    attrs_error: str | None


def _attributes(source: str) -> tuple[dict[str, Any], str | None]:
    """The attributes written in a delimiter: a JSON object, else ``{}`` and the reason."""
    try:
        value = json.loads(source)
    except (ValueError, RecursionError):
        return {}, "the attributes are not valid JSON"
    if not isinstance(value, dict):
        return {}, "the attributes are not a JSON object"
    return value, None


def _delimiter_at(text: str, match: re.Match[str]) -> _Delimiter | None:
    """The delimiter whose head ``match`` found, or ``None`` when it does not end as one."""
    name = (match["namespace"] or "core/") + match["name"]
    position = match.end()
    attrs: dict[str, Any] = {}
    error: str | None = None
    if text.startswith("{", position):
        tail = _ATTRS_END.search(text, position)
        if tail is None:
            return None
        attrs, error = _attributes(text[position : tail.start() + 1])
    else:
        tail = _PLAIN_END.match(text, position)
        if tail is None:
            return None
    closer = match["closer"] is not None
    return _Delimiter(
        match.start(), tail.end(), name, closer, tail["void"] is not None, attrs, error
    )


def _delimiters(text: str) -> list[_Delimiter]:
    found: list[_Delimiter] = []
    position = 0
    while True:
        start = text.find("<!--", position)
        if start < 0:
            return found
        match = _OPEN.match(text, start)
        delimiter = _delimiter_at(text, match) if match is not None else None
        if delimiter is None:
            position = start + 4
            continue
        found.append(delimiter)
        position = delimiter.end


@dataclass
class _Open:
    delimiter: _Delimiter
    children: list[Node] = field(default_factory=list)


def _append_text(nodes: list[Node], text: str) -> None:
    if not text:
        return
    if nodes and isinstance(nodes[-1], Text):
        nodes[-1] = Text(nodes[-1].text + text)
    else:
        nodes.append(Text(text))


def _node(opened: _Open) -> BlockNode:
    delimiter = opened.delimiter
    return BlockNode(delimiter.name, delimiter.attrs, delimiter.attrs_error, tuple(opened.children))


def parse_blocks(text: str) -> list[Node]:
    """``text`` as a list of text runs and blocks, in order (never raises)."""
    top: list[Node] = []
    stack: list[_Open] = []
    position = 0

    def current() -> list[Node]:
        return stack[-1].children if stack else top

    for delimiter in _delimiters(text):
        _append_text(current(), text[position : delimiter.start])
        position = delimiter.end
        if delimiter.closer:
            names = [opened.delimiter.name for opened in stack]
            if delimiter.name not in names:
                continue  # a closer without an opener is dropped, as WordPress does
            while stack:
                opened = stack.pop()
                current().append(_node(opened))
                if opened.delimiter.name == delimiter.name:
                    break
        elif delimiter.void:
            current().append(BlockNode(delimiter.name, delimiter.attrs, delimiter.attrs_error))
        elif len(stack) >= MAX_DEPTH:
            _append_text(current(), text[delimiter.start : delimiter.end])
        else:
            stack.append(_Open(delimiter))
    _append_text(current(), text[position:])
    while stack:
        opened = stack.pop()
        current().append(_node(opened))
    return top


def _texts(nodes: tuple[Node, ...] | list[Node]) -> list[str]:
    found: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            found.append(node.text)
        else:
            found.extend(_texts(node.inner))
    return found


def strip_blocks(text: str) -> str:
    """``text`` without its block delimiters: the inner text of every block is kept, a void
    block leaves nothing (an excerpt's or a feed's words)."""
    if "<!--" not in text:
        return text
    return "".join(_texts(parse_blocks(text)))
