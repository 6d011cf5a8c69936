"""What the cache did with one request: one `Outcome` that both counts and renders.

An outcome is added once to the engine's counters (the names ``GET /stats`` reads) and rendered
once as the RFC 9211 ``Cache-Status`` value of the answer. `CACHE_STATUS_VALUES` is the table of
every shape of value the cache writes, each made by the constructor the cache uses for it, with
the counter it adds to and what it means: the reference documentation is generated from it, and
the tests check that each value the cache writes has a row.

An answer from a stored page whose lifetime the response itself gave (not the ``max_age``
setting) names the rule in ``detail`` when it has no other: ``sitecache; hit; ttl=55;
detail=max-age`` (`sitecache.cache.freshness.LIFETIME_RULES`).

Every reason ``R`` is explained: a guard's by its row (`sitecache.cache.policy`), the others
(`OutcomeReason`) by `OUTCOME_REASONS`; `explanations` joins both for the management API.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from sitecache.cache.policy import REQUEST_GUARDS, RESPONSE_GUARDS

__all__ = [
    "CACHE_NAME",
    "CACHE_STATUS_VALUES",
    "FRESH_HIT",
    "OUTCOME_REASONS",
    "STALE_HIT",
    "Counter",
    "Fwd",
    "Outcome",
    "OutcomeReason",
    "StatusValue",
    "explanations",
]

#: The cache's name in ``Cache-Status`` (RFC 9211 §2).
CACHE_NAME: Final = "sitecache"

#: Why the request went forward to the application (RFC 9211 ``fwd``): no entry for the URL,
#: no entry for the request's ``Vary`` values, the entry was stale, or the cache was bypassed.
Fwd = Literal["uri-miss", "vary-miss", "stale", "bypass"]

#: The request counters (``GET /stats`` ``requests``); a ``bypass`` also counts its reason.
Counter = Literal["hit", "stale", "miss", "bypass"]

#: Reasons that no guard gives: the cache itself could not take part.
OutcomeReason = Literal["storage_error", "storage", "purged", "purge_pending"]

#: The explanation of each `OutcomeReason` (a guard's reason is explained by its row).
OUTCOME_REASONS: Final[dict[OutcomeReason, str]] = {
    "storage_error": "The cache storage failed (see the server log and GET /status).",
    "storage": "The cache storage cannot be used now: it was found damaged and is being "
    "started empty, its disk is full, or it cannot be written; pages are served uncached until "
    "it can be (GET /status says why).",
    "purged": "A purge ran while the page was rendered, so it was sent but not stored.",
    "purge_pending": "A purge owed to a content change has not been applied yet (the storage "
    "failed); pages are served uncached until it is (see GET /status).",
}

_HIT: Final = f"{CACHE_NAME}; hit"
#: `Outcome.stored_after` of each ``fwd`` made so far
_STORED_AFTER: dict[str, Outcome] = {}


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the cache did with one request (build it with the class methods).

    Attributes:
        counter: the request counter it adds to.
        fwd: why it went forward to the application; ``None`` for a hit.
        detail: the reason it was not stored or not looked up, or ``"stale"``.
        stored: the application's answer was stored.
        collapsed: answered from the page another request rendered meanwhile.
        fwd_status: the status the application answered a request that went forward with,
            when the answer came from the cache all the same (``304``: revalidated; a failure
            a stale copy answered for); ``0``: not shown.
    """

    counter: Counter
    fwd: Fwd | None = None
    detail: str = ""
    stored: bool = False
    collapsed: bool = False
    fwd_status: int = 0

    @classmethod
    def stored_after(cls, fwd: Fwd) -> Outcome:
        """The application answered and its page was stored (one value per ``fwd``: outcomes
        are immutable)."""
        made = _STORED_AFTER.get(fwd)
        if made is None:
            made = _STORED_AFTER[fwd] = cls("miss", fwd, stored=True)
        return made

    @classmethod
    def collapsed_into(cls, fwd: Fwd) -> Outcome:
        """Answered from the page another request rendered while this one waited."""
        return cls("hit", fwd, collapsed=True)

    @classmethod
    def revalidated(cls, fwd: Fwd, *, stored: bool, detail: str = "") -> Outcome:
        """The application said the stored copy is current (304); it was served (and stored
        again with its refreshed fields when ``stored``)."""
        return cls("hit", fwd, detail, stored=stored, fwd_status=304)

    @classmethod
    def stale_on_error(cls, status: int) -> Outcome:
        """The application failed (``status``; 500 for an exception) and a stale copy it
        allowed answered instead."""
        return cls("stale", "stale", "stale", fwd_status=status)

    @classmethod
    def bypass(cls, reason: str) -> Outcome:
        """Not looked up: a request guard's ``reason``."""
        return cls("bypass", "bypass", reason)

    @classmethod
    def refused(cls, fwd: Fwd, reason: str) -> Outcome:
        """Rendered but not stored: a response guard's ``reason``."""
        return cls("bypass", fwd, reason)

    @classmethod
    def failed(cls, fwd: Fwd, reason: OutcomeReason) -> Outcome:
        """The cache could not take part (``fwd="bypass"``: before the lookup; else after
        the render, which was answered but not stored)."""
        return cls("bypass", fwd, reason)

    def count(self, count: Callable[[str], object]) -> None:
        """Add this outcome to the request counters through ``count`` (`CacheEngine.count`):
        its counter, and ``bypass:<reason>`` for a bypass."""
        count(self.counter)
        if self.counter == "bypass":
            count(f"bypass:{self.detail}")

    def header(self, ttl: int | None = None, rule: str = "") -> str:
        """The ``Cache-Status`` value; ``ttl`` (whole seconds of freshness left, negative when
        stale, ``None`` when fresh until purged) is shown on a hit only; ``rule``, the rule
        that gave the page its lifetime (`sitecache.cache.freshness.LIFETIME_RULES`; ``""``
        for the ``max_age`` setting), is the ``detail`` of an answer that has no other."""
        if self.fwd is None:
            value = _HIT if ttl is None else f"{_HIT}; ttl={ttl}"
        else:
            value = f"{CACHE_NAME}; fwd={self.fwd}"
            if self.fwd_status:
                value += f"; fwd-status={self.fwd_status}"
            if self.stored:
                value += "; stored"
            elif self.collapsed:
                value += "; collapsed"
        detail = self.detail or rule
        return f"{value}; detail={detail}" if detail else value


