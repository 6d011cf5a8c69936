"""The content site behind the REST API: its pages, rendered with Jinja2 templates."""

from sitecache.site.front import FrontSite

__all__ = ["FrontSite"]
