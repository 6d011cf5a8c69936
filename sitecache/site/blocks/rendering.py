"""A post's content with its blocks rendered, and one block rendered on its own.

A post's text is plain text (`sitecache.site.render`): the words between block delimiters are
escaped into paragraphs, as a post without blocks is. A block of a registered type is replaced
by its render callback's HTML; a block of an unknown type (``core/paragraph``, a block of an
uninstalled plugin) is left as its inner text, escaped like the rest. A block whose attributes
are not a JSON object or fail the type's schema renders nothing but an HTML comment saying why;
so does a callback that raises (logged). Rendering a page never fails because of a block.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from jinja2 import Environment
from markupsafe import Markup, escape

from sitecache.errors import RestError
from sitecache.site.blocks.context import BlockContext
from sitecache.site.blocks.parser import BlockNode, Node, Text, parse_blocks
from sitecache.site.blocks.registry import BlockTypeRegistry, RenderedBlock
from sitecache.site.content import ContentService
from sitecache.site.links import SiteLinks
from sitecache.site.models import Post
from sitecache.site.reads import RequestReads
from sitecache.site.render import paragraphs

__all__ = ["BlockRenderer", "RenderedContent", "html_comment"]

logger = logging.getLogger("sitecache.site.blocks")

_DASHES: Final = re.compile(r"-{2,}")


def html_comment(text: str) -> Markup:
    """``text`` as an HTML comment that cannot end early or carry markup (escaped, no
    ``--``)."""
    safe = _DASHES.sub("-", str(escape(text))).strip("-")
    return Markup(f"<!-- {safe} -->")  # noqa: S704 - escaped, and no "--" left


@dataclass(frozen=True, slots=True)
class RenderedContent:
    """A post's content as HTML, and the ``Cache-Tag`` tags of what its blocks list."""

    html: Markup
    tags: tuple[str, ...] = ()


@dataclass(eq=False, repr=False)
class BlockRenderer:
    """Renders blocks with the site's data.

    Args:
        registry: the application's block types.
        content, links, reads, templates: what the `BlockContext` of a block holds.
    """

    registry: BlockTypeRegistry
    content: ContentService
    links: SiteLinks
    reads: RequestReads
    templates: Environment

    def context(self, post: Post | None = None) -> BlockContext:
        """The context of blocks in ``post`` (or of a block on its own)."""
        return BlockContext(self.content, self.links, self.reads, self.templates, post)

    def render_content(self, post: Post) -> RenderedContent:
        """``post``'s content as HTML with its blocks rendered (see the module docstring)."""
        if "<!--" not in post.content:
            return RenderedContent(paragraphs(post.content))
        parts: list[Markup] = []
        tags: list[str] = []
        pending: list[str] = []
        self._render_nodes(parse_blocks(post.content), self.context(post), parts, tags, pending)
        parts.append(paragraphs("".join(pending)))
        html = Markup("\n").join(part for part in parts if part)
        return RenderedContent(html, tuple(dict.fromkeys(tags)))

    def _render_nodes(
        self,
        nodes: Iterable[Node],
        block: BlockContext,
        parts: list[Markup],
        tags: list[str],
        pending: list[str],
    ) -> None:
        """Append the HTML of ``nodes`` to ``parts``; text waits in ``pending`` so that the
        words around an unknown block's delimiters make paragraphs together."""
        for node in nodes:
            if isinstance(node, Text):
                pending.append(node.text)
                continue
            if node.name not in self.registry:
                self._render_nodes(node.inner, block, parts, tags, pending)
                continue
            parts.append(paragraphs("".join(pending)))
            pending.clear()
            rendered = self._render_node(node, block)
            parts.append(rendered.html)
            tags.extend(rendered.tags)

    def _render_node(self, node: BlockNode, block: BlockContext) -> RenderedBlock:
        """One block of a registered type, or the comment saying why it is not shown."""
        if node.attrs_error is not None:
            return RenderedBlock(html_comment(f"{node.name} not rendered: {node.attrs_error}"))
        inner = "".join(_inner_text(node.inner))
        result = self.render_block(node.name, node.attrs, block.post, inner=inner)
        if isinstance(result, RestError):
            return RenderedBlock(html_comment(f"{node.name} not rendered: {result.message}"))
        return result

    def render_block(
        self, name: str, attributes: Any, post: Post | None = None, *, inner: str = ""
    ) -> RenderedBlock | RestError:
        """The block ``name`` with ``attributes`` (validated, sanitized and completed with
        the defaults) in the context of ``post``.

        Returns ``block_invalid`` (404) for a name no block type has, the schema engine's
        error for attributes its schema refuses, or ``block_render_failed`` (500) when the
        callback raised (logged).
        """
        block_type = self.registry.get(name)
        if block_type is None:
            return RestError("block_invalid", "Invalid block.", {"status": 404})
        prepared = block_type.prepare_attributes(attributes if attributes is not None else {})
        if isinstance(prepared, RestError):
            return prepared
        try:
            return block_type.render(prepared, inner, self.context(post))
        except Exception:
            logger.exception("block %s failed to render", name)
            return RestError(
                "block_render_failed", "The block could not be rendered.", {"status": 500}
            )


def _inner_text(nodes: Iterable[Node]) -> list[str]:
    found: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            found.append(node.text)
        else:
            found.extend(_inner_text(node.inner))
    return found
