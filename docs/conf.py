"""Sphinx configuration of the sitecache documentation site (``make docs``)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The site's own extension (docs/_ext/sitecache_docs): references generated from the code.
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import sitecache  # noqa: E402

project = "sitecache"
author = "The sitecache developers"
copyright = "2026, The sitecache developers"
release = sitecache.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sitecache_docs",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["colon_fence", "deflist"]
# A link to a page or heading that does not exist is a warning, hence an error under -W.
suppress_warnings: list[str] = []
myst_heading_anchors = 3

autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = f"sitecache {release}"
nitpicky = False
