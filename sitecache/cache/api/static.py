"""Static-file mode (``static_files``): stored pages also written for a front web server.

When the setting is on, every page the cache stores that an anonymous visitor may be given by
a web server without asking Python (a 200 HTML page of a served host, no query string, no
variant, varying on nothing but ``Accept-Encoding``, whose lifetime is the ``max_age`` setting:
the web server cannot honour one the response states) is also written as
``<root>/<host>/<path>/index.html`` and ``index.html.gz``, atomically. nginx serves them with
``try_files`` and ``gzip_static`` (`nginx_config`); everything else goes to gunicorn.

Purges remove the files of the purged URLs (soft purges too, so the web server falls through to
Python, which serves the stale page while one request regenerates it). A purge of everything
(or of the site) moves each host's directory out of the static root at once, into the *trash*
beside it (`StaticFiles.discard`: one rename per host, whatever the number of pages), so the web
server falls through to Python at once; the timers empty the trash in bounded slices
(`StaticFiles.empty_trash`). Expiry is enforced by `StaticFiles.sweep`, which the GC timer runs:
files older than ``max_age`` go.

The web server reads the copies as its own user (Debian's nginx workers run as ``www-data``):
directories are made 0755 and files 0644 whatever the umask, and `unreadable_reason` says when
a directory on the way to the static root (the 0700 data directory, say) keeps that user out.
The static root (``static_root``) therefore belongs outside the private data directory.
"""

from __future__ import annotations

import contextlib
import grp
import hashlib
import json
import logging
import os
import pwd
import re
import stat
import tempfile
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from sitecache.cache.engine import CacheEngine
from sitecache.cache.entry import CacheEntry, gzip_copy
from sitecache.cache.policy import AUTH_COOKIE_PREFIXES
from sitecache.cache.purging import PurgeResult
from sitecache.cache.settings import DEFAULT_SETTINGS
from sitecache.cache.storage import StorageError

__all__ = [
    "DEFAULT_WEB_USER",
    "NGINX_RULES_NAME",
    "NGINX_RULE_SETTINGS",
    "StaticFiles",
    "nginx_config",
    "nginx_rules_fingerprint",
    "outdated_nginx_rules",
    "unreadable_reason",
    "uploads_location",
]

logger = logging.getLogger("sitecache.cache.static")

INDEX: Final = "index.html"
GZIP_INDEX: Final = "index.html.gz"
#: the user Debian's (and Ubuntu's) nginx workers run as
DEFAULT_WEB_USER: Final = "www-data"
DIRECTORY_MODE: Final = 0o755
FILE_MODE: Final = 0o644


