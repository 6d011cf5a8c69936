"""The core server-rendered blocks: latest posts, archives, categories, search, tag cloud.

Each is a row of `CORE_BLOCKS`: its attribute schema (WordPress's ``block.json`` attributes,
typed and bounded so the schema engine refuses what the renderer could not use) and a render
callback that reads the site through the `BlockContext` and renders a template of
``sitecache/templates/blocks/`` (autoescaped). Each returns the ``Cache-Tag`` tags of what it
lists (`sitecache.site.cache_contract`), so a page embedding it is purged when that changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from sitecache.site.blocks.context import BlockContext
from sitecache.site.blocks.parser import strip_blocks
from sitecache.site.blocks.registry import BlockType, RenderedBlock
from sitecache.site.cache_contract import POST_LIST_TAG, term_list_tag
from sitecache.site.dates import format_php_date
from sitecache.site.models import Term
from sitecache.site.postpass import protected_title
from sitecache.site.queries import PostQuery, TermQuery
from sitecache.site.render import excerpt_text

__all__ = ["CORE_BLOCKS", "core_block_types"]

_CLASS_NAME: Final = {"type": "string", "pattern": "^[A-Za-z0-9_ -]*$"}
_TAXONOMY: Final = ("category", "post_tag")
_FONT_SIZE: Final = re.compile(r"^(\d+(?:\.\d+)?)(pt|px|em|rem|%)$")
MAX_LISTED: Final = 100
"""Most items a block lists."""


def _excerpt_words(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" \u2026" if len(parts) > words else "")


def render_latest_posts(
    attributes: dict[str, Any], inner: str, block: BlockContext
) -> RenderedBlock:
    """``core/latest-posts``: the newest published posts (optionally of some categories or
    one author), each linked, with its date, author and excerpt or text when asked."""
    categories = tuple(int(item["id"]) for item in attributes.get("categories", ()))
    author = attributes.get("selectedAuthor")
    posts, _ = block.content.query_posts(
        PostQuery(
            term_ids=categories,
            authors=(int(author),) if author else (),
            exclude=(block.post.id,) if block.post is not None else (),
            orderby=attributes["orderBy"],
            order=attributes["order"],
            per_page=attributes["postsToShow"],
        )
    )
    terms = block.content.get_terms(sorted({i for post in posts for i in post.term_ids}))
    authors = block.reads.authors() if attributes["displayAuthor"] else {}
    date_format = str(block.reads.option("date_format", "F j, Y"))
    items = []
    for post in posts:
        local = block.reads.local_time(post.date_gmt)
        user = authors.get(post.author)
        text: str | None = None
        kind = "excerpt"
        if attributes["displayPostContent"] and not post.password:
            plain = strip_blocks(post.content)
            if attributes["displayPostContentRadio"] == "full_post":
                text, kind = plain, "full-content"
            else:
                text = _excerpt_words(
                    excerpt_text(post.excerpt, plain), attributes["excerptLength"]
                )
        items.append(
            {
                "url": block.links.post_url(post, terms),
                "title": protected_title(post, post.title or "(no title)"),
                "author_name": user.display_name if user else "",
                "date": format_php_date(local, date_format)
                if attributes["displayPostDate"]
                else "",
                "datetime": local.isoformat(timespec="seconds"),
                "text": text,
                "text_kind": kind,
            }
        )
    html = block.render_template(
        "blocks/latest_posts.html", items=items, class_name=attributes.get("className", "")
    )
    return RenderedBlock(html, (POST_LIST_TAG,))


def render_archives(attributes: dict[str, Any], inner: str, block: BlockContext) -> RenderedBlock:
    """``core/archives``: the months (or years) with published posts, newest first, each
    linked to its date archive, with its count when asked."""
    yearly = attributes["type"] == "yearly"
    counts: dict[tuple[int, int], int] = {}
    for stamp in block.content.published_dates("post"):
        local = block.reads.local_time(stamp)
        key = (local.year, 0 if yearly else local.month)
        counts[key] = counts.get(key, 0) + 1
    table = block.links.table()
    archives = []
    for (year, month), count in counts.items():
        values: dict[str, object] = {"year": year} if yearly else {"year": year, "month": month}
        label = str(year) if yearly else format_php_date(datetime(year, month, 1), "F Y")
        archives.append(
            {"url": block.links.url(table.build("date", values)), "label": label, "count": count}
        )
    html = block.render_template(
        "blocks/archives.html",
        archives=archives,
        show_counts=attributes["showPostCounts"],
        class_name=attributes.get("className", ""),
    )
    return RenderedBlock(html, (POST_LIST_TAG,))


def _term_tree(terms: list[Term], block: BlockContext, hierarchy: bool) -> list[dict[str, Any]]:
    """The terms as nodes ``{term, url, children}``: nested under their parents (a term
    whose parent is not listed stays at the top) or flat."""
    nodes: dict[int, dict[str, Any]] = {
        term.id: {"term": term, "url": block.links.term_url(term), "children": []} for term in terms
    }
    top: list[dict[str, Any]] = []
    for term in terms:
        parent = nodes.get(term.parent) if hierarchy and term.parent != term.id else None
        siblings: list[dict[str, Any]] = parent["children"] if parent is not None else top
        siblings.append(nodes[term.id])
    return top


def render_categories(attributes: dict[str, Any], inner: str, block: BlockContext) -> RenderedBlock:
    """``core/categories``: the terms of a taxonomy by name, linked to their archives, with
    counts, nesting or top level only when asked; empty ones only with ``showEmpty``."""
    taxonomy = attributes["taxonomy"]
    terms, _ = block.content.query_terms(
        TermQuery(
            taxonomy=taxonomy,
            hide_empty=not attributes["showEmpty"],
            parent=0 if attributes["showOnlyTopLevel"] else None,
            per_page=10_000,
        )
    )
    html = block.render_template(
        "blocks/categories.html",
        tree=_term_tree(terms, block, attributes["showHierarchy"]),
        show_counts=attributes["showPostCounts"],
        class_name=attributes.get("className", ""),
    )
    return RenderedBlock(html, (term_list_tag(taxonomy),))


def render_search(attributes: dict[str, Any], inner: str, block: BlockContext) -> RenderedBlock:
    """``core/search``: a search form sending ``s`` to the home page (which redirects to the
    search results' own URL)."""
    html = block.render_template(
        "blocks/search.html",
        action=block.links.url("/"),
        input_id="wp-block-search__input",
        label=attributes["label"],
        show_label=attributes["showLabel"],
        placeholder=attributes["placeholder"],
        button_text=attributes["buttonText"],
        button_position=attributes["buttonPosition"],
        class_name=attributes.get("className", ""),
    )
    return RenderedBlock(html)


def _font_size(text: str) -> tuple[float, str]:
    match = _FONT_SIZE.match(text)
    return (float(match[1]), match[2]) if match else (8.0, "pt")


def render_tag_cloud(attributes: dict[str, Any], inner: str, block: BlockContext) -> RenderedBlock:
    """``core/tag-cloud``: the most used terms of a taxonomy by name, each sized between the
    smallest and largest font size by its count (``wp_generate_tag_cloud``)."""
    taxonomy = attributes["taxonomy"]
    terms, _ = block.content.query_terms(
        TermQuery(
            taxonomy=taxonomy,
            hide_empty=True,
            orderby="count",
            order="desc",
            per_page=attributes["numberOfTags"],
        )
    )
    terms.sort(key=lambda term: (term.name.casefold(), term.id))
    smallest, unit = _font_size(attributes["smallestFontSize"])
    largest, _ = _font_size(attributes["largestFontSize"])
    counts = [term.count for term in terms]
    spread = max(counts) - min(counts) if counts else 0
    step = (largest - smallest) / spread if spread > 0 else 0.0
    tags = [
        {
            "term": term,
            "url": block.links.term_url(term),
            "size": f"{round(smallest + (term.count - min(counts)) * step, 3):g}{unit}",
        }
        for term in terms
    ]
    html = block.render_template(
        "blocks/tag_cloud.html",
        tags=tags,
        show_counts=attributes["showTagCounts"],
        class_name=attributes.get("className", ""),
    )
    return RenderedBlock(html, (term_list_tag(taxonomy),))


def _boolean(default: bool) -> dict[str, Any]:
    return {"type": "boolean", "default": default}


_FONT_SIZE_SCHEMA: Final = {"type": "string", "pattern": _FONT_SIZE.pattern}

CORE_BLOCKS: Final[Mapping[str, dict[str, Any]]] = {
    "core/latest-posts": {
        "title": "Latest Posts",
        "description": "Display a list of your most recent posts.",
        "category": "widgets",
        "keywords": ("recent posts",),
        "render_callback": render_latest_posts,
        "attributes": {
            "categories": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"id": {"type": "integer", "minimum": 1}},
                    "required": ["id"],
                },
                "maxItems": MAX_LISTED,
            },
            "selectedAuthor": {"type": "integer", "minimum": 1},
            "postsToShow": {"type": "integer", "default": 5, "minimum": 1, "maximum": MAX_LISTED},
            "displayPostContent": _boolean(False),
            "displayPostContentRadio": {
                "type": "string",
                "enum": ["excerpt", "full_post"],
                "default": "excerpt",
            },
            "excerptLength": {"type": "integer", "default": 55, "minimum": 10, "maximum": 100},
            "displayAuthor": _boolean(False),
            "displayPostDate": _boolean(False),
            "order": {"type": "string", "enum": ["asc", "desc"], "default": "desc"},
            "orderBy": {"type": "string", "enum": ["date", "title"], "default": "date"},
            "className": _CLASS_NAME,
        },
    },
    "core/archives": {
        "title": "Archives",
        "description": "Display a date archive of your posts.",
        "category": "widgets",
        "render_callback": render_archives,
        "attributes": {
            "showPostCounts": _boolean(False),
            "type": {"type": "string", "enum": ["monthly", "yearly"], "default": "monthly"},
            "className": _CLASS_NAME,
        },
    },
    "core/categories": {
        "title": "Terms List",
        "description": "Display a list of all terms of a given taxonomy.",
        "category": "widgets",
        "keywords": ("categories",),
        "render_callback": render_categories,
        "attributes": {
            "taxonomy": {"type": "string", "enum": list(_TAXONOMY), "default": "category"},
            "showHierarchy": _boolean(False),
            "showPostCounts": _boolean(False),
            "showOnlyTopLevel": _boolean(False),
            "showEmpty": _boolean(False),
            "className": _CLASS_NAME,
        },
    },
    "core/search": {
        "title": "Search",
        "description": "Help visitors find your content.",
        "category": "widgets",
        "keywords": ("find",),
        "render_callback": render_search,
        "attributes": {
            "label": {"type": "string", "default": "Search", "maxLength": 200},
            "showLabel": _boolean(True),
            "placeholder": {"type": "string", "default": "", "maxLength": 200},
            "buttonText": {"type": "string", "default": "Search", "maxLength": 200},
            "buttonPosition": {
                "type": "string",
                "enum": ["button-outside", "button-inside", "no-button"],
                "default": "button-outside",
            },
            "className": _CLASS_NAME,
        },
    },
    "core/tag-cloud": {
        "title": "Tag Cloud",
        "description": "A cloud of popular keywords, each sized by how often it appears.",
        "category": "widgets",
        "render_callback": render_tag_cloud,
        "attributes": {
            "numberOfTags": {
                "type": "integer",
                "default": 45,
                "minimum": 1,
                "maximum": MAX_LISTED,
            },
            "taxonomy": {"type": "string", "enum": list(_TAXONOMY), "default": "post_tag"},
            "showTagCounts": _boolean(False),
            "smallestFontSize": {**_FONT_SIZE_SCHEMA, "default": "8pt"},
            "largestFontSize": {**_FONT_SIZE_SCHEMA, "default": "22pt"},
            "className": _CLASS_NAME,
        },
    },
}
"""The core blocks, by name: the keyword arguments of their `BlockType`."""


def core_block_types() -> list[BlockType]:
    """The core blocks as block types (registered on every application)."""
    return [
        BlockType(
            name=name,
            attributes=row["attributes"],
            render_callback=row["render_callback"],
            title=row["title"],
            description=row["description"],
            category=row["category"],
            keywords=tuple(row.get("keywords", ())),
            supports={"html": False},
        )
        for name, row in CORE_BLOCKS.items()
    ]
