"""The file types an upload may have, and what an upload's bytes really are.

`FILE_TYPES` is the table of every type the site knows (MIME type → extension, media type,
how its content is checked); the ``upload_mime_types`` option picks the allowed ones
(`DEFAULT_UPLOAD_TYPES` by default: SVG and HTML can run scripts in a browser and stay off).
`inspect_upload` decides an upload's type from what the client declared (the part's or the
body's ``Content-Type``, else the file name's extension) and refuses content that is not of
that type: images are opened with Pillow, which also gives their dimensions. Pure: bytes in,
values or `InvalidValueError` out.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from PIL import Image, UnidentifiedImageError

from sitecache.domain_errors import InvalidValueError

__all__ = [
    "DEFAULT_UPLOAD_TYPES",
    "FILE_TYPES",
    "FileType",
    "InspectedUpload",
    "inspect_upload",
    "type_of_extension",
]


def _is_pdf(data: bytes) -> bool:
    return data.startswith(b"%PDF-")


def _is_text(data: bytes) -> bool:
    """UTF-8 without NUL bytes (``text/plain``)."""
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _is_svg(data: bytes) -> bool:
    head = data[:4096].lstrip().lower()
    return _is_text(data) and (head.startswith((b"<?xml", b"<svg")) and b"<svg" in head)


@dataclass(frozen=True, slots=True)
class FileType:
    """One known file type.

    Attributes:
        mime: its MIME type, as served.
        extension: the extension of stored files (without the dot).
        pillow_format: Pillow's format name for images (their content is opened with Pillow).
        check: for other types, whether bytes are of this type.
        active: it may run scripts in a browser (served as a download in a sandbox).
        extensions: every extension a client's file name may use for this type.
    """

    mime: str
    extension: str
    pillow_format: str | None = None
    check: Callable[[bytes], bool] | None = None
    active: bool = False
    extensions: tuple[str, ...] = ()

    @property
    def media_type(self) -> str:
        """``image`` or ``file`` (the REST ``media_type``)."""
        return "image" if self.pillow_format is not None else "file"


FILE_TYPES: Final[Mapping[str, FileType]] = {
    "image/jpeg": FileType("image/jpeg", "jpg", "JPEG", extensions=("jpg", "jpeg", "jpe")),
    "image/png": FileType("image/png", "png", "PNG", extensions=("png",)),
    "image/gif": FileType("image/gif", "gif", "GIF", extensions=("gif",)),
    "image/webp": FileType("image/webp", "webp", "WEBP", extensions=("webp",)),
    "application/pdf": FileType("application/pdf", "pdf", check=_is_pdf, extensions=("pdf",)),
    "text/plain": FileType("text/plain", "txt", check=_is_text, extensions=("txt", "text")),
    "image/svg+xml": FileType(
        "image/svg+xml", "svg", check=_is_svg, active=True, extensions=("svg",)
    ),
    "text/html": FileType(
        "text/html", "html", check=_is_text, active=True, extensions=("html", "htm")
    ),
}
"""Every file type the site knows, by MIME type."""

DEFAULT_UPLOAD_TYPES: Final = (
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "application/pdf",
    "text/plain",
)
"""The types allowed when the ``upload_mime_types`` option was never set."""

_GENERIC: Final = frozenset({"", "application/octet-stream", "binary/octet-stream"})


def type_of_extension(extension: str) -> FileType | None:
    """The known type a file name's extension stands for (case-insensitive), or ``None``."""
    wanted = extension.lower()
    for file_type in FILE_TYPES.values():
        if wanted in file_type.extensions:
            return file_type
    return None


@dataclass(frozen=True, slots=True)
class InspectedUpload:
    """What an upload turned out to be: its type and, for an image, its pixel size."""

    file_type: FileType
    width: int = 0
    height: int = 0


def _not_allowed() -> InvalidValueError:
    return InvalidValueError(
        "rest_upload_sideload_error", "Sorry, you are not allowed to upload this file type."
    )


def inspect_upload(
    data: bytes, declared: str, filename: str, allowed: Sequence[str]
) -> InspectedUpload:
    """The type of an upload whose content matches it, and an image's dimensions.

    The type is the declared MIME type (parameters dropped); a generic one
    (``application/octet-stream`` or none) leaves it to the file name's extension. It must be
    one of ``allowed`` (and known), and the bytes must be of that type: an image must open
    with Pillow as that very format (a PNG sent as ``image/jpeg`` is refused, and so is a
    picture too large to decode safely), other types pass their check.

    Raises:
        InvalidValueError: ``rest_upload_sideload_error``: a type not allowed, or content that
            does not match it.
    """
    mime = declared.split(";", 1)[0].strip().lower()
    if mime in _GENERIC:
        _, dot, extension = filename.rpartition(".")
        guessed = type_of_extension(extension) if dot else None
        mime = guessed.mime if guessed is not None else ""
    file_type = FILE_TYPES.get(mime)
    if file_type is None or file_type.mime not in allowed:
        raise _not_allowed()
    if file_type.pillow_format is None:
        if file_type.check is not None and not file_type.check(data):
            raise _mismatch(file_type)
        return InspectedUpload(file_type)
    width, height = _image_size(data, file_type)
    return InspectedUpload(file_type, width, height)


def _mismatch(file_type: FileType) -> InvalidValueError:
    return InvalidValueError(
        "rest_upload_sideload_error",
        f"The file's content is not of its declared type ({file_type.mime}).",
    )


def _image_size(data: bytes, file_type: FileType) -> tuple[int, int]:
    """``(width, height)`` of an image Pillow reads as ``file_type``'s format.

    Raises:
        InvalidValueError: the bytes are not such an image, it is damaged, or it is a
            decompression bomb (Pillow's pixel limit).
    """
    try:
        with warnings.catch_warnings():
            # SECURITY: a huge picture in a small file is refused, not decoded.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                found, size = image.format, image.size
                image.verify()
    except (
        UnidentifiedImageError,
        Image.DecompressionBombError,
        Image.DecompressionBombWarning,
        OSError,
        SyntaxError,
        ValueError,
    ) as exc:
        raise _mismatch(file_type) from exc
    if found != file_type.pillow_format:
        raise _mismatch(file_type)
    return int(size[0]), int(size[1])