class StaticFiles:
    """Writes, removes and expires the static copies of stored pages.

    Args:
        engine: the cache engine (its settings say whether the mode is on).
        root: the static root (one directory per host below it).
    """

    def __init__(self, engine: CacheEngine, root: Path) -> None:
        self.engine = engine
        self.root = Path(root)
        #: where discarded host directories wait for `empty_trash`: beside the root (same
        #: file system, so a rename), never under it (the web server must not serve it)
        self.trash = self.root.parent / f".{self.root.name}.trash"
        #: how far this machine has followed the purges other machines announced (`follow`),
        #: shared by the machine's processes, beside the root as the trash is
        self.cursor_file = self.root.parent / f".{self.root.name}.cursor"
        #: this process, in its announcements (it has applied its own purges already)
        self.token = uuid.uuid4().hex
        self._cursor: str | None = None
        self._next_sweep = 0.0

    # ------------------------------------------------------------------ paths
    def directory(self, url: str) -> Path | None:
        """The directory of ``url``'s files, or ``None`` when it has no static copy."""
        parts = urlsplit(url)
        if parts.query or not parts.hostname:
            return None
        host = parts.hostname.lower()
        try:
            path = unquote(parts.path or "/", errors="strict")
        except UnicodeDecodeError:  # not UTF-8: nginx could not name such a file either
            return None
        segments = [segment for segment in path.split("/") if segment]
        # SECURITY: nothing outside the root: no dot segments, separators or control bytes.
        # Segments starting with "." are refused too: nginx_config's bypass value uses one.
        for segment in (host, *segments):
            if (
                segment.startswith(".")
                or "\\" in segment
                or any(ord(char) < 32 or ord(char) == 127 for char in segment)
                or len(segment) > 200
            ):
                return None
        directory = self.root.joinpath(host, *segments)
        try:
            directory.resolve().relative_to(self.root.resolve())
        except ValueError:
            return None
        return directory

    # ------------------------------------------------------------------ writing
    def eligible(self, entry: CacheEntry, vary: tuple[str, ...]) -> bool:
        """Whether a web server may hand ``entry`` to any anonymous visitor without Python."""
        settings = self.engine.settings()
        if not settings.static_files or settings.mobile:
            return False
        # The web server expires copies by max_age alone: not for a page stating its lifetime.
        if entry.status != 200 or entry.variant or vary or "?" in entry.url or entry.encoded:
            return False
        if entry.fresh.rule != "max_age":
            return False
        content_type = next(
            (value for name, value in entry.headers if name.lower() == "content-type"), ""
        )
        return content_type.lower().startswith("text/html")

    def on_stored(self, entry: CacheEntry, vary: tuple[str, ...]) -> None:
        """`PageCache.stored_listeners`: write the static copy of an eligible page."""
        if not self.eligible(entry, vary):
            return
        directory = self.directory(entry.url)
        if directory is None:
            return
        gzip_body = entry.gzip_body or gzip_copy(entry.body)
        try:
            self._make_directories(directory)
            _write_atomic(directory / INDEX, entry.body)
            _write_atomic(directory / GZIP_INDEX, gzip_body)
        except OSError as exc:
            self.engine.storage_warning("static copy of %s not written: %s", entry.url, exc)

    def _make_directories(self, directory: Path) -> None:
        """Create ``directory`` and the missing ones above it (up to the static root's
        parent), each 0755 whatever the umask, so the web server's user can enter them."""
        missing: list[Path] = []
        current = directory
        while not current.is_dir():
            missing.append(current)
            if current == current.parent:
                break
            current = current.parent
        for path in reversed(missing):
            try:
                path.mkdir(mode=DIRECTORY_MODE)
            except FileExistsError:
                continue  # another thread or process made it
            os.chmod(path, DIRECTORY_MODE)

    # ------------------------------------------------------------------ removing
    def remove(self, urls: Iterable[str]) -> int:
        """Remove the static copies of ``urls``; how many files went."""
        removed = 0
        for url in urls:
            directory = self.directory(url)
            if directory is None:
                continue
            for name in (INDEX, GZIP_INDEX):
                try:
                    (directory / name).unlink()
                    removed += 1
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    logger.warning("static copy %s not removed: %s", directory / name, exc)
        return removed

    def on_purge(self, result: PurgeResult) -> None:
        """The engine's purge listener: the purged pages lose their static copies (a purge
        of everything or of the site: every copy of every host, or of the site's hosts), here
        at once and, through the storage's announcements, on every other machine sharing the
        storage within a tick (`follow`)."""
        self._apply(result.scope, result.urls)
        record: dict[str, object] = {"from": self.token, "scope": result.scope}
        if result.scope not in ("all", "site"):
            record["urls"] = result.urls
        try:
            self.engine.announce(json.dumps(record).encode())
        except StorageError as exc:
            # The other machines' copies then go at their next `follow` that finds a gap, or
            # by age (`sweep`); the purge itself is done.
            self.engine.storage_warning("purge not announced to the other machines: %s", exc)

    def _apply(self, scope: str, urls: list[str]) -> int:
        """Remove the static copies a purge of ``scope`` (its ``urls``) covers; how many
        files or host directories went."""
        if scope == "all":
            return self.discard(None)
        if scope == "site":
            hosts = self.engine.rules.hosts
            return self.discard(None if hosts is None else hosts)
        return self.remove(urls)

    def follow(self, now: float | None = None) -> int:
        """Every tick of every process (`CacheTimers.every_tick`): apply the purges the other
        machines sharing the storage announced since this machine last looked, and remove this
        machine's copies older than ``max_age`` once per ``gc_interval``. Where the record of
        what was announced has a gap (this machine fell more than the storage keeps behind, or
        never looked while it had copies), every copy goes: it may be stale. How many files or
        host directories went. A storage one machine holds announces nothing (no work).

        Raises:
            StorageError: the storage failed (the timers log it; the next tick tries again).
        """
        now = time.time() if now is None else now
        removed = 0
        if now >= self._next_sweep:
            self._next_sweep = now + self.engine.settings().gc_interval
            removed += self.sweep()
        if not (self.engine.settings().static_files or self._has_copies()):
            return removed  # nothing nginx could serve: nothing to follow
        cursor = self._cursor if self._cursor is not None else self._read_cursor()
        feed = self.engine.announcements(cursor)
        if feed is None:
            return removed
        if not feed.complete or (cursor is None and self._has_copies()):
            logger.warning("static copies of unknown age (purges missed): removing them all")
            removed += self.discard(None)
        for raw in feed.records:
            try:
                record = json.loads(raw)
                if record.get("from") == self.token:
                    continue
                removed += self._apply(
                    str(record["scope"]), [str(u) for u in record.get("urls", [])]
                )
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                logger.warning("an unreadable purge announcement (%s): removing every copy", exc)
                removed += self.discard(None)
        if feed.cursor != cursor:
            self._write_cursor(feed.cursor)
        self._cursor = feed.cursor
        return removed

    def _has_copies(self) -> bool:
        try:
            return any(self.root.iterdir())
        except FileNotFoundError:
            return False

    def _read_cursor(self) -> str | None:
        try:
            text = self.cursor_file.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            logger.warning(
                "purge cursor %s unreadable (%s): starting afresh", self.cursor_file, exc
            )
            return None
        return text if text.isdigit() else None

    def _write_cursor(self, cursor: str) -> None:
        try:
            self.cursor_file.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(self.cursor_file, cursor.encode("ascii"))
        except OSError as exc:
            logger.warning("purge cursor %s not written: %s", self.cursor_file, exc)

    def discard(self, hosts: Iterable[str] | None) -> int:
        """Take the copies of ``hosts`` (``host`` or ``host:port``; every host when ``None``)
        out of the web server's sight at once: each host directory is renamed into the trash,
        which `empty_trash` empties later. How many directories went.

        Where the trash cannot be written (a read-only parent, another file system), the
        copies are deleted instead, for at most a second (the rest by `sweep`).
        """
        if not self.root.is_dir():
            return 0
        wanted = None if hosts is None else {_host_name(host) for host in hosts}
        moved = 0
        for directory in sorted(self.root.iterdir()):
            if wanted is not None and directory.name not in wanted:
                continue
            try:
                self.trash.mkdir(mode=0o700, exist_ok=True)
                os.rename(directory, self.trash / f"{uuid.uuid4().hex}-{directory.name}")
                moved += 1
            except FileNotFoundError:
                continue  # another process moved it first
            except OSError as exc:
                logger.warning(
                    "static copies of %s not moved aside (%s): deleting them", directory, exc
                )
                self._delete_tree(directory, time.monotonic() + 1.0)
        return moved

    def empty_trash(self, budget: float = 0.1) -> int:
        """Delete discarded copies for at most ``budget`` seconds (the timers run it on each
        tick); how many files went."""
        if not self.trash.is_dir():
            return 0
        removed = self._delete_tree(self.trash, time.monotonic() + budget)
        with contextlib.suppress(OSError):
            self.trash.rmdir()  # empty now (or refilled meanwhile: it stays)
        return removed

    @staticmethod
    def _delete_tree(top: Path, deadline: float) -> int:
        """Delete the files under ``top`` and the directories they empty, until ``deadline``
        (monotonic time); how many files went."""
        removed = 0
        for directory, _, names in os.walk(top, topdown=False):
            for name in names:
                if time.monotonic() > deadline:
                    return removed
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(directory, name))
                    removed += 1
            if directory != str(top):
                with contextlib.suppress(OSError):
                    os.rmdir(directory)
        return removed

    def sweep(self, max_age: float | None = None, budget: float = 0.25) -> int:
        """Remove static files older than ``max_age`` seconds (the setting when ``None``;
        ``0`` removes every file), for at most ``budget`` seconds; how many went."""
        if not self.root.is_dir():
            return 0
        if max_age is None:
            settings = self.engine.settings()
            max_age = float(settings.max_age)
            if max_age <= 0 and settings.static_files:
                return 0  # fresh until purged
        deadline = time.monotonic() + budget
        cutoff = time.time() - max_age
        removed = 0
        for directory, _, names in os.walk(self.root):
            for name in names:
                if time.monotonic() > deadline:
                    return removed
                path = Path(directory) / name
                try:
                    if max_age == 0 or path.stat().st_mtime <= cutoff:
                        path.unlink()
                        removed += 1
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    logger.warning("static copy %s not removed: %s", path, exc)
        return removed


