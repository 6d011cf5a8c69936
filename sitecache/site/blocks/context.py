"""What a render callback may use: the site's content, URLs, per-request reads and templates,
and the post whose content is being rendered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from sitecache.site.content import ContentService
from sitecache.site.links import SiteLinks
from sitecache.site.models import Post
from sitecache.site.reads import RequestReads

__all__ = ["BlockContext"]


@dataclass(frozen=True)
class BlockContext:
    """The page around a block.

    Attributes:
        content: the content service (posts, terms).
        links: the site's URLs (permalinks, archives, search).
        reads: options, the timezone and the authors, read once per page.
        templates: the site's Jinja2 environment (autoescaping on).
        post: the post whose content holds the block (``None`` for the block renderer
            route without ``post_id``).
    """

    content: ContentService
    links: SiteLinks
    reads: RequestReads
    templates: Environment
    post: Post | None = None

    def render_template(self, name: str, **context: Any) -> Markup:
        """``name`` rendered with ``context`` (autoescaped) as HTML."""
        # The template escapes every value it is given.
        return Markup(self.templates.get_template(name).render(**context).strip())  # noqa: S704
