"""The engine's entries behind this process's memory tier, read and written as `Prepared`.

A read names the purge generation its request read first (`TieredEntries.generation`): the
memory tier (`sitecache.cache.tier`) answers only with what was read or written under that
generation, else the engine loads the entry and the tier keeps it. A base key holding a
``Vary`` pointer leads to the request's own variant (`sitecache.cache.vary`). A write is
conditional on the generation read before the page was rendered: the pointer first, then the
entry, so a reader never follows a pointer that no purge could reach.

The copy writers (static-file copies) are told of each page stored, and of each page read from
the storage into the tier, with the generation of that store or read: never on a hit the tier
answers.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

from sitecache.bounded_memo import BoundedMemo
from sitecache.cache.answers import Prepared
from sitecache.cache.codings import CODINGS, IDENTITY, choose_coding, coded_copy
from sitecache.cache.engine import CacheEngine
from sitecache.cache.entry import CacheEntry
from sitecache.cache.revalidation import stale_window
from sitecache.cache.storage import StorageError
from sitecache.cache.tier import MemoryTier
from sitecache.cache.vary import keyed_vary, pointer_entry, variant_key

__all__ = ["CHOSEN_MEMO_SIZE", "CopyWriter", "TieredEntries"]

logger = logging.getLogger("sitecache.cache")

#: Distinct ``Accept-Encoding`` values whose coding is remembered before the memo is emptied.
CHOSEN_MEMO_SIZE: Final = 256

#: ``(entry, vary, generation, stored)``: told of each page this process stored (``stored``)
#: or read from the storage into its memory tier, with the purge generation that store or read
#: saw (static-file copies: `sitecache.cache.api.static.StaticFiles.write_copy`).
CopyWriter = Callable[[CacheEntry, tuple[str, ...], object, bool], None]


class TieredEntries:
    """Prepared entries of one `PageCache`: its memory tier in front of the engine.

    Args:
        engine: the engine that owns the storage.
        tier: prepared entries of this process, stamped with the generation they were read
            or written under.
        copy_writers: told of each page stored or read from the storage.
    """

    def __init__(
        self,
        engine: CacheEngine,
        tier: MemoryTier[Prepared],
        copy_writers: list[CopyWriter] | None = None,
    ) -> None:
        self.engine = engine
        self.tier = tier
        #: told of each page stored or read from the storage (empty: one test per read)
        self.copy_writers: list[CopyWriter] = copy_writers if copy_writers is not None else []
        #: ``Accept-Encoding`` value -> the coding its client gets of a compressible page
        self._chosen: BoundedMemo[str, str] = BoundedMemo(CHOSEN_MEMO_SIZE)
        #: ``ahead``: (key, generation) of this thread's last read ahead (`generation`)
        self._read = threading.local()

    def generation(self, base: str | None = None) -> object:
        """The purge generation now (read before anything a request renders or looks up);
        the memory tier gives back what older ones hold. ``base``: the key the request looks
        up next; unless the memory tier holds it, the storage may read it in the same round
        trip (`Storage.generation_for`).

        Raises:
            StorageError: the storage failed.
        """
        ahead = base if base is not None and base not in self.tier else None
        generation = self.engine.generation(ahead)
        self._read.ahead = (ahead, generation) if ahead is not None else None
        self.tier.observe(generation)
        return generation

    def prepared(
        self, key: str, now: float, generation: object, *, refresh: bool = False
    ) -> Prepared | None:
        """The entry under ``key`` ready to send: from the memory tier when it holds one read
        under ``generation`` and still fresh (unless ``refresh``), else from the storage.

        Raises:
            StorageError: the storage failed.
        """
        tier = self.tier
        prepared = tier.get(key, generation)
        fresh = prepared is not None and (not prepared.expires or now < prepared.expires)
        ahead = getattr(self._read, "ahead", None)
        if ahead is not None and ahead[0] == key:
            self._read.ahead = None
            if fresh and not refresh and ahead[1] is generation:
                # Put in the tier since `generation` read nothing there (another thread).
                self.engine.forgo_lock(key)
        if fresh and not refresh:
            return prepared
        # Not here, or stale here: another process may have stored a fresher copy.
        entry = self.engine.load(key, generation)
        if entry is None:
            if prepared is not None:
                tier.forget(key)
            return None
        if prepared is None or entry.created > prepared.created:
            prepared = Prepared(entry)
            tier.put(key, prepared, generation)
            if self.copy_writers and entry.status:
                self._tell_copy_writers(entry, keyed_vary(entry.vary), generation, stored=False)
        return prepared

    def lookup(
        self, base: str, environ: Mapping[str, Any], now: float, generation: object
    ) -> tuple[str, Prepared | None]:
        """``(key, entry or None)`` for a request whose base key is ``base``: the entry under
        ``base``, or, when that is a ``Vary`` pointer, the request's own variant.

        Raises:
            StorageError: the storage failed.
        """
        prepared = self.prepared(base, now, generation)
        if prepared is None or prepared.status_line:
            return base, prepared
        # A pointer: the real entry is keyed by the request's values of the Vary headers.
        key = variant_key(base, prepared.vary, environ)
        return key, self.prepared(key, now, generation)

    def save(
        self,
        base: str,
        entry: CacheEntry,
        vary: tuple[str, ...],
        environ: Mapping[str, Any],
        stale_while_revalidate: int,
        generation: object,
        release: tuple[str, str] | None = None,
    ) -> str | None:
        """Store ``entry`` of the page under ``base`` (which varies on ``vary``, lower case)
        unless a purge began since ``generation``: the key it was stored under, else ``None``.
        ``release``: the fill lock the entry's own write frees (`CacheEngine.store`: once the
        entry is there, never before).

        Raises:
            StorageError: the storage failed.
        """
        engine = self.engine
        key = base
        if vary:
            key = variant_key(base, vary, environ)
            pointer = pointer_entry(entry, vary)
            if not engine.store(base, pointer, stale_while_revalidate, generation):
                return None
            self.tier.forget(base)
        if not engine.store(key, entry, stale_while_revalidate, generation, release=release):
            return None
        if self.copy_writers:
            self._tell_copy_writers(entry, vary, generation, stored=True)
        return key

    def _tell_copy_writers(
        self, entry: CacheEntry, vary: tuple[str, ...], generation: object, *, stored: bool
    ) -> None:
        for writer in self.copy_writers:
            try:
                writer(entry, vary, generation, stored)
            except Exception:  # a copy is extra: its failure never fails the request
                logger.exception("copy writer %r failed", writer)

    def with_copy(
        self,
        key: str,
        prepared: Prepared,
        accept_encoding: str,
        generation: object,
        stale_while_revalidate: int,
    ) -> tuple[Prepared, str]:
        """``prepared`` (fresh under ``key``, read under ``generation``) and the coding its
        client is sent: the one it accepts best (`choose_coding`); ``stale_while_revalidate``
        is the setting (the store-back keeps the entry's stale window). A copy in that coding not
        made yet is made now, kept in the memory tier and stored back: only over the
        very entry read (`CacheEntry.times`) and unless a purge began since ``generation``,
        so it never brings back a purged or softly purged page. A failed store-back is
        logged; the copy is sent all the same.
        """
        if prepared.offered is CODINGS:  # PERF: a site's clients send a few distinct values
            coding = self._chosen.get(accept_encoding)
            if coding is None:
                coding = choose_coding(accept_encoding, CODINGS)
                self._chosen.keep(accept_encoding, coding)
        else:
            coding = choose_coding(accept_encoding, prepared.offered)
        if coding == IDENTITY or coding in prepared.copies:
            return prepared, coding
        entry = prepared.entry
        updated = entry.with_copy(coding, coded_copy(coding, entry.body))
        richer = Prepared(updated)
        self.tier.put(key, richer, generation)
        try:
            window = stale_window(entry.fresh, stale_while_revalidate)
            self.engine.store(key, updated, window, generation, replaces=entry.times)
        except StorageError as exc:
            self.engine.storage_warning("cache storage unavailable, copy not stored: %s", exc)
        return richer, coding

    def remember(self, key: str, prepared: Prepared, generation: object) -> None:
        """Keep ``prepared``, just stored under ``key``, for this process's next requests."""
        self.tier.put(key, prepared, generation)