def _host_name(host: str) -> str:
    """The directory name of ``host`` (``example.org:8000`` -> ``example.org``, as
    `StaticFiles.directory` names it)."""
    return (urlsplit(f"//{host}").hostname or host).lower()


def _write_atomic(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.chmod(temporary, FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def unreadable_reason(root: Path, user: str) -> str | None:
    """Why ``user`` could not read files under ``root``, or ``None`` when it can.

    Every existing directory from ``/`` down to ``root`` must let the user in (search
    permission for its owner, one of its groups, or others); ``root`` itself, when it exists,
    must also be listable. A ``root`` that does not exist yet is created 0755 by sitecache.
    """
    try:
        account = pwd.getpwnam(user)
    except KeyError:
        return (
            f"there is no user {user!r} on this machine: pass --user with the user nginx's "
            "workers run as"
        )
    groups = {account.pw_gid} | {g.gr_gid for g in grp.getgrall() if user in g.gr_mem}
    if account.pw_uid == 0:
        return None
    path = Path(root).resolve()
    for directory in [*reversed(path.parents), path]:
        try:
            info = directory.stat()
        except FileNotFoundError:
            return None  # sitecache creates the rest 0755
        except OSError as exc:
            return f"{directory} cannot be checked: {exc.strerror}"
        needed = (stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH)
        if directory == path:
            needed = (stat.S_IXUSR | stat.S_IRUSR, stat.S_IXGRP | stat.S_IRGRP,
                      stat.S_IXOTH | stat.S_IROTH)  # fmt: skip
        if info.st_uid == account.pw_uid:
            mask = needed[0]
        elif info.st_gid in groups:
            mask = needed[1]
        else:
            mask = needed[2]
        if info.st_mode & mask != mask:
            return (
                f"{user} cannot enter {directory} (mode {stat.S_IMODE(info.st_mode):04o}, owner "
                f"uid {info.st_uid}): put static_root outside private directories such as the "
                "data directory (for example /var/cache/sitecache/static), or let that user "
                "search every directory on the way"
            )
    return None


#: The server block of static-file mode (`nginx_config` fills it in; ``{{``/``}}`` are braces).
NGINX_TEMPLATE: Final = """\
# sitecache static-file mode (static_files = true): nginx answers cached pages from
# {root}; everything else goes to sitecache. Set proxy_count = 1 in sitecache.
# Made for the cache settings {made_for}:
# run `sitecache nginx-config` again (and reload nginx) after changing them
# (`sitecache cache status` warns when they differ).
# nginx's workers (user {user}) must be able to read {root} and enter every directory
# above it: keep it outside sitecache's private data directory (static_root).
upstream sitecache {{
    server {upstream};
}}

server {{
    listen {listen};
    server_name {server_name};
    root {root};
    gzip_static on;
    gzip_vary on;
    charset utf-8;

    set $sitecache_static $uri;
    if ($request_method !~ ^(GET|HEAD)$) {{ set $sitecache_static "/.sitecache-bypass"; }}
    if ($query_string != "") {{ set $sitecache_static "/.sitecache-bypass"; }}
    if ($http_authorization != "") {{ set $sitecache_static "/.sitecache-bypass"; }}
    if ($http_cookie ~* "({cookies})") {{ set $sitecache_static "/.sitecache-bypass"; }}
{extra_rules}
    location / {{
        default_type text/html;
        # The headers sitecache sends with its own pages (a copy must not lose them).
{added}        add_header Cache-Status "nginx; hit" always;
        try_files /$host$sitecache_static/index.html @sitecache;
    }}

{uploads}
    location @sitecache {{
        proxy_pass http://sitecache;
        # The Host as the client sent it (with its port): the cache keys exactly that host.
        # No X-Forwarded-Port: the port is already in the host, said once.
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-Host $http_host;
    }}
}}
"""


#: The uploaded media files, served by nginx from the uploads directory (`nginx_config`).
NGINX_UPLOADS_TEMPLATE: Final = """\
    # Uploaded media (static files with generated names): served from {root}.
    location /uploads/ {{
        alias {root}/;
        types {{
{types}        }}
        default_type application/octet-stream;
        location ~ /\\. {{ return 404; }}
        location ~* \\.(svg|html?)$ {{
            # Types that can run scripts: a download in a sandbox, never a page of the site.
            add_header X-Content-Type-Options nosniff always;
            add_header Cache-Control "public, max-age=31536000, immutable" always;
            add_header Content-Disposition attachment always;
            add_header Content-Security-Policy "default-src 'none'; sandbox" always;
        }}
        add_header X-Content-Type-Options nosniff always;
        add_header Cache-Control "public, max-age=31536000, immutable" always;
        etag on;
    }}
"""


def uploads_location(
    uploads_root: Path | None,
    types: Mapping[str, str] | None = None,
    unreadable: str | None = None,
) -> str:
    """The ``location /uploads/`` block serving ``uploads_root`` with the ``Content-Type`` of
    each extension in ``types`` (extension → MIME type; anything else is
    ``application/octet-stream``), or, when nginx's user cannot read it (``unreadable`` says
    why), a comment: sitecache serves them instead."""
    if uploads_root is None:
        return ""
    if unreadable is not None:
        reason = unreadable.replace("\n", " ")
        return f"    # /uploads/ is passed to sitecache (uploads_root unreadable): {reason}\n"
    listed = "".join(
        f"            {mime} {extension};\n"
        for extension, mime in sorted((types or {}).items())
        if _NGINX_TOKEN.match(mime) and _NGINX_TOKEN.match(extension)
    )
    return NGINX_UPLOADS_TEMPLATE.format(root=str(Path(uploads_root).resolve()), types=listed)


_NGINX_TOKEN: Final = re.compile(r"^[A-Za-z0-9.+/-]+$")
"""A MIME type or an extension nginx reads as one word (nothing else is written)."""


#: The cache settings the web server's rules carry (`nginx_config`): a visitor they would send
#: to Python must never be given a static copy by nginx.
NGINX_RULE_SETTINGS: Final = ("known_users", "rejected_cookies", "rejected_user_agents")
#: The named value holding the fingerprint of the settings the printed rules were made for.
NGINX_RULES_NAME: Final = "nginx_rules"


def nginx_rules_fingerprint(settings: Mapping[str, Any]) -> str:
    """The fingerprint of the settings nginx's rules depend on (`NGINX_RULE_SETTINGS`)."""
    chosen = {name: settings.get(name) for name in NGINX_RULE_SETTINGS}
    text = json.dumps(chosen, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def outdated_nginx_rules(engine: CacheEngine) -> str | None:
    """Why the rules `sitecache nginx-config` last printed no longer fit the settings (a
    ``/status`` warning), or ``None``: they fit, static-file mode is off, or no rules were
    printed for this storage."""
    if not engine.settings().static_files:
        return None
    stored = engine.read_value(NGINX_RULES_NAME)
    if stored is None or stored.decode("ascii", "replace") == nginx_rules_fingerprint(
        engine.settings_values()
    ):
        return None
    return (
        "static-file mode: known_users, rejected_cookies or rejected_user_agents changed since "
        "`sitecache nginx-config` printed nginx's rules, and nginx still hands its copies to "
        "the visitors they now exclude: run `sitecache nginx-config` again and reload nginx"
    )


def nginx_config(
    *,
    server_name: str,
    static_root: Path,
    upstream: str = "127.0.0.1:8000",
    listen: str = "80",
    cookie_prefixes: Iterable[str] = AUTH_COOKIE_PREFIXES,
    headers: Mapping[str, str] | None = None,
    user: str = DEFAULT_WEB_USER,
    uploads: str = "",
    settings: Mapping[str, Any] | None = None,
) -> str:
    """An nginx ``server`` block for static-file mode.

    Anonymous ``GET``/``HEAD`` requests without a query string, credentials or a logged-in,
    comment-author or post-password cookie get the static copy when one exists
    (``gzip_static on`` sends ``index.html.gz`` to clients that accept gzip, with
    ``Vary: Accept-Encoding``); everything else is proxied to sitecache (run it with
    ``proxy_count = 1``). ``headers`` are sent with every copy, as sitecache sends them with
    its own pages (security headers, the API ``Link``); ``user`` is the user nginx's workers
    run as, who must be able to read the static root. ``uploads`` is the uploaded media's
    block (`uploads_location`). ``settings`` (the cache's) add their bypasses
    (`NGINX_RULE_SETTINGS`): ``rejected_cookies`` to the cookie prefixes, a user-agent rule
    for ``rejected_user_agents``, and any cookie at all with ``known_users`` =
    ``bypass_any_cookie``.

    Raises:
        ValueError: a header value or a setting cannot be written in nginx's syntax (a ``$``,
            a quote in a header, a control character).
    """
    settings = settings or {}
    prefixes = [*cookie_prefixes, *settings.get("rejected_cookies", ())]
    cookies = "|".join(sorted({_nginx_regex(prefix) for prefix in prefixes}))
    bypass = '{ set $sitecache_static "/.sitecache-bypass"; }'
    extra_rules = ""
    if settings.get("known_users") == "bypass_any_cookie":
        extra_rules += f'    if ($http_cookie != "") {bypass}\n'
    rejected_agents = settings.get("rejected_user_agents", ())
    agents = sorted({_nginx_regex(agent.lower()) for agent in rejected_agents})
    if agents:
        extra_rules += f'    if ($http_user_agent ~* "({"|".join(agents)})") {bypass}\n'
    made_for = ", ".join(
        f"{name}={json.dumps(settings.get(name, DEFAULT_SETTINGS[name]))}"
        for name in NGINX_RULE_SETTINGS
    )
    root = str(Path(static_root).resolve())
    added = "".join(
        f"        add_header {name} {_nginx_string(value)} always;\n"
        for name, value in (headers or {}).items()
    )
    return NGINX_TEMPLATE.format(
        root=root, user=user, upstream=upstream, listen=listen, server_name=server_name,
        cookies=cookies, added=added, uploads=uploads, extra_rules=extra_rules,
        made_for=_nginx_comment(made_for),
    )  # fmt: skip


def _nginx_string(value: str) -> str:
    """``value`` as one double-quoted nginx string.

    Raises:
        ValueError: ``value`` holds a ``$`` (nginx would read a variable) or a line break.
    """
    if "$" in value or "\n" in value or "\r" in value:
        raise ValueError(f"header value {value!r} cannot be written in an nginx configuration")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _nginx_regex(text: str) -> str:
    """``text`` as a literal in an nginx regular expression inside a double-quoted string:
    every character but letters, digits and ``_`` escaped.

    Raises:
        ValueError: ``text`` holds a control character (no literal can carry it).
    """
    if any(ord(char) < 32 or ord(char) == 127 for char in text):
        raise ValueError(f"{text!r} cannot be written in an nginx configuration")
    return "".join(f"\\{char}" if not (char.isalnum() or char == "_") else char for char in text)


def _nginx_comment(text: str) -> str:
    """``text`` for one comment line (control characters and non-ASCII escaped)."""
    return text.encode("ascii", "backslashreplace").decode("ascii").replace("\n", " ")
