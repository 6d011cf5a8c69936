"""Query strings and form bodies whose text is not UTF-8 (attack report item 8).

werkzeug keeps an invalid percent-escape such as ``%ED%A0%80`` (a UTF-16 surrogate encoded as
UTF-8) as the literal text ``"%ED%A0%80"`` in ``args`` and ``form``, while Python's
``parse_qsl`` turns it into U+FFFD and a JSON body holding it is a 400 ``rest_invalid_json``.
The application refuses such a query or ``application/x-www-form-urlencoded`` body with a 400
instead (REST: `malformed_utf8_error`), so no form stores mojibake or escapes it did not mean,
and form and JSON bodies agree. `malformed_utf8_fields` names the fields at fault.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote_to_bytes

from werkzeug.http import parse_options_header
from werkzeug.sansio.multipart import Data, Epilogue, Field, File, MultipartDecoder, NeedData

from sitecache.errors import RestError

__all__ = [
    "FORM_MEDIA_TYPE",
    "MULTIPART_MEDIA_TYPE",
    "malformed_multipart_fields",
    "malformed_utf8_error",
    "malformed_utf8_fields",
]

FORM_MEDIA_TYPE: Final = "application/x-www-form-urlencoded"
MULTIPART_MEDIA_TYPE: Final = "multipart/form-data"
#: the part charsets werkzeug honours besides UTF-8 (any byte is valid in them)
_SINGLE_BYTE_CHARSETS: Final = frozenset({"ascii", "us-ascii", "iso-8859-1"})


def _raw(encoded: str | bytes) -> bytes:
    """The bytes of a WSGI string (PEP 3333: bytes read as latin-1) or of a body."""
    if isinstance(encoded, bytes):
        return encoded
    try:
        return encoded.encode("latin-1")
    except UnicodeEncodeError:  # a server that handed decoded text: its own bytes
        return encoded.encode("utf-8", "surrogatepass")


def _decoded(part: bytes) -> bytes:
    return unquote_to_bytes(part.replace(b"+", b" "))


def malformed_utf8_fields(encoded: str | bytes) -> list[str]:
    """The names (the part before any ``[``, once each, in order) of the fields of a query
    string or urlencoded body whose name or value is not UTF-8 once its percent-escapes are
    decoded (``%ED%A0%80``, ``%FF``, a raw ``\\xff``); ``[]`` when all are.

    A name that is itself not UTF-8 is given with U+FFFD for its bad bytes.
    """
    raw = _raw(encoded)
    if raw.isascii() and b"%" not in raw:
        return []  # PERF: nothing escaped, nothing beyond ASCII
    try:
        # The separators are ASCII: the whole is UTF-8 exactly when every field is.
        _decoded(raw).decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return []
    names: list[str] = []
    for part in raw.split(b"&"):
        name, _, value = part.partition(b"=")
        decoded_name = _decoded(name)
        try:
            decoded_name.decode("utf-8")
            _decoded(value).decode("utf-8")
        except UnicodeDecodeError:
            shown = decoded_name.decode("utf-8", "replace").partition("[")[0]
            if shown not in names:
                names.append(shown)
    return names


def malformed_multipart_fields(body: bytes, content_type: str) -> list[str]:
    """The names of the fields (not the files) of a ``multipart/form-data`` body that are not
    UTF-8, where werkzeug would read them as UTF-8 (no part charset werkzeug honours instead)
    and replace the bad bytes with U+FFFD; ``[]`` as well for a body werkzeug itself cannot
    read (it answers that one as before)."""
    boundary = parse_options_header(content_type)[1].get("boundary", "")
    if not boundary or body.isascii():
        return []
    decoder = MultipartDecoder(boundary.encode("latin-1", "replace"))
    names: list[str] = []
    try:
        decoder.receive_data(body)
        decoder.receive_data(None)
        field: Field | None = None
        chunks: list[bytes] = []
        event = decoder.next_event()
        while not isinstance(event, Epilogue | NeedData):
            if isinstance(event, Field):
                charset = parse_options_header(event.headers.get("content-type", ""))[1]
                single_byte = charset.get("charset", "").lower() in _SINGLE_BYTE_CHARSETS
                field, chunks = (None if single_byte else event), []
            elif isinstance(event, File):
                field = None
            elif isinstance(event, Data) and field is not None:
                chunks.append(event.data)
                if not event.more_data and not _is_utf8(b"".join(chunks)):
                    name = field.name.partition("[")[0]
                    if name not in names:
                        names.append(name)
            event = decoder.next_event()
    except ValueError:
        return []
    return names


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def malformed_utf8_error(names: list[str]) -> RestError:
    """400 ``rest_invalid_param`` naming ``names`` (each ``params`` message and ``details``
    entry: "<name> is not valid UTF-8."), the shape of every invalid parameter."""
    params = {name: f"{name} is not valid UTF-8." for name in names}
    details = {
        name: RestError("rest_invalid_param", message).to_dict() for name, message in params.items()
    }
    return RestError(
        "rest_invalid_param",
        f"Invalid parameter(s): {', '.join(names)}",
        {"status": 400, "params": params, "details": details},
    )
