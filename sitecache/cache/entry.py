"""A stored page: what it holds and its versioned byte format.

An entry is bytes: a fixed prefix (magic and format version, created and expiry times, the
length of a JSON header, a CRC-32 of everything after the prefix), the JSON header (URL, status,
headers, tags, ...), the body and its gzip copy. No pickle anywhere: a stored entry can be read
by anything that speaks JSON. An unknown version, a short read or a checksum mismatch decodes to
``None`` (a miss), never to a broken page (cachecontrol's rule).

`CacheEntry.from_response` builds the entry of a response the guards let through: which headers
are replayed (never `UNSTORED_HEADERS`), its tags, validators, and gzip copy (`COMPRESSIBLE`).

The expiry time sits at a fixed offset (`EXPIRES_OFFSET`) so that a soft purge can rewrite it in
place (Redis ``SETRANGE``) without touching the checksummed part. The two times are outside the
checksum, so they are validated instead: finite, not negative, and the expiry (when set) not
before the creation by more than the soft purge allows. Anything else reads as a miss.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from email.utils import formatdate, parsedate_to_datetime
from typing import Any, Final

__all__ = [
    "COMPRESSIBLE",
    "DEFLATE",
    "EXPIRES_OFFSET",
    "FORMAT_MAGIC",
    "GZIP_LEVEL",
    "MIN_GZIP_SIZE",
    "UNSTORED_HEADERS",
    "CacheEntry",
    "EntryInfo",
    "body_etag",
    "decode_entry",
    "encode_entry",
    "encode_expires",
    "gzip_copy",
]

FORMAT_MAGIC: Final = b"SCE1"
_PREFIX: Final = struct.Struct(">4sddII")  # magic, created, expires, header length, crc32
EXPIRES_OFFSET: Final = 12
PREFIX_SIZE: Final = _PREFIX.size

#: Response headers never stored: per-connection, per-response or per-visitor.
UNSTORED_HEADERS: Final = frozenset(
    {
        "set-cookie",
        "date",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "age",
        "cache-status",
        "server",
        "proxy-authenticate",
        "proxy-connection",
        "trailer",
        "te",
        "upgrade",
        "www-authenticate",
        "x-site-nonce",
    }
)

#: Content types worth a gzip copy.
COMPRESSIBLE: Final = (
    "text/",
    "application/json",
    "application/xml",
    "application/rss+xml",
    "application/atom+xml",
    "application/javascript",
    "application/xhtml+xml",
    "image/svg+xml",
)
#: The smallest body worth a gzip copy.
MIN_GZIP_SIZE: Final = 256
#: The level of the gzip copies (#18). Made once per stored page, on the miss, and sent many
#: times: speed won (nginx's own default ``gzip_comp_level`` is 1 too).
GZIP_LEVEL: Final = 1
_GZIP_WBITS: Final = 31  # the gzip container: a 10-byte header with mtime 0, and a CRC-32

try:  # PERF (#18 point 3): ISA-L's deflate and CRC-32 where its wheel installs
    from isal import isal_zlib as _deflate
except ImportError:  # pragma: no cover - platforms without an isal wheel
    _deflate = zlib  # type: ignore[misc]

#: Which deflate makes the gzip copies and the entries' CRC-32: ISA-L (``isal``, a declared
#: dependency) or, where it does not install, zlib. On a 20 KB page ISA-L's level 1 takes a
#: third of zlib's level 1 (~15 against ~50 µs on a quiet core) for a slightly smaller copy,
#: and its CRC-32 (the same function as zlib's) a quarter; both are standard gzip/CRC-32, so
#: any client, and any process of either kind, reads them.
DEFLATE: Final = _deflate.__name__.rsplit(".", 1)[-1]
_crc32 = _deflate.crc32


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One stored response.

    Attributes:
        url: the canonical URL it answers (``scheme://host/path?query``).
        host: its host (lower case, no default port).
        path: its path.
        variant: ``""`` or ``"mobile"``.
        status: the HTTP status code.
        headers: the response headers replayed on a hit (never ``Set-Cookie``).
        body: the identity body.
        gzip_body: the gzip copy, or ``b""`` when none is kept.
        created: Unix time it was stored.
        expires: Unix time it stops being fresh; ``0`` means fresh until purged.
        tags: the purge tags from the response's ``Cache-Tag`` header.
        etag: the strong entity tag of the identity body (quoted).
        vary: request header names (lower case) whose values are part of the key; a
            *pointer* entry (``status == 0``) only says which headers to read.
    """

    url: str
    host: str
    path: str
    variant: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    gzip_body: bytes
    created: float
    expires: float
    tags: tuple[str, ...] = ()
    etag: str = ""
    vary: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def from_response(
        cls,
        status: int,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        *,
        url: str,
        host: str,
        path: str,
        variant: str,
        vary: Iterable[str],
        now: float,
        max_age: int,
        compress: bool,
    ) -> CacheEntry:
        """The entry to store for a response the guards let through.

        Args:
            status: the response's status code.
            headers: its headers; those in `UNSTORED_HEADERS` are dropped, ``Cache-Tag`` gives
                the tags, a quoted ``ETag`` and a ``Last-Modified`` date are kept as validators.
            body: the identity body (after the store filters).
            url, host, path, variant: what the entry answers (see the attributes).
            vary: the response's ``Vary`` names (lower case).
            now: the time it is stored (``created``).
            max_age: seconds it stays fresh (``0``: fresh until purged).
            compress: make a gzip copy of a compressible body (`COMPRESSIBLE`, at least
                `MIN_GZIP_SIZE` bytes).

        The entry always has a strong ``etag`` (a hash of the body when the response gave
        none) and a ``Last-Modified`` header; its ``Vary`` header names ``vary`` and
        ``Accept-Encoding`` when there is a gzip copy.
        """
        kept, tags, content_type, etag, last_modified = _replayed_headers(headers, now)
        gzip_body = b""
        if compress and len(body) >= MIN_GZIP_SIZE and content_type.startswith(COMPRESSIBLE):
            gzip_body = gzip_copy(body)
        names = [name for name in vary if name != "accept-encoding"]
        if gzip_body:
            names.append("accept-encoding")
        if names:
            kept.append(("Vary", ", ".join(_title(name) for name in names)))
        if not etag:
            etag = body_etag(body)
        return cls(
            url=url,
            host=host,
            path=path,
            variant=variant,
            status=status,
            headers=tuple(kept),
            body=body,
            gzip_body=gzip_body,
            created=now,
            expires=now + max_age if max_age else 0.0,
            tags=tuple(dict.fromkeys(tags)),
            etag=etag,
            vary=(),
            extra={"last_modified": last_modified},
        )

    @property
    def is_pointer(self) -> bool:
        """Whether this record only names the ``Vary`` headers of the real entries."""
        return self.status == 0

    @property
    def size(self) -> int:
        """Bytes of the identity body."""
        return len(self.body)

    def info(self, key: str) -> EntryInfo:
        """The index row of this entry under ``key``."""
        return EntryInfo(
            key=key,
            url=self.url,
            host=self.host,
            path=self.path,
            variant=self.variant,
            status=self.status,
            size=len(self.body),
            compressed_size=len(self.gzip_body),
            created=self.created,
            expires=self.expires,
            tags=self.tags,
        )

    def with_expires(self, expires: float) -> CacheEntry:
        """The same entry with another expiry time (a soft purge)."""
        return replace(self, expires=expires)


