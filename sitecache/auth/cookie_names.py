"""The name of the login session's cookie, apart from the sessions that set and read it: the
page cache bypasses requests carrying it without loading the sessions (or werkzeug's cookie
parser) into a command that only purges."""

from __future__ import annotations

from typing import Final

__all__ = ["COOKIE_NAME"]

#: the cookie holding a login session's token (`sitecache.auth.sessions`)
COOKIE_NAME: Final = "sitecache_session"
