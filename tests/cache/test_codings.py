"""Content-coding negotiation (``Accept-Encoding``, RFC 9110 §12.5.3) and the copies made."""

from __future__ import annotations

import gzip

import brotli
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitecache.cache.codings import CODINGS, IDENTITY, choose_coding, coded_copy, coding_etag

# (Accept-Encoding, coding chosen among br and gzip)
CASES = [
    ("", IDENTITY),
    ("gzip", "gzip"),
    ("GZIP", "gzip"),
    ("x-gzip", "gzip"),
    ("br", "br"),
    ("gzip, deflate, br", "br"),  # equal: the cache's preference
    ("gzip, deflate, br, zstd", "br"),
    ("br;q=0.5, gzip", "gzip"),
    ("gzip;q=0.9, br;q=0.8", "gzip"),
    ("br;q=0, gzip", "gzip"),
    ("gzip;q=0", IDENTITY),
    ("gzip;q=0.0, identity", IDENTITY),
    ("gzip;q=abc", IDENTITY),
    ("gzip;q=2", IDENTITY),  # out of range: not a quality value
    ("*", "br"),
    ("*;q=0.1, deflate", "br"),
    ("br;q=0, *", "gzip"),
    ("*;q=0, gzip", "gzip"),
    ("*;q=0", IDENTITY),
    ("identity", IDENTITY),
    ("identity;q=1, gzip;q=0.5", IDENTITY),  # the client prefers the identity body
    ("identity;q=0, gzip;q=0.5", "gzip"),
    ("identity;q=0", IDENTITY),  # refused, but nothing else is acceptable: the fallback
    ("deflate", IDENTITY),
    (" gzip ; q=0.7 , br ; Q=0.6 ", "gzip"),
]


@pytest.mark.parametrize(("header", "chosen"), CASES)
def test_the_coding_sent_follows_the_quality_values(header: str, chosen: str) -> None:
    assert choose_coding(header) == chosen


NAMES = st.sampled_from(["gzip", "x-gzip", "br", "identity", "*", "deflate", "zstd", "GZip"])
QUALITIES = st.one_of(st.none(), st.sampled_from(["0", "0.0", "0.5", "1", "0.001", "0.999", "1.0"]))
MEMBERS = st.lists(st.tuples(NAMES, QUALITIES), max_size=6)


def _effective(members: list[tuple[str, str | None]]) -> dict[str, float]:
    """The model: each name's quality (its first mention; absent ``q``: 1)."""
    found: dict[str, float] = {}
    for name, quality in members:
        key = name.lower().replace("x-gzip", "gzip")
        found.setdefault(key, 1.0 if quality is None else float(quality))
    return found


@given(MEMBERS, st.sampled_from([CODINGS, ("gzip",), ("br",), ()]))
def test_the_chosen_coding_is_never_refused_and_never_beaten(
    members: list[tuple[str, str | None]], offered: tuple[str, ...]
) -> None:
    header = ", ".join(name if q is None else f"{name};q={q}" for name, q in members)
    chosen = choose_coding(header, offered)
    qualities = _effective(members)
    star = qualities.get("*", 0.0)
    scores = {coding: qualities.get(coding, star) for coding in offered}
    best = max(scores.values(), default=0.0)
    if chosen == IDENTITY:
        # Nothing offered is acceptable, or the client ranks the identity body above it.
        assert best == 0.0 or qualities.get(IDENTITY, 0.0) > best
    else:
        assert chosen in offered
        assert scores[chosen] > 0  # q=0 refuses
        assert scores[chosen] == best
        # Ties go to the cache's order of preference.
        assert all(scores[c] < best for c in offered[: offered.index(chosen)])
        assert qualities.get(IDENTITY, 0.0) <= best


def test_copies_decode_to_the_body_and_their_tags_name_the_coding() -> None:
    body = b"<p>" + b"a page of words " * 200 + b"</p>"
    assert gzip.decompress(coded_copy("gzip", body)) == body
    assert brotli.decompress(coded_copy("br", body)) == body
    assert coding_etag('"abc"', "br") == '"abc-br"'
    assert coding_etag('W/"abc"', "gzip") == 'W/"abc-gzip"'
