"""The upload type table, content checks and generated file names (#21 point 2)."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from sitecache.domain_errors import InvalidValueError
from sitecache.site.upload_files import safe_stem
from sitecache.site.upload_types import DEFAULT_UPLOAD_TYPES, FILE_TYPES, inspect_upload


def image(kind: str, size: tuple[int, int] = (6, 4)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "white").save(buffer, kind)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("kind", "mime"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_each_image_type_is_read_with_its_dimensions(kind: str, mime: str) -> None:
    found = inspect_upload(image(kind), mime, "x", DEFAULT_UPLOAD_TYPES)
    assert (found.file_type.mime, found.width, found.height) == (mime, 6, 4)
    assert found.file_type.media_type == "image"


@pytest.mark.parametrize(
    ("declared", "filename", "mime"),
    [
        ("application/octet-stream", "photo.JPG", "image/jpeg"),
        ("", "photo.png", "image/png"),
        ("image/png; charset=binary", "whatever", "image/png"),
    ],
)
def test_a_generic_type_is_decided_by_the_extension(
    declared: str, filename: str, mime: str
) -> None:
    data = image("JPEG" if mime == "image/jpeg" else "PNG")
    assert inspect_upload(data, declared, filename, DEFAULT_UPLOAD_TYPES).file_type.mime == mime


@pytest.mark.parametrize(
    ("data", "declared"),
    [
        (b"%PDF-1.7\n", "application/x-php"),  # unknown
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml"),  # known, not allowed
        (b"plain", "application/octet-stream"),  # no extension to go by
        (b"not a pdf", "application/pdf"),
        (b"\xff\xfe\x00", "text/plain"),
    ],
)
def test_types_not_allowed_and_content_of_another_type_are_refused(
    data: bytes, declared: str
) -> None:
    with pytest.raises(InvalidValueError) as refused:
        inspect_upload(data, declared, "file", DEFAULT_UPLOAD_TYPES)
    assert refused.value.code == "rest_upload_sideload_error"


def test_svg_and_html_are_known_but_not_allowed_by_default() -> None:
    assert {"image/svg+xml", "text/html"} <= set(FILE_TYPES)
    assert not {"image/svg+xml", "text/html"} & set(DEFAULT_UPLOAD_TYPES)
    assert all(FILE_TYPES[mime].active for mime in ("image/svg+xml", "text/html"))


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\windows\\x.png", "x"),
        ("a\x00b.png", "ab"),
        ("Été à la mer.JPG", "ete-a-la-mer"),
        ("....", "file"),
        ("", "file"),
        (".htaccess", "htaccess"),
    ],
)
def test_safe_stems(name: str, stem: str) -> None:
    assert safe_stem(name) == stem


@given(st.text())
def test_a_safe_stem_is_never_a_path_and_is_stable(name: str) -> None:
    stem = safe_stem(name)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", stem)
    assert len(stem) <= 60
    assert safe_stem(stem) == stem
