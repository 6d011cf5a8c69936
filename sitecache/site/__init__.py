"""The content site behind the REST API: its content store, pages and ``site/v2`` routes."""

from sitecache.site.content import CommentQuery, ContentService, PostQuery, TermQuery
from sitecache.site.front import FrontSite
from sitecache.site.models import Comment, Post, Term

__all__ = [
    "Comment",
    "CommentQuery",
    "ContentService",
    "FrontSite",
    "Post",
    "PostQuery",
    "Term",
    "TermQuery",
]
