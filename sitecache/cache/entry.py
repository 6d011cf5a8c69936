"""A stored page: what it holds and its versioned byte format.

An entry is bytes: a fixed prefix (magic and format version, created and expiry times, the
length of a JSON header, a CRC-32 of everything after the prefix), the JSON header (URL, status,
headers, tags, ...), the body and its compressed copies. No pickle anywhere: a stored entry can
be read by anything that speaks JSON. An unknown version, a short read or a checksum mismatch
decodes to ``None`` (a miss), never to a broken page (cachecontrol's rule).

`CacheEntry.from_response` builds the entry of a response the guards let through: which headers
are replayed (never `UNSTORED_HEADERS`, nor the fields a ``Connection`` field or a qualified
``no-cache``/``private`` names: RFC 9111 §3.1), its tags, validators, whether it is worth
compressed copies (`COMPRESSIBLE`) and `StoredFreshness` (what a stale copy may do, decided
once when stored). The application's ``Date``, ``ETag`` (weak ones stay weak) and
``Last-Modified`` are kept as sent; a response without ``Last-Modified`` gets the time it was
stored, one without ``ETag`` a strong tag of its own (`body_etag`).

The bodies follow the JSON header: the identity body, then each encoded copy named in its
``codings`` list (``[["gzip", length], ["br", length]]``); an older entry that names only a
``gzip`` length reads the same.

Compressed copies are not made on the miss: the entry records that its body is worth them
(``compressible``, `COMPRESSIBLE` and at least `MIN_GZIP_SIZE` bytes), and the first hit whose
client asks for a coding makes that copy (`coded_copy`: gzip, or brotli, `CODINGS`) and stores
the entry back, only over the very entry it read (`CacheEntry.times`). The entity tag of the
identity body is built from the entry's own facts, not a hash of the body (`body_etag`).

The expiry time sits at a fixed offset (`EXPIRES_OFFSET`) so that a soft purge can rewrite it in
place (Redis ``SETRANGE``) without touching the checksummed part. The two times are outside the
checksum, so they are validated instead: finite, not negative, and the expiry (when set) not
before the creation by more than the soft purge allows. Anything else reads as a miss.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from sitecache.cache.codings import (
    BROTLI_QUALITY,
    CODINGS,
    COMPRESSIBLE,
    DEFLATE,
    GZIP_LEVEL,
    MIN_GZIP_SIZE,
    coded_copy,
    crc32,
    gzip_copy,
)
from sitecache.cache.freshness import Freshness
from sitecache.cache.replayed import UNSTORED_HEADERS, replayed_headers, title_case

__all__ = [
    "BROTLI_QUALITY",
    "CODINGS",
    "COMPRESSIBLE",
    "DEFLATE",
    "EXPIRES_OFFSET",
    "FORMAT_MAGIC",
    "GZIP_LEVEL",
    "MIN_GZIP_SIZE",
    "TIMES_OFFSET",
    "UNSTORED_HEADERS",
    "CacheEntry",
    "EntryInfo",
    "StoredFreshness",
    "body_etag",
    "coded_copy",
    "decode_entry",
    "encode_entry",
    "encode_expires",
    "gzip_copy",
]

FORMAT_MAGIC: Final = b"SCE1"
_PREFIX: Final = struct.Struct(">4sddII")  # magic, created, expires, header length, crc32
EXPIRES_OFFSET: Final = 12
#: Where the creation and expiry times (16 bytes) sit in an encoded entry: what a store-back
#: compares (`CacheEntry.times`).
TIMES_OFFSET: Final = 4
_TIMES: Final = struct.Struct(">dd")
PREFIX_SIZE: Final = _PREFIX.size


@dataclass(frozen=True, slots=True)
class StoredFreshness:
    """What the cache decided about a response's freshness when it stored it
    (`sitecache.cache.freshness.Freshness`, and the application's own validators).

    Attributes:
        rule: the rule that gave the lifetime (``max_age``: the setting).
        age: the response's age when it arrived, in seconds (the ``Age`` answered grows
            from it).
        stale_window: seconds a stale copy may be served while one request revalidates it
            (``None``: the ``stale_while_revalidate`` setting; ``0``: never).
        background: the window is the response's own ``stale-while-revalidate``.
        error_window: seconds past it a stale copy may answer while the application fails.
        etag: the application's ``ETag`` as sent (``""``: none; the entry's own then).
        last_modified: the application's ``Last-Modified`` as sent (``""``: none).
    """

    rule: str = "max_age"
    age: float = 0.0
    stale_window: int | None = None
    background: bool = False
    error_window: int = 0
    etag: str = ""
    last_modified: str = ""

    def as_json(self) -> dict[str, Any]:
        """The fields as a JSON object (the entry header's ``fresh``)."""
        return {
            "rule": self.rule,
            "age": self.age,
            "window": self.stale_window,
            "background": self.background,
            "error": self.error_window,
            "etag": self.etag,
            "lm": self.last_modified,
        }

    @classmethod
    def from_json(cls, data: Any) -> StoredFreshness:
        """The inverse of `as_json` (an entry stored before it existed: the defaults).

        Raises:
            ValueError, TypeError: a field of the wrong type.
        """
        if not isinstance(data, dict):
            return cls()
        window = data.get("window")
        return cls(
            rule=str(data.get("rule", "max_age")),
            age=float(data.get("age", 0.0)),
            stale_window=None if window is None else int(window),
            background=bool(data.get("background", False)),
            error_window=int(data.get("error", 0)),
            etag=str(data.get("etag", "")),
            last_modified=str(data.get("lm", "")),
        )

    @property
    def revalidates(self) -> bool:
        """Whether the application gave a validator to revalidate the page with."""
        return bool(self.etag or self.last_modified)


#: An entry stored with the settings' lifetime and nothing else said.
SETTINGS_FRESHNESS: Final = StoredFreshness()


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
        gzip_body: the gzip copy, or ``b""`` when none is made yet.
        created: Unix time it was stored.
        expires: Unix time it stops being fresh; ``0`` means fresh until purged.
        tags: the purge tags from the response's ``Cache-Tag`` header.
        etag: the entity tag of the identity body: the application's as sent, else a strong
            tag of the body.
        vary: request header names (lower case) whose values are part of the key; a
            *pointer* entry (``status == 0``) only says which headers to read.
        fresh: what was decided about its freshness when it was stored.
        encoded: the body is the application's own encoding (``Content-Encoding``): sent as
            it is, keyed on ``Accept-Encoding``, no gzip copy of the cache's.
        codings: encoded copies beyond gzip, ``(coding, bytes)`` (brotli).
        compressible: the body is worth compressed copies (`COMPRESSIBLE`, at least
            `MIN_GZIP_SIZE` bytes, not encoded by the application): a hit makes the copy its
            client asks for when the entry has none yet (`coded_copy`).
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
    fresh: StoredFreshness = SETTINGS_FRESHNESS
    encoded: bool = False
    codings: tuple[tuple[str, bytes], ...] = ()
    compressible: bool = False

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
        freshness: Freshness | None = None,
        omit: Iterable[str] = (),
        copies: tuple[tuple[str, bytes], ...] = (),
        etag: str = "",
    ) -> CacheEntry:
        """The entry to store for a response the guards let through.

        Args:
            status: the response's status code.
            headers: its headers; those in `UNSTORED_HEADERS`, those a ``Connection`` field
                names and ``omit`` are dropped, ``Cache-Tag`` gives the tags, ``ETag`` and a
                ``Last-Modified`` date are kept as validators.
            body: the body (after the store filters): identity, or the application's own
                encoding when it sent ``Content-Encoding``.
            url, host, path, variant: what the entry answers (see the attributes).
            vary: the response's ``Vary`` names (lower case).
            now: the time it arrived (``created``).
            max_age: seconds it stays fresh when ``freshness`` is not given (``0``: fresh
                until purged).
            compress: mark a compressible identity body (`COMPRESSIBLE`, at least
                `MIN_GZIP_SIZE` bytes) as worth compressed copies; none is made here (a hit
                makes the one its client asks for).
            freshness: its freshness (`sitecache.cache.freshness.response_freshness`);
                ``None``: ``max_age`` and nothing else said.
            omit: lower-case names of fields never stored (a qualified ``no-cache`` or
                ``private`` names them).
            copies: the compressed copies already made of this body (a refreshed entry),
                ``(coding, bytes)``.
            etag: the entry's own entity tag of this body already given (a refreshed entry
                keeps it when the application sends none).

        The entry always has an ``etag`` and a ``Last-Modified`` header; its ``Vary`` header
        names ``vary`` and ``Accept-Encoding`` when it is compressible or the body is encoded.
        """
        if freshness is None:
            freshness = Freshness("max_age", float(max_age), forever=not max_age)
        replayed = replayed_headers(headers, now, frozenset(omit))
        kept = replayed.headers
        encoded = replayed.encoding not in ("", "identity")
        worth = len(body) >= MIN_GZIP_SIZE and replayed.content_type.startswith(COMPRESSIBLE)
        compressible = (compress or bool(copies)) and not encoded and worth
        copied = dict(copies) if compressible else {}
        names = [name for name in vary if name != "accept-encoding"]
        if compressible or encoded:
            names.append("accept-encoding")
        if names:
            kept.append(("Vary", ", ".join(title_case(name) for name in names)))
        return cls(
            url=url,
            host=host,
            path=path,
            variant=variant,
            status=status,
            headers=tuple(kept),
            body=body,
            gzip_body=copied.pop("gzip", b""),
            created=now,
            expires=freshness.expires(now),
            tags=tuple(dict.fromkeys(replayed.tags)),
            etag=replayed.etag or etag or body_etag(body, now),
            vary=(),
            extra={"last_modified": replayed.last_modified},
            fresh=StoredFreshness(
                rule=freshness.rule,
                age=freshness.age,
                stale_window=freshness.stale_window,
                background=freshness.background,
                error_window=freshness.error_window,
                etag=replayed.etag,
                last_modified=replayed.last_modified_text,
            ),
            encoded=encoded,
            codings=tuple(copied.items()),
            compressible=compressible,
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
            compressed_size=len(self.gzip_body) + sum(len(data) for _, data in self.codings),
            created=self.created,
            expires=self.expires,
            tags=self.tags,
            lifetime=self.fresh.rule,
        )

    def with_expires(self, expires: float) -> CacheEntry:
        """The same entry with another expiry time (a soft purge)."""
        return replace(self, expires=expires)

    @property
    def copies(self) -> tuple[tuple[str, bytes], ...]:
        """Every compressed copy made, ``(coding, bytes)``."""
        gzip = (("gzip", self.gzip_body),) if self.gzip_body else ()
        return (*gzip, *self.codings)

    def copy(self, coding: str) -> bytes:
        """The ``coding`` copy of the body (``gzip``, ``br``), or ``b""`` when none is made."""
        if coding == "gzip":
            return self.gzip_body
        return next((data for name, data in self.codings if name == coding), b"")

    def with_copy(self, coding: str, data: bytes) -> CacheEntry:
        """The same entry holding ``data`` as its ``coding`` copy too."""
        if coding == "gzip":
            return replace(self, gzip_body=data)
        others = tuple(item for item in self.codings if item[0] != coding)
        return replace(self, codings=(*others, (coding, data)))

    @property
    def times(self) -> bytes:
        """Its creation and expiry times as encoded (16 bytes at `TIMES_OFFSET`): a store-back
        of this entry replaces only the stored entry with these bytes, never a newer render, a
        purged one, or one a soft purge made stale since it was read."""
        return _TIMES.pack(self.created, self.expires)


