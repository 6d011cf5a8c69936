"""The documentation site's own Sphinx extension: reference pages generated from the code.

Each directive writes a Markdown section from what the code holds (schemas, tables, the
argument parser, the OpenAPI document, the metrics exposition) and reports every drift it
finds (a setting, a stats field, a metric, a bypass reason or a command-line option without a
description) as a warning: ``make docs`` and the tests build with warnings as errors, so a
drift fails the build.

A directive's text is parsed as Markdown (MyST) in the page that holds it.
"""

from __future__ import annotations

import re
from typing import Any, Final

from sphinx.application import Sphinx

from sitecache_docs.directive import GENERATORS, GeneratedDirective

__all__ = ["setup", "strip_issue_numbers"]

#: An issue reference in a docstring: ``(#18)``, ``(#18 point 3)``, ``#19``.
_ISSUE: Final = re.compile(r"\s*\(#\d+[^)]*\)|(?<![\w&])#\d+\b")


def strip_issue_numbers(text: str) -> str:
    """``text`` without the project's issue references (user-facing pages name none)."""
    return _ISSUE.sub("", text)


def _clean_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    lines[:] = [strip_issue_numbers(line) for line in lines]


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the reference directives and the docstring clean-up."""
    app.setup_extension("sphinx.ext.autodoc")
    for name in GENERATORS:
        app.add_directive(name, GeneratedDirective)
    app.connect("autodoc-process-docstring", _clean_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
