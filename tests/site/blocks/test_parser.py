"""WordPress's block serialization parsed from post text (`sitecache.site.blocks.parser`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitecache.site.blocks import BlockNode, Text, parse_blocks, strip_blocks
from sitecache.site.blocks.parser import MAX_DEPTH, Node

CASES: list[tuple[str, list[Node]]] = [
    ("plain text", [Text("plain text")]),
    (
        '<!-- wp:latest-posts {"postsToShow":3} /-->',
        [BlockNode("core/latest-posts", {"postsToShow": 3})],
    ),
    ("<!-- wp:search /-->", [BlockNode("core/search")]),
    ("a<!-- wp:my-plugin/box /-->b", [Text("a"), BlockNode("my-plugin/box"), Text("b")]),
    (
        "<!-- wp:paragraph -->Hi<!-- /wp:paragraph -->",
        [BlockNode("core/paragraph", inner=(Text("Hi"),))],
    ),
    (
        "<!-- wp:group --><!-- wp:search /--><!-- /wp:group -->",
        [BlockNode("core/group", inner=(BlockNode("core/search"),))],
    ),
    # An opener never closed takes the rest of the text.
    ("<!-- wp:group -->rest", [BlockNode("core/group", inner=(Text("rest"),))]),
    # A closer without an opener is dropped.
    ("a<!-- /wp:group -->b", [Text("ab")]),
    # Not delimiters: no space after <!--, an upper-case name, no end.
    ("<!--wp:search /-->", [Text("<!--wp:search /-->")]),
    ("<!-- wp:Search /-->", [Text("<!-- wp:Search /-->")]),
    ("<!-- wp:search {", [Text("<!-- wp:search {")]),
    ("<!-- an ordinary comment -->", [Text("<!-- an ordinary comment -->")]),
    # Attributes that are not a JSON object are an error kept on the block.
    (
        "<!-- wp:search {nope} /-->",
        [BlockNode("core/search", attrs_error="the attributes are not valid JSON")],
    ),
    (
        '<!-- wp:search {"a": [1, 2} /-->',
        [BlockNode("core/search", attrs_error="the attributes are not valid JSON")],
    ),
    # A "-->" inside a JSON string does not end the delimiter (WordPress's grammar).
    (
        '<!-- wp:search {"label":"a --> b"} /-->',
        [BlockNode("core/search", {"label": "a --> b"})],
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_block_delimiters_are_read_as_wordpress_reads_them(text: str, expected: list[Any]) -> None:
    assert parse_blocks(text) == expected


def test_nesting_deeper_than_the_limit_is_read_as_text() -> None:
    text = "<!-- wp:group -->" * (MAX_DEPTH + 1) + "x"
    node = parse_blocks(text)[0]
    for _ in range(MAX_DEPTH - 1):
        assert isinstance(node, BlockNode)
        node = node.inner[0]
    assert isinstance(node, BlockNode)
    assert node.inner == (Text("<!-- wp:group -->x"),)


def test_stripping_blocks_keeps_inner_words_and_drops_void_blocks() -> None:
    text = 'One <!-- wp:latest-posts {"postsToShow":2} /-->two <!-- wp:p -->three<!-- /wp:p -->'
    assert strip_blocks(text) == "One two three"


delimiter_pieces = st.sampled_from(
    [
        "<!-- ", " -->", " /-->", "wp:", "/wp:", "core/", "latest-posts", "search", "{", "}",
        '"postsToShow":', '"<script>"', "3", " ", "\n", "<b>", "&", "--", "-->", "<!--",
    ]
)  # fmt: skip


@given(st.lists(st.one_of(delimiter_pieces, st.text(max_size=5)), max_size=40).map("".join))
def test_parsing_never_raises_and_keeps_every_word(text: str) -> None:
    nodes = parse_blocks(text)
    assert isinstance(nodes, list)
    stripped = strip_blocks(text)
    # Whatever was removed was delimiters: the text left is a subsequence of the input.
    position = 0
    for char in stripped:
        position = text.index(char, position) + 1
