"""The companion cache plugin (entry point ``sitecache.cache_plugins``: ``hello_footer``)."""

from __future__ import annotations

from sitecache.cache import PageCache

#: What the plugin adds to each stored page.
FOOTER = b"<!-- cached with sitecache-hello -->"


class HelloFooter:
    """Adds `FOOTER` to every HTML page before it is stored."""

    key = "hello_footer"
    title = "Hello footer"
    description = "Adds an HTML comment to each page before the cache stores it."

    def add_footer(self, body: bytes, url: str) -> bytes:
        """``body`` with `FOOTER` before ``</body>`` (or at the end)."""
        if FOOTER in body:
            return body
        if b"</body>" in body:
            return body.replace(b"</body>", FOOTER + b"</body>", 1)
        return body + FOOTER

    def enable(self, cache: PageCache) -> None:
        """Add the footer before each store."""
        if self.add_footer not in cache.store_filters:
            cache.store_filters.append(self.add_footer)

    def disable(self, cache: PageCache) -> None:
        """Stop adding it."""
        if self.add_footer in cache.store_filters:
            cache.store_filters.remove(self.add_footer)
