"""Static-file mode (``static_files``): stored pages also written for a front web server.

When the setting is on, every page the cache stores that an anonymous visitor may be given by
a web server without asking Python (a 200 HTML page of a served host, no query string, no
variant, varying on nothing but ``Accept-Encoding``, whose lifetime is the ``max_age`` setting:
the web server cannot honour one the response states) is also written as
``<root>/<host>/<path>/index.html``, ``index.html.gz`` and ``index.html.br``, atomically. nginx
serves them with ``try_files``, ``gzip_static`` and, where its module is installed,
``brotli_static`` (`nginx_config`); everything else goes to gunicorn.

Purges remove the files of the purged URLs (soft purges too, so the web server falls through to
Python, which serves the stale page while one request regenerates it). A purge of everything
(or of the site) moves each host's directory out of the static root at once, into the *trash*
beside it (`StaticFiles.discard`: one rename per host, whatever the number of pages), so the web
server falls through to Python at once; the timers empty the trash in bounded slices
(`StaticFiles.empty_trash`). Expiry is enforced by `StaticFiles.sweep`, which the GC timer runs:
files older than ``max_age`` go.

A copy never outlives a purge: it is written for a page this process just stored or
just read from the storage, under the purge generation that store or read saw. Both files are
written under temporary names, then put in place under a lock the purges' removals take too,
and only while the generation has not moved: a purge that began meanwhile (its listener may
have looked for the files before they existed) leaves the copy unpublished; the next request
reads the page again and writes its copy if it is still current. Pages read from the
storage (not only those rendered) get their copy, so turning ``static_files`` on gives the
pages already cached their copy on their next request. Copies belong to one store
(`STORE_IDENTITY`): when the storage started again empty (a damaged disk index moved aside),
the copies of the old one are discarded before any purge or copy of the new one.

The web server reads the copies as its own user (Debian's nginx workers run as ``www-data``):
directories are made 0755 and files 0644 whatever the umask, and `unreadable_reason`
(`sitecache.cache.api.static_nginx`, with the server block) says when a directory on the way
to the static root (the 0700 data directory, say) keeps that user out. The static root
(``static_root``) therefore belongs outside the private data directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlsplit

from sitecache.cache.api.static_nginx import (
    DEFAULT_WEB_USER,
    NGINX_RULE_SETTINGS,
    NGINX_RULES_NAME,
    host_name,
    nginx_config,
    nginx_rules_fingerprint,
    outdated_nginx_rules,
    unreadable_reason,
    uploads_location,
)
from sitecache.cache.engine import CacheEngine
from sitecache.cache.entry import CacheEntry, coded_copy
from sitecache.cache.purging import PurgeResult
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
BROTLI_INDEX: Final = "index.html.br"
#: Every file of a page's static copy.
_COPY_FILES: Final = (INDEX, GZIP_INDEX, BROTLI_INDEX)
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
        #: the store the copies belong to (`STORE_IDENTITY`), shared by the machine's
        #: processes, beside the root as the trash is
        self.owner_file = self.root.parent / f".{self.root.name}.store"
        #: the publication lock (`_publishing`), beside the root
        self.lock_file = self.root.parent / f".{self.root.name}.lock"
        #: this process, in its announcements (it has applied its own purges already)
        self.token = uuid.uuid4().hex
        self._cursor: str | None = None
        self._next_sweep = 0.0
        self._owner: bytes | None = None
        self._owner_checked = False

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
        """Write the static copy of an eligible page stored just now, checked against the
        generation read here (`write_copy` with the generation of the store is exact)."""
        try:
            generation = self.engine.generation()
        except StorageError as exc:
            self.engine.storage_warning("static copy of %s not written: %s", entry.url, exc)
            return
        self.write_copy(entry, vary, generation)

    def write_copy(
        self,
        entry: CacheEntry,
        vary: tuple[str, ...],
        generation: object,
        stored: bool = True,
    ) -> None:
        """`PageCache.copy_writers`: write the static copy of an eligible, fresh page that was
        stored (``stored``) or read from the storage under the purge ``generation`` (a page
        read keeps the copy it has). Both files are written under temporary names, then put
        in place under the publication lock, which purges take to remove copies, only while
        the generation is still ``generation``: a purge that began after the page was stored
        or read either sees the copy and removes it, or the copy is never put in place."""
        if not self.eligible(entry, vary) or 0 < entry.expires <= self.engine.clock():
            return
        directory = self.directory(entry.url)
        if directory is None or (not stored and (directory / INDEX).is_file()):
            return
        gzip_body = entry.gzip_body or coded_copy("gzip", entry.body)
        brotli_body = entry.copy("br") or coded_copy("br", entry.body)
        written: list[tuple[str, Path]] = []
        try:
            self.check_owner()  # copies of a store that started again go first
            self._make_directories(directory)
            # The compressed copies first: the web server finds them once index.html is there.
            for path, data in (
                (directory / GZIP_INDEX, gzip_body),
                (directory / BROTLI_INDEX, brotli_body),
                (directory / INDEX, entry.body),
            ):
                written.append((_write_temporary(directory, data), path))
            with self._publishing():
                if self.engine.generation() != generation:
                    return  # a purge began since: this copy may show what it removed
                for temporary, path in written:
                    os.replace(temporary, path)
                written = []
        except (OSError, StorageError) as exc:
            self.engine.storage_warning("static copy of %s not written: %s", entry.url, exc)
        finally:
            for temporary, _ in written:
                Path(temporary).unlink(missing_ok=True)

    @contextlib.contextmanager
    def _publishing(self) -> Iterator[None]:
        """The publication lock of the machine's copies (a ``flock`` beside the root): held to
        put a copy in place and to remove the copies of a purge, so the two never cross.

        Raises:
            OSError: the lock file could not be opened.
        """
        descriptor = os.open(self.lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    def check_owner(self) -> None:
        """Discard every copy when the storage's store changed name since they were written
        (it lost every entry and started again: no purge would find those copies).

        Raises:
            StorageError: the storage failed (nothing was discarded).
        """
        current = self.engine.store_identity()
        if self._owner_checked and current == self._owner:
            return
        recorded: bytes | None
        try:
            recorded = self.owner_file.read_bytes()
        except FileNotFoundError:
            recorded = None
        except OSError as exc:
            logger.warning("static copies' store %s unreadable (%s)", self.owner_file, exc)
            recorded = b"?"
        if recorded != (current or b""):
            if recorded is not None and self._has_copies():
                logger.warning("the cache storage started again empty: removing every copy")
                self.discard(None)
            try:
                _write_atomic(self.owner_file, current or b"")
            except OSError as exc:
                logger.warning("static copies' store %s not written: %s", self.owner_file, exc)
                return
        self._owner, self._owner_checked = current, True

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
            for name in _COPY_FILES:
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
        try:
            self.check_owner()
        except StorageError as exc:
            self.engine.storage_warning("static copies' store not checked: %s", exc)
        try:
            with self._publishing():
                self._apply(result.scope, result.urls)
        except OSError as exc:  # no lock file: remove them anyway
            logger.warning("static copies' lock unusable (%s)", exc)
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
        if self._owner_checked or self._has_copies():
            self.check_owner()
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
        wanted = None if hosts is None else {host_name(host) for host in hosts}
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


def _write_temporary(directory: Path, data: bytes) -> str:
    """``data`` written to a new hidden file of ``directory`` (0644); its path.

    Raises:
        OSError: it could not be written (nothing is left behind).
    """
    handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.chmod(temporary, FILE_MODE)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


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
