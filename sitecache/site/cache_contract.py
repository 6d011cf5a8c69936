"""What the site tells a page cache: the tags a post change purges, the URLs worth warming.

`related_tags` names, in ``Cache-Tag`` words, the pages that list a post (the post, home and its
pagination, the feed, the date archives, the sitemap, the search results pages, its terms' and
its author's archives), not every page that merely names its terms or author; `showing_tags`
names every page showing some posts (to purge when what each shows of them changes: their
terms' names and links, a page's path); `preload_urls` yields home, the published posts and
pages newest first, then the term archives with posts.

Pages embedding blocks (`sitecache.site.blocks`) add the tags of what the blocks list:
`POST_LIST_TAG` for a list of posts or of date archives (every published post's change
purges it) and `term_list_tag` of a taxonomy for a list or cloud of its terms (a change of
one of its terms, or of a published post carrying one, purges it).

Search results pages carry one shared tag, `SEARCH_TAG`, and every published post's change
purges all of them. A tag per search term would need the purge to decide which cached terms
the post matches, before and after the change (an edit can make a post stop matching), with
the store's own search rules, against a set of cached terms the site does not know; a page
rendered from the old content while the change commits would escape a purge that guessed
wrong. One tag is one purge whatever the matching rules and whatever the ordering, and
search pages are cheap to render again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sitecache.site.content import ContentService, PostQuery, TermQuery
from sitecache.site.links import SiteLinks
from sitecache.site.models import Post, Term
from sitecache.site.targets import SEARCH_TAG, TERM_BASES

__all__ = ["POST_LIST_TAG", "CacheContract", "term_list_tag"]

POST_LIST_TAG = "post-list"
"""The tag of a page showing a list of the latest posts or of date archives (a block)."""


def term_list_tag(taxonomy: str) -> str:
    """The tag of a page showing a list or cloud of the terms of ``taxonomy`` (a block)."""
    return f"term-list-{taxonomy}"


PRELOAD_BATCH = 100
"""Posts read per query while listing URLs to preload."""


class CacheContract:
    """The site's side of the page cache's seams.

    Args:
        content: the content service.
        links: the site's URLs.
    """

    def __init__(self, content: ContentService, links: SiteLinks) -> None:
        self.content = content
        self.links = links

    def related_tags(self, post_id: int | Post, *, comment: bool = False) -> list[str]:
        """The ``Cache-Tag`` tags of the pages to purge when a post changes.

        With ``comment`` (a comment on it changed) only the post's own page; otherwise the
        post, the home page and its pagination, the feed, the date archives, the sitemap, every
        search results page, the pages whose blocks list posts, each of its terms' archives,
        its author's archive and the pages whose blocks list its terms' taxonomies.
        ``post_id`` may be the `Post` itself (for a post already deleted, as the
        ``deleted_post`` hook passes it).
        """
        post = post_id if isinstance(post_id, Post) else None
        if post is None and isinstance(post_id, int):
            post = self.content.get_post(post_id)
        number = post_id.id if isinstance(post_id, Post) else int(post_id)
        tags = [f"post-{number}"]
        if comment:
            return tags
        # Every search page, not only those whose term matches: see SEARCH_TAG below.
        tags += ["home", "feed", "archive", "sitemap", POST_LIST_TAG, SEARCH_TAG]
        if post is not None:
            # The archives that list the post, not every page that names its terms or author
            # (a single post names them too: purging those would purge the author's every post).
            tags += [f"term-archive-{term_id}" for term_id in post.term_ids]
            tags.append(f"author-archive-{post.author}")
            # Term lists and clouds show counts that include the post.
            taxonomies = {term.taxonomy for term in self.content.get_terms(post.term_ids).values()}
            tags += [term_list_tag(taxonomy) for taxonomy in sorted(taxonomies)]
        return tags

    def showing_tags(self, post_ids: Iterable[int]) -> list[str]:
        """The ``Cache-Tag`` tags of every page showing one of these posts, to purge when
        something every such page shows of them changes (a term's name or URL, a page's path):
        each post's own page and every listing, feed, sitemap and search page carrying its
        ``post-<id>``, and the pages whose blocks list posts (they carry no post's tag)."""
        tags = [f"post-{number}" for number in sorted(set(post_ids))]
        return [*tags, "home", "feed", "archive", "sitemap", POST_LIST_TAG, SEARCH_TAG]

    def preload_urls(
        self, limit_posts: int | None = None, taxonomies: bool = True
    ) -> Iterator[str]:
        """Absolute URLs to warm a cache with: home, then published posts and pages newest
        first (at most ``limit_posts``), then category and tag archives with posts."""
        yield self.links.url("/")
        terms: dict[int, Term] = {}
        page_number, remaining = 1, limit_posts
        while remaining is None or remaining > 0:
            size = PRELOAD_BATCH if remaining is None else min(PRELOAD_BATCH, remaining)
            posts, _ = self.content.query_posts(
                PostQuery(types=("post", "page"), page=page_number, per_page=size)
            )
            if not posts:
                break
            needed = {i for post in posts for i in post.term_ids} - set(terms)
            terms.update(self.content.get_terms(sorted(needed)))
            for post in posts:
                yield self.links.post_url(post, terms)
            if remaining is not None:
                remaining -= len(posts)
            page_number += 1
        if taxonomies:
            for taxonomy in TERM_BASES:
                found, _ = self.content.query_terms(
                    TermQuery(taxonomy=taxonomy, hide_empty=True, per_page=10_000)
                )
                for term in found:
                    yield self.links.term_url(term)
