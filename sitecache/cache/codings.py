"""The content codings of stored pages: the compressed copies and which one a client gets.

A stored page's copies are gzip (`gzip_copy`, ISA-L's deflate where its wheel installs, zlib
elsewhere) and brotli (`brotli_copy`), made from the identity body by the first hit whose client
asks for one, never on the miss. `choose_coding` reads a request's ``Accept-Encoding``
(RFC 9110 §12.5.3): quality values, ``q=0`` refusing a coding, ``*`` for any coding not named,
``identity`` always acceptable unless refused, and the cache's own preference (`CODINGS`) when a
client accepts several equally.
"""

from __future__ import annotations

import zlib
from typing import Final

import brotli

__all__ = [
    "BROTLI_QUALITY",
    "CODINGS",
    "COMPRESSIBLE",
    "DEFLATE",
    "GZIP_LEVEL",
    "IDENTITY",
    "MIN_GZIP_SIZE",
    "brotli_copy",
    "choose_coding",
    "coded_copy",
    "coding_etag",
    "crc32",
    "gzip_copy",
]

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
#: The smallest body worth a compressed copy.
MIN_GZIP_SIZE: Final = 256
#: The level of the gzip copies. Made once per stored page and sent many times: speed
#: won (nginx's own default ``gzip_comp_level`` is 1 too).
GZIP_LEVEL: Final = 1
#: The quality of the brotli copies: on the demo site's pages quality 5 gives 0.81x the
#: bytes of the gzip copies for ~0.5 ms per 10 KB page, made once by the first hit asking for
#: ``br``; 9 saves nothing more and 11 (0.72x) takes 30 times as long.
BROTLI_QUALITY: Final = 5
#: The content codings the cache makes copies in, in its order of preference when a client
#: accepts several equally.
CODINGS: Final = ("br", "gzip")
_GZIP_WBITS: Final = 31  # the gzip container: a 10-byte header with mtime 0, and a CRC-32

try:  # PERF: ISA-L's deflate and CRC-32 where its wheel installs
    from isal import isal_zlib as _deflate
except ImportError:  # pragma: no cover - platforms without an isal wheel
    _deflate = zlib  # type: ignore[misc]

#: Which deflate makes the gzip copies and the entries' CRC-32: ISA-L (``isal``, a declared
#: dependency) or, where it does not install, zlib. On a 20 KB page ISA-L's level 1 takes a
#: third of zlib's level 1 (~15 against ~50 µs on a quiet core) for a slightly smaller copy,
#: and its CRC-32 (the same function as zlib's) a quarter; both are standard gzip/CRC-32, so
#: any client, and any process of either kind, reads them.
DEFLATE: Final = _deflate.__name__.rsplit(".", 1)[-1]
#: The CRC-32 of the deflate in use (the entries' checksums, the entity tags).
crc32 = _deflate.crc32
#: The coding of a body sent as it is.
IDENTITY: Final = "identity"


def gzip_copy(body: bytes) -> bytes:
    """The gzip copy of ``body`` (`GZIP_LEVEL`, no name, mtime 0: the same bytes every time)."""
    return _deflate.compress(body, GZIP_LEVEL, _GZIP_WBITS)


def brotli_copy(body: bytes) -> bytes:
    """The brotli copy of ``body`` (`BROTLI_QUALITY`, text mode)."""
    return bytes(brotli.compress(body, quality=BROTLI_QUALITY, mode=brotli.MODE_TEXT))


def coded_copy(coding: str, body: bytes) -> bytes:
    """The ``coding`` copy of ``body`` (one of `CODINGS`).

    Raises:
        ValueError: ``coding`` is not one the cache makes.
    """
    if coding == "gzip":
        return gzip_copy(body)
    if coding == "br":
        return brotli_copy(body)
    raise ValueError(f"no {coding} copies are made")


def coding_etag(etag: str, coding: str) -> str:
    """The entity tag of the ``coding`` copy of a representation tagged ``etag`` (a weak tag
    stays weak): ``"abc"`` gives ``"abc-gzip"``."""
    if etag.endswith('"') and len(etag) > 1:
        return f'{etag[:-1]}-{coding}"'
    return f"{etag}-{coding}"


def _quality(params: str) -> float:
    """The ``q`` parameter of one ``Accept-Encoding`` member (1 when absent, 0 when it is
    not a number)."""
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                number = float(value.strip())
            except ValueError:
                return 0.0
            return number if 0.0 <= number <= 1.0 else 0.0
    return 1.0


def choose_coding(accept_encoding: str, offered: tuple[str, ...] = CODINGS) -> str:
    """The coding to send a client whose ``Accept-Encoding`` is ``accept_encoding``: one of
    ``offered`` (in the cache's order of preference), or `IDENTITY`.

    The coding with the highest quality value wins, ``offered``'s order breaking ties; a coding
    the client does not name takes the quality of ``*`` (none when there is no ``*``);
    ``x-gzip`` is ``gzip``; ``q=0`` refuses. The identity body is sent when no offered coding
    is acceptable, or when ``identity`` has a higher quality than each (it is the fallback even
    when refused: the cache has nothing else to send).
    """
    if not accept_encoding:
        return IDENTITY
    qualities: dict[str, float] = {}
    for member in accept_encoding.split(","):
        name, _, params = member.partition(";")
        name = name.strip().lower()
        if name == "x-gzip":
            name = "gzip"
        if name and name not in qualities:
            qualities[name] = _quality(params) if params else 1.0
    star = qualities.get("*", 0.0)
    best, best_quality = IDENTITY, 0.0
    for coding in offered:
        quality = qualities.get(coding, star)
        if quality > best_quality:
            best, best_quality = coding, quality
    if best != IDENTITY and qualities.get(IDENTITY, 0.0) > best_quality:
        return IDENTITY
    return best
