"""An application plugin that points the purge webhook at ``$SITECACHE_TEST_WEBHOOK`` (#19)."""

from __future__ import annotations

import os

from sitecache.app import App


def activate(app: App) -> None:
    """Configure the purge webhook's URL, as a site's own code does."""
    webhook = app.cache_api.plugins.get("purge_webhook")
    webhook.urls = [os.environ["SITECACHE_TEST_WEBHOOK"]]
    webhook.retries = 0