def body_etag(body: bytes, created: float) -> str:
    """A strong ``ETag`` for ``body`` stored at ``created``: the time in microseconds, the
    length and the CRC-32 of the bytes, quoted (``"<µs>-<length>-<crc>"``, hexadecimal).

    Any change of the bytes changes it, and it never repeats for another body of the same URL
    (another render is stored at another time, and would also need the same length and CRC-32
    to collide). It costs about 1 µs for a 20 KB page where SHA-1 took ~15 µs of every miss; the
    tag of a page stored again changes even when its bytes did not, as with nginx's tags of a
    file's time and length.
    """
    return f'"{int(created * 1_000_000):x}-{len(body):x}-{crc32(body):08x}"'


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
    #: the rule that gave the page its lifetime (`sitecache.cache.freshness.LIFETIME_RULES`)
    lifetime: str = "max_age"

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
            "lifetime": self.lifetime,
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
            lifetime=str(data.get("lifetime", "max_age")),
        )


def encode_entry(entry: CacheEntry) -> bytes:
    """The entry as versioned bytes (see the module docstring)."""
    # PERF: one encoder for every entry (tuples encode as arrays), the checksum run over the
    # parts in turn and the bytes joined once: the body is copied once, into the result.
    codings = [("gzip", entry.gzip_body)] if entry.gzip_body else []
    codings.extend(entry.codings)
    header = _HEADER_JSON.encode(
        {
            "url": entry.url,
            "host": entry.host,
            "path": entry.path,
            "variant": entry.variant,
            "status": entry.status,
            "headers": entry.headers,
            "tags": entry.tags,
            "etag": entry.etag,
            "vary": entry.vary,
            "body": len(entry.body),
            "gzip": len(entry.gzip_body),
            "codings": [(coding, len(data)) for coding, data in codings],
            "extra": entry.extra,
            "fresh": entry.fresh.as_json(),
            "encoded": entry.encoded,
            "z": entry.compressible,
        }
    ).encode("utf-8")
    checksum = crc32(entry.body, crc32(header))
    for _, data in codings:
        checksum = crc32(data, checksum)
    prefix = _PREFIX.pack(FORMAT_MAGIC, entry.created, entry.expires, len(header), checksum)
    return b"".join([prefix, header, entry.body, *(data for _, data in codings)])


#: The JSON header's encoder (compact, UTF-8 text as it is).
_HEADER_JSON: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


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
        if len(payload) < header_length or crc32(payload) != checksum:
            return None
        header = json.loads(bytes(payload[:header_length]))
        body_length = int(header["body"])
        lengths = header.get("codings")
        if lengths is None:  # written before the codings list: a gzip copy at most
            lengths = [["gzip", int(header["gzip"])]] if int(header["gzip"]) else []
        if header_length + body_length + sum(int(n) for _, n in lengths) != len(payload):
            return None
        start = header_length + body_length
        body = bytes(payload[header_length:start])
        copies: list[tuple[str, bytes]] = []
        for coding, length in lengths:
            copies.append((str(coding), bytes(payload[start : start + int(length)])))
            start += int(length)
        gzip_body = next((data for coding, data in copies if coding == "gzip"), b"")
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
            fresh=StoredFreshness.from_json(header.get("fresh")),
            encoded=bool(header.get("encoded", False)),
            codings=tuple(item for item in copies if item[0] != "gzip"),
            compressible=bool(header.get("z", bool(gzip_body))),
        )
    except (ValueError, KeyError, TypeError, struct.error):
        return None
