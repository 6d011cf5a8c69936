"""The machine-read pages: the RSS 2.0 feed of the latest posts and ``/sitemap.xml``.

The feed lists ``posts_per_rss`` posts (content withheld for protected ones, blocks left out:
their words only); the sitemap lists
home, every published post and page, and the archive of every term they use. Cache tags:
``feed`` / ``sitemap`` and each post listed.
"""

from __future__ import annotations

from sitecache.site.blocks import strip_blocks
from sitecache.site.content import ContentService, PostQuery
from sitecache.site.links import SiteLinks
from sitecache.site.page import Page
from sitecache.site.reads import RequestReads
from sitecache.site.render import paragraphs
from sitecache.site.views import SiteViews

__all__ = ["RFC_822", "SiteFeeds"]

RFC_822 = "%a, %d %b %Y %H:%M:%S %z"
"""The date format of RSS."""
SITEMAP_LIMIT = 50_000
"""The most URLs one sitemap file may list (sitemaps.org)."""


class SiteFeeds:
    """The feed and the sitemap.

    Args:
        content: the content service.
        links: the site's URLs.
        reads: the per-request reads (options, the timezone).
        views: the listing views (what the feed shows of each post).
    """

    def __init__(
        self, content: ContentService, links: SiteLinks, reads: RequestReads, views: SiteViews
    ) -> None:
        self.content = content
        self.links = links
        self.reads = reads
        self.views = views

    def feed(self) -> Page:
        """The RSS 2.0 feed of the latest posts."""
        posts, _ = self.content.query_posts(
            PostQuery(per_page=int(self.reads.option("posts_per_rss", 10)))
        )
        items = self.views.items(posts)
        for item in items:
            item["rfc822"] = self.reads.local_time(item["post"].date_gmt).strftime(RFC_822)
            text = strip_blocks(item["post"].content)
            item["content"] = paragraphs(text) if not item["protected"] else ""
        last = max((post.modified_gmt for post in posts), default=0)
        return Page(
            "feed.xml",
            {
                "items": items,
                "last_build": self.reads.local_time(last).strftime(RFC_822),
                "self_url": self.links.url(self.links.feed_path()),
            },
            ("feed",),
            ["feed", *(f"post-{post.id}" for post in posts)],
            mimetype="application/rss+xml",
        )

    def sitemap(self) -> Page:
        """``/sitemap.xml``: home, every published post and page without a password, every
        non-empty term."""
        urls: list[dict[str, str]] = [{"loc": self.links.url("/"), "lastmod": ""}]
        posts, _ = self.content.query_posts(
            PostQuery(types=("post", "page"), per_page=SITEMAP_LIMIT)
        )
        # Like WordPress's sitemaps, no password-protected post.
        posts = [post for post in posts if not post.password]
        terms = self.content.get_terms(sorted({i for post in posts for i in post.term_ids}))
        for post in posts:
            loc = self.links.post_url(post, terms)
            if loc == urls[0]["loc"]:
                continue  # the static front page: the home URL, listed once
            modified = self.reads.local_time(post.modified_gmt)
            urls.append({"loc": loc, "lastmod": modified.isoformat(timespec="seconds")})
        for term in sorted(terms.values(), key=lambda t: t.id):
            urls.append({"loc": self.links.term_url(term), "lastmod": ""})
        return Page(
            "sitemap.xml",
            {"urls": urls},
            ("sitemap",),
            ["sitemap", *(f"post-{post.id}" for post in posts)],
            mimetype="application/xml",
        )
