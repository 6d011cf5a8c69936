"""The documentation tests import the site's own Sphinx extension (docs/_ext/sitecache_docs)."""

from __future__ import annotations

import sys

from tests.doc_pages import DOCS

if str(DOCS / "_ext") not in sys.path:
    sys.path.insert(0, str(DOCS / "_ext"))
