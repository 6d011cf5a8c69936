"""Server-rendered blocks: WordPress's block serialization in post content, the registry of
block types a site renders (``app.blocks``), the core blocks, and their rendering.

A plugin registers its own with ``app.register_block_type(name, attributes, render_callback,
...)`` (see `sitecache.site.blocks.registry` for the callback's contract).
"""

from sitecache.site.blocks.context import BlockContext
from sitecache.site.blocks.core import CORE_BLOCKS, core_block_types
from sitecache.site.blocks.parser import BlockNode, Text, parse_blocks, strip_blocks
from sitecache.site.blocks.registry import (
    BlockType,
    BlockTypeError,
    BlockTypeRegistry,
    RenderCallback,
    RenderedBlock,
)
from sitecache.site.blocks.rendering import BlockRenderer, RenderedContent, html_comment

__all__ = [
    "CORE_BLOCKS",
    "BlockContext",
    "BlockNode",
    "BlockRenderer",
    "BlockType",
    "BlockTypeError",
    "BlockTypeRegistry",
    "RenderCallback",
    "RenderedBlock",
    "RenderedContent",
    "Text",
    "core_block_types",
    "html_comment",
    "parse_blocks",
    "strip_blocks",
]
