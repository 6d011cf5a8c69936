"""`UploadedFile`: one file part of a ``multipart/form-data`` body, as a plain value.

`RestRequest.get_file_params` (WordPress's ``$_FILES``) maps each file field's name to one of
these, so handlers never hold werkzeug's parser objects. The bytes are already in memory: the
whole body was read within `MAX_BODY_BYTES` before the form was parsed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["UploadedFile", "uploaded_files"]


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """A file sent in a form.

    Attributes:
        name: the file name the client gave (untrusted: never a path to use as is).
        type: the part's ``Content-Type`` as sent (``""`` when none).
        data: its bytes.
    """

    name: str
    type: str
    data: bytes = b""

    @property
    def size(self) -> int:
        """How many bytes it holds."""
        return len(self.data)


def uploaded_files(parts: Iterable[tuple[str, Any]]) -> dict[str, UploadedFile]:
    """The first file of each field among werkzeug's ``(field, FileStorage)`` pairs (each
    storage is read, then closed)."""
    found: dict[str, UploadedFile] = {}
    for field, storage in parts:
        try:
            if field not in found:
                found[field] = UploadedFile(
                    name=str(storage.filename or ""),
                    type=str(storage.content_type or ""),
                    data=bytes(storage.read()),
                )
        finally:
            storage.close()  # the parser's spooled temporary file
    return found
