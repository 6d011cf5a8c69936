"""sitecache: a page cache and WordPress-style REST management interface for WSGI sites.

The schema engine (`sitecache.schema`) and the error value (`sitecache.errors.RestError`) are
importable on their own, without the web stack.
"""

from __future__ import annotations

from sitecache.errors import RestError

__version__ = "0.1.0"

__all__ = ["RestError", "__version__"]
