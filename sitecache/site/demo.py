"""Demo content: a realistic, deterministic site for ``sitecache init --demo`` and ``make run``.

`fill_demo` writes several authors, a category tree, tags, more than 200 posts (most
published; some drafts, pending, private, scheduled and trashed), pages and comments (approved,
held, spam, some replies) through the content service, in one transaction. The same seed gives
the same site, byte for byte, whatever the clock says (dates count back from a fixed day).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from sitecache.auth.passwords import generate_password
from sitecache.auth.users import UserRepository
from sitecache.site.content import ContentService

__all__ = ["DEMO_POSTS", "DemoSummary", "fill_demo"]

DEMO_POSTS: Final = 240
"""Published posts in the demo (plus a few in every other status)."""
DEMO_EPOCH: Final = int(datetime(2026, 11, 1, 9, 0, tzinfo=UTC).timestamp())
"""The newest demo post's date; older ones count back from it."""

_AUTHORS: Final = (
    ("alice", "Alice Martin", "editor"),
    ("bruno", "Bruno Costa", "author"),
    ("chen", "Chen Wei", "author"),
    ("dana", "Dana Okafor", "contributor"),
)
_CATEGORIES: Final = (
    ("Uncategorized", ""),
    ("News", ""),
    ("Releases", "News"),
    ("Tutorials", ""),
    ("Performance", "Tutorials"),
    ("Security", ""),
    ("Community", ""),
    ("Design", ""),
    ("Operations", ""),
)
_TAGS: Final = (
    "python", "wsgi", "caching", "sqlite", "gunicorn", "rest", "json", "http", "headers",
    "cookies", "cdn", "latency", "benchmarks", "deployment", "nginx", "tls", "testing",
    "hypothesis", "schema", "plugins", "hooks", "feeds", "seo", "accessibility", "i18n",
    "backups", "monitoring", "logging", "privacy", "release-notes",
)  # fmt: skip
_OPENINGS: Final = (
    "A practical guide to", "What we learned from", "Notes on", "Why we changed",
    "Five questions about", "A closer look at", "Getting started with", "Lessons from",
    "The trouble with", "Rethinking", "How to measure", "A short history of",
)  # fmt: skip
_SUBJECTS: Final = (
    "page caching", "cache invalidation", "cookie-free pages", "the REST API", "feed readers",
    "slow queries", "preloading", "cache keys", "stale content", "mobile visitors",
    "search pages", "comment moderation", "sitemaps", "HTTP headers", "the 404 page",
    "garbage collection", "gzip", "reverse proxies", "application passwords", "permalinks",
)  # fmt: skip
_SENTENCES: Final = (
    "Every request that reaches the application costs time the visitor can feel.",
    "A cached page is only as good as the rules that decide when it goes stale.",
    "We measured the difference before and after, on the same machine, in the same run.",
    "Most visitors never log in, and that is exactly who a page cache serves best.",
    "The hard part is not storing a page but knowing which pages a change affects.",
    "Feeds are read by machines that poll often, so they deserve a cache of their own.",
    "A comment held for moderation must never be shown to anyone but its author.",
    "Headers tell the cache what a page is, and tags tell it what the page shows.",
    "Nothing here needs a framework; a few small modules with one job each are enough.",
    "When in doubt, bypass the cache: a miss is slow, a wrong page is a bug.",
    "The numbers below are ratios against a baseline measured in the same run.",
    "Search pages are cacheable once the query moves from the query string to the path.",
    "We keep the database in one SQLite file, which makes backups a matter of one copy.",
    "Plugins hook into actions and filters, the same way they always have.",
    "Readers noticed the speed before we announced anything.",
)  # fmt: skip
_COMMENTS: Final = (
    "Thanks, this was exactly what I needed.",
    "Does this also work behind a CDN?",
    "Great write-up. The benchmark numbers are impressive.",
    "I tried this on my own site and the home page is now instant.",
    "Could you share the configuration you used?",
    "Small typo in the second paragraph, otherwise excellent.",
    "How does this interact with logged-in users?",
    "We ran into the same problem last year; wish I had read this then.",
)  # fmt: skip
_COMMENTERS: Final = (
    ("Maya", "maya@example.com"), ("Tom", "tom@example.net"), ("Ines", "ines@example.org"),
    ("Kofi", "kofi@example.com"), ("Lena", "lena@example.net"), ("Ravi", "ravi@example.org"),
)  # fmt: skip
_PAGES: Final = (
    (
        "About",
        "",
        "This is a demo site for sitecache, a page cache for WSGI content sites.\n\n"
        "Search it:\n\n<!-- wp:search /-->\n\nThe latest posts:\n\n"
        '<!-- wp:latest-posts {"postsToShow":5,"displayPostDate":true} /-->\n\n'
        'Popular tags:\n\n<!-- wp:tag-cloud {"numberOfTags":20} /-->\n\n'
        'Archives:\n\n<!-- wp:archives {"showPostCounts":true} /-->',
    ),
    ("Team", "About", "The people who write here: Alice, Bruno, Chen and Dana."),
    ("Contact", "", "Write to us at hello@example.com. We read everything."),
    ("Privacy Policy", "", "This demo site stores no personal data beyond what you post."),
)
_OTHER_STATUSES: Final = (
    ("draft", 6), ("pending", 3), ("private", 2), ("future", 2), ("trash", 2),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class DemoSummary:
    """What `fill_demo` created."""

    authors: int
    categories: int
    tags: int
    posts: int
    pages: int
    comments: int
    held_comments: int


def _paragraphs(rng: random.Random, count: int) -> str:
    return "\n\n".join(" ".join(rng.sample(_SENTENCES, rng.randint(3, 5))) for _ in range(count))


def _demo_authors(users: UserRepository, rng: random.Random) -> list[int]:
    ids = []
    for login, name, role in _AUTHORS:
        existing = users.find(login)
        if existing is None:
            existing = users.create(login, generate_password(24), role, display_name=name)
        ids.append(existing.id)
    return ids


def fill_demo(
    content: ContentService, users: UserRepository, seed: int = 9, posts: int = DEMO_POSTS
) -> DemoSummary:
    """Fill the site with the demo set (authors, terms, posts, pages, comments).

    Authors get random passwords nobody knows (reset them with the CLI to log in as one).
    Everything else is written in one transaction; the hooks fire after it commits.
    """
    rng = random.Random(seed)  # noqa: S311 - demo text, not a secret
    author_ids = _demo_authors(users, rng)
    with content.batch():
        categories, tag_ids = _demo_terms(content)
        statuses = ["publish"] * posts + [
            status for status, count in _OTHER_STATUSES for _ in range(count)
        ]
        published = _demo_posts(content, rng, statuses, author_ids, categories, tag_ids)
        _demo_pages(content, author_ids[0])
        comments, held = _demo_comments(content, rng, published)
    return DemoSummary(
        authors=len(author_ids),
        categories=len(categories),
        tags=len(tag_ids),
        posts=len(statuses),
        pages=len(_PAGES),
        comments=comments,
        held_comments=held,
    )


def _demo_terms(content: ContentService) -> tuple[dict[str, int], list[int]]:
    """The demo categories (by name; ``Uncategorized`` is the default) and tags."""
    categories: dict[str, int] = {}
    for name, parent in _CATEGORIES:
        existing = content.get_term_by_slug("category", name.lower())
        term = existing or content.create_term("category", name, parent=categories.get(parent, 0))
        categories[name] = term.id
    content.update_option("default_category", categories["Uncategorized"])
    tag_ids = [
        (content.get_term_by_slug("post_tag", tag) or content.create_term("post_tag", tag)).id
        for tag in _TAGS
    ]
    return categories, tag_ids


def _demo_posts(
    content: ContentService,
    rng: random.Random,
    statuses: Sequence[str],
    author_ids: Sequence[int],
    categories: Mapping[str, int],
    tag_ids: Sequence[int],
) -> list[tuple[int, int]]:
    """One post per status, newest first; the ``(id, date)`` of the published ones."""
    topical = [term_id for name, term_id in categories.items() if name != "Uncategorized"]
    published: list[tuple[int, int]] = []
    for number, status in enumerate(statuses):
        subject = rng.choice(_SUBJECTS)
        title = f"{rng.choice(_OPENINGS)} {subject}"
        date = DEMO_EPOCH - number * 86400 * 3 // 2 - rng.randint(0, 3600 * 8)
        if status == "future":
            date = DEMO_EPOCH + 86400 * 365 * 5 + number
        terms = [rng.choice(topical), *rng.sample(tag_ids, rng.randint(1, 4))]
        post = content.create_post(
            title=title,
            content=_paragraphs(rng, rng.randint(2, 5)),
            excerpt="",
            status=status,
            author=rng.choice(author_ids),
            date_gmt=date,
            modified_gmt=date + rng.randint(0, 86400),
            term_ids=terms,
            comment_status="closed" if number % 17 == 16 else "open",
        )
        if status == "publish":
            published.append((post.id, date))
    return published


def _demo_pages(content: ContentService, author: int) -> None:
    """The demo pages (a child page under its parent)."""
    page_ids: dict[str, int] = {}
    for title, parent, text in _PAGES:
        page = content.create_post(
            type="page",
            title=title,
            content=text,
            status="publish",
            author=author,
            parent=page_ids.get(parent, 0),
            date_gmt=DEMO_EPOCH - 86400 * 400,
            modified_gmt=DEMO_EPOCH - 86400 * 400,
        )
        page_ids[title] = page.id


def _demo_comments(
    content: ContentService, rng: random.Random, published: Sequence[tuple[int, int]]
) -> tuple[int, int]:
    """Comments on the published posts (some replies, held and spam); how many, and how many
    are held."""
    comments = held = 0
    for post_id, posted in published:
        thread: list[int] = []
        for _ in range(rng.choice((0, 0, 1, 2, 3, 4, 6))):
            name, email = rng.choice(_COMMENTERS)
            roll = rng.random()
            status = "hold" if roll < 0.1 else "spam" if roll < 0.13 else "approve"
            comment = content.add_comment(
                post_id=post_id,
                parent=rng.choice(thread) if thread and rng.random() < 0.3 else 0,
                author_name=name,
                author_email=email,
                author_ip="192.0.2." + str(rng.randint(1, 254)),
                content=rng.choice(_COMMENTS),
                date_gmt=posted + rng.randint(600, 86400 * 10),
                status=status,
            )
            comments += 1
            held += status == "hold"
            if status == "approve":
                thread.append(comment.id)
    return comments, held


def demo_logins() -> Sequence[str]:
    """The logins of the demo authors."""
    return [login for login, _, _ in _AUTHORS]
