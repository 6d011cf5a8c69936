"""Permalinks: the path of every page of the site, and the post a pretty path names.

Posts follow the ``permalink_structure`` option (``/%postname%/`` by default; ``""`` means
plain links such as ``/?p=ID``). Archives live at ``/category/<slug>/``, ``/tag/<slug>/``,
``/author/<slug>/``, ``/search/<term>/``, ``/<year>/<month>/<day>/``; pagination appends
``page/<n>/``. Structure tags: ``%year%``, ``%monthnum%``, ``%day%``, ``%hour%``,
``%minute%``, ``%second%``, ``%post_id%``, ``%postname%``, ``%category%``, ``%author%``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime, tzinfo
from typing import Final
from urllib.parse import quote, urlencode

from sitecache.site.models import Post, Term

__all__ = ["STRUCTURE_TAGS", "Permalinks"]

STRUCTURE_TAGS: Final[Mapping[str, str]] = {
    "%year%": r"(?P<year>\d{4})",
    "%monthnum%": r"(?P<monthnum>\d{1,2})",
    "%day%": r"(?P<day>\d{1,2})",
    "%hour%": r"(?P<hour>\d{1,2})",
    "%minute%": r"(?P<minute>\d{1,2})",
    "%second%": r"(?P<second>\d{1,2})",
    "%post_id%": r"(?P<post_id>\d+)",
    "%postname%": r"(?P<postname>[a-z0-9-]+)",
    "%category%": r"(?P<category>[a-z0-9-]+(?:/[a-z0-9-]+)*)",
    "%author%": r"(?P<author>[a-z0-9-]+)",
}
_TAG = re.compile("|".join(re.escape(tag) for tag in STRUCTURE_TAGS))


class Permalinks:
    """Builds and reads the site's paths for the current ``permalink_structure``.

    Args:
        structure: returns the current structure (the option).
        timezone: returns the site's timezone (dates in links are local).
    """

    def __init__(self, structure: Callable[[], str], timezone: Callable[[], tzinfo]) -> None:
        self._structure = structure
        self._timezone = timezone
        self._compiled: tuple[str, re.Pattern[str]] | None = None

    @property
    def structure(self) -> str:
        """The structure now in force."""
        return str(self._structure() or "")

    @property
    def pretty(self) -> bool:
        """Whether links are pretty paths (else plain query strings)."""
        return bool(self.structure)

    # ------------------------------------------------------------------ building
    def post_path(
        self, post: Post, category: Term | None = None, author_slug: str = "author"
    ) -> str:
        """The path of a post (its ``category`` and ``author_slug`` fill those tags)."""
        if post.type == "page":
            return f"/{post.slug}/" if self.pretty else f"/?page_id={post.id}"
        if not self.pretty or post.type != "post":
            return f"/?p={post.id}"
        local = datetime.fromtimestamp(post.date_gmt, self._timezone())
        values = {
            "%year%": f"{local.year:04d}",
            "%monthnum%": f"{local.month:02d}",
            "%day%": f"{local.day:02d}",
            "%hour%": f"{local.hour:02d}",
            "%minute%": f"{local.minute:02d}",
            "%second%": f"{local.second:02d}",
            "%post_id%": str(post.id),
            "%postname%": post.slug,
            "%category%": category.slug if category is not None else "uncategorized",
            "%author%": author_slug,
        }
        path = _TAG.sub(lambda found: values[found.group(0)], self.structure)
        return path if path.startswith("/") else "/" + path

    def term_path(self, term: Term) -> str:
        """The archive path of a category or tag."""
        if term.taxonomy == "category":
            return f"/category/{term.slug}/" if self.pretty else f"/?cat={term.id}"
        return f"/tag/{term.slug}/" if self.pretty else f"/?tag={quote(term.slug)}"

    def author_path(self, user_id: int, slug: str) -> str:
        """The archive path of an author."""
        return f"/author/{slug}/" if self.pretty else f"/?author={user_id}"

    def search_path(self, term: str) -> str:
        """The path of the search results for ``term`` (no query string when pretty)."""
        if self.pretty:
            return f"/search/{quote(term, safe='')}/"
        return "/?" + urlencode({"s": term})

    def date_path(self, year: int, month: int | None = None, day: int | None = None) -> str:
        """The path of a date archive."""
        if not self.pretty:
            value = (
                f"{year:04d}" + (f"{month:02d}" if month else "") + (f"{day:02d}" if day else "")
            )
            return f"/?m={value}"
        path = f"/{year:04d}/"
        if month:
            path += f"{month:02d}/"
            if day:
                path += f"{day:02d}/"
        return path

    def feed_path(self) -> str:
        """The path of the posts feed."""
        return "/feed/" if self.pretty else "/?feed=rss2"

    def paged(self, path: str, page: int) -> str:
        """``path`` at page ``page`` (page 1 is ``path`` itself)."""
        if page <= 1:
            return path
        if not self.pretty or "?" in path:
            return f"{path}{'&' if '?' in path else '?'}paged={page}"
        return f"{path}page/{page}/"

    # ------------------------------------------------------------------ reading
    def post_pattern(self) -> re.Pattern[str] | None:
        """The regular expression a post's pretty path matches (``None`` when plain)."""
        structure = self.structure
        if not structure:
            return None
        if self._compiled is None or self._compiled[0] != structure:
            pieces: list[str] = []
            position = 0
            for found in _TAG.finditer(structure):
                pieces.append(re.escape(structure[position : found.start()]))
                pieces.append(STRUCTURE_TAGS[found.group(0)])
                position = found.end()
            pieces.append(re.escape(structure[position:]))
            pattern = "".join(pieces)
            if not pattern.startswith("/"):
                pattern = "/" + pattern
            self._compiled = (structure, re.compile(f"^{pattern}\\Z"))
        return self._compiled[1]