def body_etag(body: bytes) -> str:
    """A strong ``ETag`` for ``body``: 96 bits of its SHA-1, quoted.

    A validator, not a signature: any change of the bytes changes it (short of a collision
    crafted against SHA-1 by whoever writes the pages, which gains nothing but a stale copy of
    their own page). SHA-1 runs on the CPU's SHA instructions through OpenSSL, about 15 µs for a
    20 KB page where BLAKE2b took 50-85 µs of every miss.
    """
    return '"' + hashlib.sha1(body, usedforsecurity=False).hexdigest()[:24] + '"'


def gzip_copy(body: bytes) -> bytes:
    """The gzip copy of ``body`` (`GZIP_LEVEL`, no name, mtime 0: the same bytes every time)."""
    return _deflate.compress(body, GZIP_LEVEL, _GZIP_WBITS)


def _replayed_headers(
    headers: Iterable[tuple[str, str]], now: float
) -> tuple[list[tuple[str, str]], list[str], str, str, float]:
    """``(headers replayed on a hit, Cache-Tag tags, content type, quoted ETag or "",
    Last-Modified time)`` of a response stored at ``now`` (a ``Last-Modified`` header of
    ``now`` is added when it has none; its ``Vary`` is written by the caller)."""
    kept: list[tuple[str, str]] = []
    tags: list[str] = []
    content_type = ""
    etag = ""
    last_modified = now
    for name, value in headers:
        lower = name.lower()
        if lower in UNSTORED_HEADERS or lower == "vary":
            continue
        if lower == "cache-tag":
            tags.extend(item.strip() for item in value.split(",") if item.strip())
        if lower == "content-type":
            content_type = value.lower()
        if lower == "etag":
            if value.startswith('"') and value.endswith('"'):
                etag = value
            continue
        if lower == "last-modified":
            try:
                last_modified = parsedate_to_datetime(value).timestamp()
            except (TypeError, ValueError):
                continue
        kept.append((name, value))
    if not any(name.lower() == "last-modified" for name, _ in kept):
        kept.append(("Last-Modified", formatdate(now, usegmt=True)))
    return kept, tags, content_type, etag, last_modified


