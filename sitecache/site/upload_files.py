"""`UploadFiles`: the uploaded media files on disk, and how the site serves them.

Files live under the uploads directory (``<data_dir>/uploads`` unless ``uploads_root`` says
otherwise) as ``YYYY/MM/<name>-<token>.<ext>``: the name is made here (letters, digits and
hyphens from the client's file name, which is never used as a path), the extension is the one
of the checked type. A file is written to a temporary file in its own directory, flushed to
disk and renamed into place, so a reader never sees half a file and a failure leaves none (a
full disk answers 507 ``site_storage_full``, an unwritable directory 503 ``site_unavailable``).
Directories are made 0755 and files 0644 whatever the umask, so a web server running as
another user (nginx's ``www-data``) can serve them directly (``sitecache nginx-config``).

The site answers ``GET /uploads/<path>`` itself too (`UploadFiles.respond`): the file's type
from the table of known types, ``nosniff``, a strong ``ETag``, ``Last-Modified`` and a year of
caching (a stored name never changes content); any other path, a dot file or one outside the
directory is a 404.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from werkzeug.security import safe_join
from werkzeug.utils import send_file
from werkzeug.wrappers import Request, Response

from sitecache.domain_errors import OutageError, StorageFullError, UnavailableError
from sitecache.rest.plain_responses import method_not_allowed
from sitecache.site.upload_types import FileType, type_of_extension

__all__ = ["UPLOADS_PATH", "UploadFiles", "safe_stem"]

UPLOADS_PATH: Final = "/uploads/"
"""Where the site serves uploaded files."""
DIRECTORY_MODE: Final = 0o755
FILE_MODE: Final = 0o644
CACHE_CONTROL: Final = "public, max-age=31536000, immutable"
_NOT_NAME: Final = re.compile(r"[^a-z0-9]+")
_STORED: Final = re.compile(r"^\d{4}/\d{2}/[a-z0-9][a-z0-9-]{0,80}\.[a-z0-9]{1,8}$")


def safe_stem(filename: str) -> str:
    """A file name stem made of lowercase ASCII letters, digits and hyphens from a client's
    file name: only its last path part counts (``/`` and ``\\`` both separate), control
    characters and NUL go, accents are folded, at most 60 characters; ``file`` when nothing is
    left. The result can never name a directory or climb out of one."""
    last = re.split(r"[/\\]", filename)[-1]
    last = "".join(char for char in last if unicodedata.category(char)[0] != "C")
    stem = last.rsplit(".", 1)[0] if "." in last.lstrip(".") else last
    folded = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii")
    return _NOT_NAME.sub("-", folded.lower()).strip("-")[:60].strip("-") or "file"


class UploadFiles:
    """The uploaded files under ``root``.

    Args:
        root: the uploads directory (made 0755 when first needed).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def save(self, data: bytes, file_type: FileType, client_name: str, when: int) -> str:
        """Write ``data`` atomically as a new file and return its path below the root
        (``YYYY/MM/<stem>-<token>.<ext>``, the month of ``when``, UTC).

        The temporary file is flushed to disk before it is renamed, and removed when
        anything fails (nothing is left behind).

        Raises:
            StorageFullError: ``site_storage_full``, no space left on the uploads' disk.
            UnavailableError: ``site_unavailable``, the uploads directory cannot be written.
            OSError: the file could not be written for another reason.
        """
        try:
            return self._save(data, file_type, client_name, when)
        except OSError as exc:
            refusal = _refusal(exc)
            if refusal is None:
                raise
            raise refusal from exc

    def _save(self, data: bytes, file_type: FileType, client_name: str, when: int) -> str:
        moment = datetime.fromtimestamp(when, UTC)
        relative = f"{moment:%Y}/{moment:%m}"
        directory = self.root / relative
        self._make_directories(directory)
        stem = safe_stem(client_name)
        name = f"{stem}-{secrets.token_hex(6)}.{file_type.extension}"
        final = directory / name
        temporary = directory / f".tmp-{secrets.token_hex(8)}"
        try:
            descriptor = os.open(
                temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600
            )
            with os.fdopen(descriptor, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.chmod(temporary, FILE_MODE)
            if final.exists():  # pragma: no cover - a 48-bit token collided
                raise FileExistsError(final)
            os.replace(temporary, final)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        _sync_directory(directory)
        return f"{relative}/{name}"

    def _make_directories(self, directory: Path) -> None:
        """``directory`` and its parents below (and including) the root, 0755."""
        missing = [directory, *directory.parents]
        for path in reversed(missing):
            if path != self.root and self.root not in path.parents:
                continue
            if not path.is_dir():
                path.mkdir(exist_ok=True)
                os.chmod(path, DIRECTORY_MODE)

    def path_of(self, relative: str) -> Path | None:
        """The file a stored relative path names, or ``None`` when it is not one this store
        could have written (traversal, dot files, another shape)."""
        if not _STORED.match(relative):
            return None
        joined = safe_join(str(self.root), relative)
        return Path(joined) if joined is not None else None

    def delete(self, relative: str) -> bool:
        """Remove a stored file; whether it existed."""
        path = self.path_of(relative)
        if path is None:
            return False
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def hide(self, relative: str) -> Path | None:
        """Move a stored file out of its served name (a dot name beside it, never served);
        the hidden path, or ``None`` when there was no such file. `restore` puts it back,
        `discard` removes it."""
        path = self.path_of(relative)
        if path is None or not path.is_file():
            return None
        hidden = path.with_name(f".deleted-{secrets.token_hex(8)}")
        os.replace(path, hidden)
        return hidden

    def restore(self, hidden: Path | None, relative: str) -> None:
        """Put a file `hide` moved back under its served name."""
        path = self.path_of(relative)
        if hidden is not None and path is not None:
            os.replace(hidden, path)

    @staticmethod
    def discard(hidden: Path | None) -> None:
        """Remove a file `hide` moved away."""
        if hidden is not None:
            hidden.unlink(missing_ok=True)

    def url_path(self, relative: str) -> str:
        """The site path a stored file is served at (``/uploads/YYYY/MM/name.ext``)."""
        return UPLOADS_PATH + relative

    def respond(self, request: Request) -> Response:
        """Answer ``GET``/``HEAD /uploads/<path>``: the file with its type, ``nosniff``, a
        strong ``ETag``, ``Last-Modified``, a year of caching and range requests; 404 for
        anything that is not a stored file, 405 for other methods."""
        if request.method not in ("GET", "HEAD"):
            return method_not_allowed("GET, HEAD")
        relative = request.path[len(UPLOADS_PATH) :]
        path = self.path_of(relative)
        file_type = type_of_extension(relative.rsplit(".", 1)[-1])
        if path is None or file_type is None or not path.is_file():
            return _not_found()
        response = send_file(
            path,
            request.environ,
            mimetype=file_type.mime,
            conditional=True,
            etag=True,
            max_age=31536000,
        )
        if response.status_code == 304 or request.method == "HEAD":
            # No body goes out: close the file werkzeug opened (it would wait for the GC).
            response.close()
        response.headers["Cache-Control"] = CACHE_CONTROL
        # SECURITY: the browser keeps the type we send (no sniffing into HTML), and a type
        # that can run scripts is a download in a sandbox, never a page of this site.
        response.headers["X-Content-Type-Options"] = "nosniff"
        if file_type.active:
            response.headers["Content-Disposition"] = "attachment"
            response.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
        return response


#: The failures of a file write that are the disk's, not the request's.
_FULL: Final = frozenset({errno.ENOSPC, errno.EDQUOT})
_UNWRITABLE: Final = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def _refusal(exc: OSError) -> OutageError | None:
    """The outage a failed file write is (the disk full: 507; the directory not writable:
    503), or ``None`` for another failure."""
    if exc.errno in _FULL:
        return StorageFullError(
            "site_storage_full",
            "The site's disk has no space left for this file; nothing was saved. "
            "Try again once space is freed.",
            60,
        )
    if exc.errno in _UNWRITABLE:
        return UnavailableError(
            "site_unavailable",
            "The site's uploads directory cannot be written right now; nothing was saved.",
            60,
        )
    return None


def _not_found() -> Response:
    response = Response("Not found.\n", status=404, mimetype="text/plain")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _sync_directory(directory: Path) -> None:
    """Flush a directory entry (the rename) to disk where the system allows it."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        # Some file systems refuse fsync on a directory: the rename stands regardless.
        with contextlib.suppress(OSError):
            os.fsync(descriptor)
    finally:
        os.close(descriptor)
