"""sitecache: a page cache and WordPress-style REST management interface for WSGI sites.

``sitecache.create_app()`` builds the WSGI application. The schema engine (`sitecache.schema`)
and the error value (`sitecache.errors.RestError`) are importable on their own: the application
factory is loaded on first use, so importing the schema engine never pulls in the web stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitecache.errors import RestError

__version__ = "0.1.0"

__all__ = ["App", "RestError", "__version__", "create_app"]

if TYPE_CHECKING:
    from sitecache.app import App, create_app


def __getattr__(name: str) -> Any:
    if name in ("create_app", "App"):
        from sitecache import app

        return getattr(app, name)
    raise AttributeError(f"module 'sitecache' has no attribute {name!r}")
