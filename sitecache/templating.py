"""The Jinja2 environment of every HTML page sitecache renders (autoescaped)."""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, select_autoescape

__all__ = ["make_template_environment"]


def make_template_environment() -> Environment:
    """The environment of ``sitecache/templates`` with autoescaping on for HTML and XML."""
    return Environment(
        loader=PackageLoader("sitecache", "templates"),
        autoescape=select_autoescape(["html", "xml"]),
        keep_trailing_newline=True,
    )
