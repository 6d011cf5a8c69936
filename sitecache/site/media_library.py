"""`MediaLibrary`: attachments, a post of type ``attachment`` plus its file.

An attachment is a row of ``posts`` (type ``attachment``, status ``inherit``; the title, the
caption as the excerpt, the description as the content, the parent post, the MIME type) and a
row of ``attachments`` (the file below the uploads directory, the client's file name, size,
image dimensions, alternative text). An upload is checked (size and type from the options,
content against type), written to disk atomically, then recorded in one transaction; when the
record fails, the file is removed, so a failed upload leaves neither a file nor a row.
Deleting removes the rows, then the file; after the commit the action
``deleted_upload_file(post_id, path)`` fires (``path``: the file's site path, ``/uploads/...``)
so that the page cache drops its copy.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from sitecache.auth.db import Row
from sitecache.auth.store import sql_values
from sitecache.domain_errors import InvalidValueError, NotFoundError
from sitecache.site.content import ContentService
from sitecache.site.models import Post
from sitecache.site.queries import placeholders
from sitecache.site.upload_files import UploadFiles
from sitecache.site.upload_types import inspect_upload

__all__ = ["Attachment", "AttachmentFile", "MediaLibrary", "display_name"]

logger = logging.getLogger(__name__)

_POST_FIELDS: Final = frozenset(
    {"title", "excerpt", "content", "parent", "author", "slug", "date_gmt"}
)


@dataclass(frozen=True, slots=True)
class AttachmentFile:
    """The file of an attachment: its path below the uploads directory and what it is."""

    file: str
    filename: str
    filesize: int
    width: int
    height: int
    alt_text: str


@dataclass(frozen=True, slots=True)
class Attachment:
    """An attachment post and its file."""

    post: Post
    file: AttachmentFile


def display_name(client_name: str) -> str:
    """The last part of a client's file name without control characters (NUL included),
    at most 190 characters: what a title may show, never a path."""
    last = client_name.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(char for char in last if unicodedata.category(char)[0] != "C")[:190]


class MediaLibrary:
    """Attachments in the site database and their files on disk.

    Args:
        content: the content service (its options give the limits).
        files: the uploaded files.
    """

    def __init__(self, content: ContentService, files: UploadFiles) -> None:
        self.content = content
        self.files = files

    # ------------------------------------------------------------------ reading
    def files_of(self, post_ids: Sequence[int]) -> dict[int, AttachmentFile]:
        """The files of these attachments, by post id (ids without one are left out)."""
        if not post_ids:
            return {}
        rows = self.content.store.connection().execute(
            "SELECT post_id, file, filename, filesize, width, height, alt_text FROM attachments"
            f" WHERE post_id IN ({placeholders(post_ids)})",
            sql_values(post_ids),
        )
        return {int(row[0]): _file_from_row(row) for row in rows}

    def get(self, post_id: int) -> Attachment | None:
        """The attachment with this id, or ``None`` (no such post, or not an attachment)."""
        post = self.content.get_post(post_id)
        if post is None or post.type != "attachment":
            return None
        found = self.files_of([post_id]).get(post_id)
        return None if found is None else Attachment(post, found)

    def max_bytes(self) -> int:
        """The largest upload allowed (option ``upload_max_bytes``)."""
        return int(self.content.get_option("upload_max_bytes"))

    # ------------------------------------------------------------------ writing
    def upload(
        self, data: bytes, declared_type: str, client_name: str, **fields: Any
    ) -> Attachment:
        """Check, store and record one uploaded file; the new attachment.

        ``fields`` are post columns (``title``, ``excerpt`` as the caption, ``content`` as
        the description, ``parent``, ``author``, ``slug``) and ``alt_text``. The title
        defaults to the client's file name without its extension.

        Raises:
            InvalidValueError: ``rest_upload_no_data`` (empty), ``rest_upload_file_too_big``
                (over ``upload_max_bytes``), ``rest_upload_sideload_error`` (a type not in
                ``upload_mime_types``, or content that is not of the declared type).
            OSError: the file could not be written (nothing is left behind).
        """
        if not data:
            raise InvalidValueError("rest_upload_no_data", "No data supplied.")
        limit = self.max_bytes()
        if len(data) > limit:
            raise InvalidValueError(
                "rest_upload_file_too_big",
                f"This file is too big. Files must be less than {max(limit // 1024, 1)} KB"
                " in size.",
            )
        allowed = [str(mime) for mime in self.content.get_option("upload_mime_types")]
        inspected = inspect_upload(data, declared_type, client_name, allowed)
        alt_text = str(fields.pop("alt_text", ""))
        post_fields = _post_fields(fields)
        name = display_name(client_name)
        post_fields.setdefault("title", name.rsplit(".", 1)[0] if "." in name[1:] else name)
        relative = self.files.save(data, inspected.file_type, client_name, self.content.now())
        try:
            with self.content.batch():
                post = self.content.create_post(
                    type="attachment",
                    status="inherit",
                    mime_type=inspected.file_type.mime,
                    comment_status="closed",
                    ping_status="closed",
                    **post_fields,
                )
                self.content.store.connection().execute(
                    "INSERT INTO attachments"
                    " (post_id, file, filename, filesize, width, height, alt_text)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        post.id,
                        relative,
                        name,
                        len(data),
                        inspected.width,
                        inspected.height,
                        alt_text,
                    ),
                )
        except BaseException:
            # A failed record leaves no file behind.
            self.files.delete(relative)
            raise
        attachment = self.get(post.id)
        if attachment is None:  # pragma: no cover - written in the transaction that committed
            raise RuntimeError(f"attachment {post.id} vanished")
        return attachment

    def update(self, post_id: int, **fields: Any) -> Attachment:
        """Change an attachment's post columns (as `upload`) and ``alt_text``, together.

        Raises:
            NotFoundError: ``rest_post_invalid_id``.
        """
        if self.get(post_id) is None:
            raise NotFoundError("rest_post_invalid_id", "Invalid post ID.")
        alt_text = fields.pop("alt_text", None)
        post_fields = _post_fields(fields)
        with self.content.batch():
            if post_fields or alt_text is not None:
                self.content.update_post(post_id, **post_fields)
            if alt_text is not None:
                self.content.store.connection().execute(
                    "UPDATE attachments SET alt_text = ? WHERE post_id = ?",
                    (str(alt_text), post_id),
                )
        updated = self.get(post_id)
        if updated is None:  # pragma: no cover - updated in the transaction that committed
            raise RuntimeError(f"attachment {post_id} vanished")
        return updated

    def delete(self, post_id: int) -> Attachment:
        """Delete an attachment for good: its rows (one transaction), then its file. Returns
        the attachment as it was.

        Raises:
            NotFoundError: ``rest_post_invalid_id``.
        """
        attachment = self.get(post_id)
        if attachment is None:
            raise NotFoundError("rest_post_invalid_id", "Invalid post ID.")
        relative = attachment.file.file
        # The file stops being served before the commit purges its cached copy (a request in
        # between cannot store it again); it comes back if the rows stay.
        hidden = self.files.hide(relative)
        if hidden is None:
            logger.warning("attachment %d had no file %r to delete", post_id, relative)
        try:
            with self.content.batch():
                self.content.store.connection().execute(
                    "DELETE FROM attachments WHERE post_id = ?", (post_id,)
                )
                self.content.delete_post(post_id, force=True)
                self.content.queue_action(
                    "deleted_upload_file", post_id, self.files.url_path(relative)
                )
        except BaseException:
            self.files.restore(hidden, relative)
            raise
        self.files.discard(hidden)
        return attachment


def _post_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """The post columns among ``fields``.

    Raises:
        TypeError: a field that is neither a post column of an attachment nor ``alt_text``.
    """
    unknown = set(fields) - _POST_FIELDS
    if unknown:
        raise TypeError(f"unknown attachment fields: {', '.join(sorted(unknown))}")
    return dict(fields)


def _file_from_row(row: Row | tuple[Any, ...]) -> AttachmentFile:
    return AttachmentFile(
        file=str(row[1]),
        filename=str(row[2]),
        filesize=int(row[3]),
        width=int(row[4]),
        height=int(row[5]),
        alt_text=str(row[6]),
    )
