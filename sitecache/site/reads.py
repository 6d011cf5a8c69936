"""What one page request reads many times (options, the timezone, the authors), read once.

Inside `RequestReads.request` the site's options are read in one query and kept, with the
timezone and the authors once first asked for; outside it every read goes to the store. Each
thread has its own (a threaded worker serves several requests at once).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, tzinfo
from typing import Any

from sitecache.auth.roles import SiteUser
from sitecache.auth.users import UserRepository
from sitecache.site.content import ContentService

__all__ = ["RequestReads"]


class RequestReads:
    """The per-request reads of the front site.

    Args:
        content: the content service (options, timezone).
        users: the user repository (authors); ``None`` for a site without users.
    """

    def __init__(self, content: ContentService, users: UserRepository | None) -> None:
        self.content = content
        self.users = users
        self._local = threading.local()

    @contextmanager
    def request(self) -> Iterator[None]:
        """Keep what is read until the block ends (one page request)."""
        self._local.options = self.content.options.all()
        try:
            yield
        finally:
            self._local.options = None
            self._local.timezone = None
            self._local.authors = None

    def _in_request(self) -> bool:
        return getattr(self._local, "options", None) is not None

    def option(self, name: str, fallback: Any = None) -> Any:
        """A site option (``fallback`` when it has no value)."""
        options: dict[str, Any] | None = getattr(self._local, "options", None)
        value = options.get(name) if options is not None else self.content.get_option(name)
        return fallback if value is None else value

    def timezone(self) -> tzinfo:
        """The site's timezone."""
        zone: tzinfo | None = getattr(self._local, "timezone", None)
        if zone is None:
            zone = self.content.timezone()
            if self._in_request():
                self._local.timezone = zone
        return zone

    def local_time(self, timestamp: int) -> datetime:
        """A UTC timestamp in the site's timezone."""
        return datetime.fromtimestamp(timestamp, self.timezone())

    def authors(self) -> dict[int, SiteUser]:
        """Every user, by id (the authors of posts)."""
        found: dict[int, SiteUser] | None = getattr(self._local, "authors", None)
        if found is None:
            found = {} if self.users is None else {user.id: user for user in self.users.all()}
            if self._in_request():
                self._local.authors = found
        return found