#: A fresh entry served.
FRESH_HIT: Final = Outcome("hit")
#: A stale entry served while another request regenerates it.
STALE_HIT: Final = Outcome("stale", detail="stale")


def explanations() -> dict[str, str]:
    """Every reason an outcome can carry, mapped to the sentence that explains it to an
    administrator: each guard's row, then `OUTCOME_REASONS`."""
    table = {guard.reason: guard.explanation for guard in REQUEST_GUARDS}
    table.update({guard.reason: guard.explanation for guard in RESPONSE_GUARDS})
    table.update(OUTCOME_REASONS.items())
    return table


@dataclass(frozen=True, slots=True)
class StatusValue:
    """One row of `CACHE_STATUS_VALUES`: an example of one shape of ``Cache-Status`` value.

    Attributes:
        made_by: the constructor (or constant) of `Outcome` the cache makes it with.
        outcome: the example outcome.
        ttl: the seconds of freshness left it is rendered with (`Outcome.header`).
        rule: the lifetime rule it is rendered with (``""``: the ``max_age`` setting).
        meaning: what happened, for an administrator.
    """

    made_by: str
    outcome: Outcome
    ttl: int | None
    rule: str
    meaning: str

    @property
    def header(self) -> str:
        """The ``Cache-Status`` value of the example."""
        return self.outcome.header(self.ttl, self.rule)


#: Every shape of ``Cache-Status`` value the cache writes: ``detail=<rule>`` is any of
#: `sitecache.cache.freshness.LIFETIME_RULES`, ``detail=<reason>`` any guard's reason or
#: `OUTCOME_REASONS` key.
CACHE_STATUS_VALUES: Final[tuple[StatusValue, ...]] = (
    StatusValue("FRESH_HIT", FRESH_HIT, 3540, "",
                "Served from the cache, fresh for 3540 more seconds (the max_age setting)."),
    StatusValue("FRESH_HIT", FRESH_HIT, None, "",
                "Served from the cache, fresh until a purge removes it (max_age 0)."),
    StatusValue("FRESH_HIT", FRESH_HIT, 55, "max-age",
                "Served from the cache, with a lifetime the page gave: detail names the rule "
                "(below)."),
    StatusValue("STALE_HIT", STALE_HIT, -4, "",
                "Served stale (4 seconds past its freshness) while one request renders or "
                "revalidates it again (stale_while_revalidate, or the page's own "
                "stale-while-revalidate, revalidated after this answer)."),
    StatusValue("revalidated", Outcome.revalidated("stale", stored=True), None, "max-age",
                "The stored page was stale; the application answered 304 to a conditional "
                "request (it is current), so it was served and stored again with its refreshed "
                "fields."),
    StatusValue("revalidated", Outcome.revalidated("stale", stored=False, detail="purged"),
                None, "",
                "The same, but not stored again: a purge began meanwhile, or the storage "
                "failed (detail is the reason)."),
    StatusValue("stale_on_error", Outcome.stale_on_error(503), None, "",
                "The stored page was stale and the application failed (500, 502, 503, 504; "
                "500 when it raised): the stale copy answered, as the page allowed "
                "(stale-if-error)."),
    StatusValue("stored_after", Outcome.stored_after("uri-miss"), None, "",
                "Not in the cache: the site answered and the page was stored."),
    StatusValue("stored_after", Outcome.stored_after("uri-miss"), None, "s-maxage",
                "The same, with a lifetime the page gave (the rule in detail)."),
    StatusValue("stored_after", Outcome.stored_after("vary-miss"), None, "",
                "Stored before, but not for this request's values of the headers the page "
                "varies on: rendered and stored."),
    StatusValue("stored_after", Outcome.stored_after("stale"), None, "",
                "The stored page was stale and could not be revalidated (no validator, or the "
                "page changed): this request rendered it again and stored it (exactly one "
                "request per page, across processes and nodes)."),
    StatusValue("collapsed_into", Outcome.collapsed_into("uri-miss"), None, "",
                "Another request was rendering this page: this one waited for it and was "
                "answered from it."),
    StatusValue("bypass", Outcome.bypass("logged_in_cookie"), None, "",
                "The request was not looked up; detail is the reason (below)."),
    StatusValue("refused", Outcome.refused("uri-miss", "set_cookie"), None, "",
                "The site answered but the page may not be stored; detail is the reason "
                "(below). fwd is uri-miss, vary-miss or stale (a stale page rendered or "
                "revalidated again whose new answer may not be stored)."),
    StatusValue("failed", Outcome.failed("uri-miss", "storage_error"), None, "",
                "The site answered but the cache could not store the page (the storage "
                "failed, or a purge ran meanwhile); detail is the reason (below)."),
    StatusValue("failed", Outcome.failed("bypass", "purge_pending"), None, "",
                "The cache could not take part before the lookup (the storage failed, or a "
                "purge is owed); detail is the reason (below)."),
)  # fmt: skip
