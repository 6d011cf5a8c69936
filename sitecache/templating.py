"""The Jinja2 environment of every page sitecache renders (autoescaped), and the text filter of
its XML templates.

XML 1.0 allows only tab, LF, CR, ``U+0020`` to ``U+D7FF``, ``U+E000`` to ``U+FFFD`` and the planes
above: any other character (the other C0 controls, lone surrogates, ``U+FFFE``, ``U+FFFF``)
makes a document not well-formed, and no escape can write it. Stored text may hold them (a
title PATCHed to ``"a\\u0000b"``), so every value a template named ``*.xml`` prints (the RSS
feed, the sitemap, a theme's own XML templates) goes through `xml_text`, which drops them.
"""

from __future__ import annotations

import re
from typing import Any, Final

from jinja2 import Environment, PackageLoader, pass_context, select_autoescape
from jinja2.runtime import Context
from markupsafe import Markup

from sitecache.wording import human_bytes, human_duration, inline_code, plural, ratio_percent

__all__ = ["TEMPLATE_FILTERS", "make_template_environment", "xml_text"]

#: The filters every template may use: numbers, sizes and help texts in words.
TEMPLATE_FILTERS: Final = {
    "plural": plural,
    "human_bytes": human_bytes,
    "human_duration": human_duration,
    "inline_code": inline_code,
    "percent": ratio_percent,
}

_NOT_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""Every character XML 1.0's ``Char`` production leaves out."""


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids (kept: tab, LF, CR and every other
    character); a `Markup` stays `Markup` (dropping characters cannot create markup)."""
    cleaned = _NOT_XML_CHARS.sub("", text)
    if isinstance(text, Markup):
        return Markup(cleaned)  # noqa: S704 - the same safe markup with characters removed
    return cleaned


@pass_context
def _finalize(context: Context, value: Any) -> Any:
    """Every printed value of an XML template (``*.xml``) through `xml_text`; other templates'
    values unchanged."""
    if isinstance(value, str) and (context.name or "").endswith(".xml"):
        return xml_text(value)
    return value


def make_template_environment() -> Environment:
    """The environment of ``sitecache/templates`` with autoescaping on for HTML and XML, whose
    XML templates print only characters XML 1.0 allows (`xml_text`), with the filters of
    `TEMPLATE_FILTERS`."""
    environment = Environment(
        loader=PackageLoader("sitecache", "templates"),
        autoescape=select_autoescape(["html", "xml"]),
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    environment.filters.update(TEMPLATE_FILTERS)
    return environment