def _title(name: str) -> str:
    """A lower-case header name in its usual spelling (``accept-language``:
    ``Accept-Language``)."""
    return "-".join(part.capitalize() for part in name.split("-"))


@dataclass(frozen=True, slots=True)
class EntryInfo:
    """What the index keeps of an entry: everything but the bodies and headers."""

    key: str
    url: str
    host: str
    path: str
    variant: str
    status: int
    size: int
    compressed_size: int
    created: float
    expires: float
    tags: tuple[str, ...]

    def is_fresh(self, now: float) -> bool:
        """Fresh: never expires, or expires later than ``now``."""
        return self.expires == 0 or self.expires > now

    def as_json(self) -> dict[str, Any]:
        """The row as a JSON object (the index's own storage form)."""
        return {
            "key": self.key,
            "url": self.url,
            "host": self.host,
            "path": self.path,
            "variant": self.variant,
            "status": self.status,
            "size": self.size,
            "compressed_size": self.compressed_size,
            "created": self.created,
            "expires": self.expires,
            "tags": list(self.tags),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EntryInfo:
        """The inverse of `as_json`."""
        return cls(
            key=str(data["key"]),
            url=str(data["url"]),
            host=str(data["host"]),
            path=str(data["path"]),
            variant=str(data["variant"]),
            status=int(data["status"]),
            size=int(data["size"]),
            compressed_size=int(data["compressed_size"]),
            created=float(data["created"]),
            expires=float(data["expires"]),
            tags=tuple(str(tag) for tag in data["tags"]),
        )


def encode_entry(entry: CacheEntry) -> bytes:
    """The entry as versioned bytes (see the module docstring)."""
    header = json.dumps(
        {
            "url": entry.url,
            "host": entry.host,
            "path": entry.path,
            "variant": entry.variant,
            "status": entry.status,
            "headers": [list(pair) for pair in entry.headers],
            "tags": list(entry.tags),
            "etag": entry.etag,
            "vary": list(entry.vary),
            "body": len(entry.body),
            "gzip": len(entry.gzip_body),
            "extra": entry.extra,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode("utf-8")
    payload = header + entry.body + entry.gzip_body
    prefix = _PREFIX.pack(FORMAT_MAGIC, entry.created, entry.expires, len(header), _crc32(payload))
    return prefix + payload


def encode_expires(expires: float) -> bytes:
    """The 8 bytes at `EXPIRES_OFFSET` for ``expires``."""
    return struct.pack(">d", expires)


#: Latest Unix time an entry may claim (year 9999): beyond it the bytes are not ours.
_LATEST: Final = 253_402_300_799.0


def _valid_times(created: float, expires: float) -> bool:
    """Whether the unchecksummed times are ones the cache writes (finite, in range)."""
    return (
        math.isfinite(created)
        and math.isfinite(expires)
        and 0 < created <= _LATEST
        and 0 <= expires <= _LATEST
    )


def decode_entry(data: bytes | None) -> CacheEntry | None:
    """The entry in ``data``, or ``None`` for anything unknown, short or torn."""
    if not data or len(data) < PREFIX_SIZE:
        return None
    try:
        magic, created, expires, header_length, checksum = _PREFIX.unpack_from(data)
        if magic != FORMAT_MAGIC or not _valid_times(created, expires):
            return None
        payload = memoryview(data)[PREFIX_SIZE:]
        if len(payload) < header_length or _crc32(payload) != checksum:
            return None
        header = json.loads(bytes(payload[:header_length]))
        body_length = int(header["body"])
        gzip_length = int(header["gzip"])
        if header_length + body_length + gzip_length != len(payload):
            return None
        start = header_length
        body = bytes(payload[start : start + body_length])
        gzip_body = bytes(payload[start + body_length :])
        return CacheEntry(
            url=str(header["url"]),
            host=str(header["host"]),
            path=str(header["path"]),
            variant=str(header["variant"]),
            status=int(header["status"]),
            headers=tuple((str(name), str(value)) for name, value in header["headers"]),
            body=body,
            gzip_body=gzip_body,
            created=float(created),
            expires=float(expires),
            tags=tuple(str(tag) for tag in header["tags"]),
            etag=str(header.get("etag", "")),
            vary=tuple(str(name) for name in header.get("vary", ())),
            extra=dict(header.get("extra") or {}),
        )
    except (ValueError, KeyError, TypeError, struct.error):
        return None
