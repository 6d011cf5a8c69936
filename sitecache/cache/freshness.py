"""How long a response stays fresh, and what may be done with it once stale (RFC 9111 §4.2).

`response_freshness` decides, once, when a response is stored, from what the application sent
(`HeaderFacts`, read by `sitecache.cache.capture`), the deployment's heuristic and the
settings. The rules, first that applies wins (`LIFETIME_RULES` names each; the
``Cache-Status`` ``detail`` and the ``GET /cache`` listing show the one that decided):

==================  ==============================================================
``cdn-cache-control``  ``CDN-Cache-Control`` (RFC 9213) is this cache's own field: when it
                       parses, its ``s-maxage``/``max-age`` and nothing of ``Cache-Control``
``s-maxage``           ``Cache-Control: s-maxage`` (for shared caches such as this one)
``max-age``            ``Cache-Control: max-age``
``expires``            ``Expires`` minus ``Date`` (an ``Expires`` that is not a date: expired)
``max_age``            the ``max_age`` setting, for a 200 (a 404 with ``cache_404``) that
                       states no lifetime (the ``max_age`` heuristic, the default)
``last-modified``      a tenth of the time since ``Last-Modified`` (at most ``max_age``), for
                       a status RFC 9110 calls heuristically cacheable that states no lifetime
                       (the ``last_modified`` heuristic of `CacheRules`)
==================  ==============================================================

A directive with an invalid argument (``max-age=-1``) makes the lifetime zero. The current age
counts the application's ``Age`` and the time the answer took, and ``Date`` when it is in the
past (RFC 9111 §4.2.3: the corrected initial age). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus
from typing import Final, Literal

from sitecache.cache.directives import EMPTY, MAX_DELTA_SECONDS, Directives

__all__ = [
    "EXPLICIT_RULES",
    "HEURISTIC_STATUSES",
    "LIFETIME_RULES",
    "Freshness",
    "HeaderFacts",
    "Heuristic",
    "LifetimeRule",
    "response_freshness",
    "understood",
]

#: Which rule gave a stored response its lifetime (see the module docstring); ``none``: no rule
#: did (stored only to be revalidated before each use).
LifetimeRule = Literal[
    "cdn-cache-control", "s-maxage", "max-age", "expires", "max_age", "last-modified", "none"
]
#: Every `LifetimeRule`, and what it means to an administrator.
LIFETIME_RULES: Final[dict[LifetimeRule, str]] = {
    "cdn-cache-control": "the page's CDN-Cache-Control max-age (or s-maxage)",
    "s-maxage": "the page's Cache-Control s-maxage",
    "max-age": "the page's Cache-Control max-age",
    "expires": "the page's Expires minus its Date",
    "max_age": "the max_age setting (the page states no lifetime)",
    "last-modified": "a tenth of the time since the page's Last-Modified (it states no lifetime)",
    "none": "no lifetime: revalidated with the application before each use",
}
#: The rules that read the response's own freshness (the others are heuristics).
EXPLICIT_RULES: Final = frozenset({"cdn-cache-control", "s-maxage", "max-age", "expires"})

#: How a response that states no lifetime is treated: the ``max_age`` setting (for a 200, or a
#: 404 with ``cache_404``), or RFC 9111 §4.2.2's ``Last-Modified`` heuristic.
Heuristic = Literal["max_age", "last_modified"]

#: Statuses RFC 9110 §15.1 lets a cache give a heuristic lifetime (206 aside: never stored).
HEURISTIC_STATUSES: Final = frozenset({200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501})
#: The share of the time since ``Last-Modified`` a heuristic lifetime is (RFC 9111 §4.2.2).
LAST_MODIFIED_FRACTION: Final = 0.1


def understood(status: int) -> bool:
    """Whether the cache knows what ``status`` means (``must-understand`` asks that)."""
    try:
        HTTPStatus(status)
    except ValueError:
        return False
    return True


@dataclass(slots=True)
class HeaderFacts:
    """What the freshness rules read of a response's header fields (`capture` builds it).

    Attributes:
        directives: the directives in force: ``CDN-Cache-Control``'s when it parses, else
            ``Cache-Control``'s.
        targeted: whether ``directives`` come from ``CDN-Cache-Control``.
        cache_control: ``Cache-Control``'s own directives (read even when not in force).
        date: the ``Date`` (Unix time), ``None`` when absent or not a date.
        expires: the ``Expires`` time; ``None`` when absent or not a date.
        has_expires: whether an ``Expires`` field was sent at all.
        age: the ``Age`` in seconds (0 when absent or not a number).
        last_modified: the ``Last-Modified`` time, ``None`` when absent or not a date.
        etag: the application's ``ETag`` as sent (``""`` when none).
    """

    directives: Directives = EMPTY
    targeted: bool = False
    cache_control: Directives = EMPTY
    date: float | None = None
    expires: float | None = None
    has_expires: bool = False
    age: int = 0
    last_modified: float | None = None
    etag: str = ""

    @property
    def validated(self) -> bool:
        """Whether the application gave a validator to revalidate the page with."""
        return bool(self.etag) or self.last_modified is not None


@dataclass(frozen=True, slots=True)
class Freshness:
    """The freshness of a stored response, decided when it is stored.

    Attributes:
        rule: which rule gave the lifetime (`LIFETIME_RULES`).
        lifetime: seconds it is fresh for, counted from an age of zero.
        age: its age when it arrived (the corrected initial age), in seconds.
        forever: fresh until purged (the ``max_age`` setting ``0``).
        stale_window: seconds a stale copy may be served while one request revalidates it:
            ``None`` for the ``stale_while_revalidate`` setting, ``0`` when the response forbids
            serving it stale (``must-revalidate``, ``proxy-revalidate``, ``s-maxage``,
            ``no-cache``), else its own ``stale-while-revalidate``.
        background: the window is the response's own ``stale-while-revalidate``: every request
            within it is answered at once, the revalidation runs after the answer.
        error_window: seconds past the window a stale copy may answer while the application
            fails (its ``stale-if-error``), ``0`` when not said.
        revalidate: ``no-cache``: revalidated with the application before every use.
    """

    rule: LifetimeRule
    lifetime: float
    age: float = 0.0
    forever: bool = False
    stale_window: int | None = None
    background: bool = False
    error_window: int = 0
    revalidate: bool = False

    @property
    def explicit(self) -> bool:
        """Whether the lifetime comes from the response itself."""
        return self.rule in EXPLICIT_RULES

    def expires(self, arrived: float) -> float:
        """The Unix time it stops being fresh when it arrived at ``arrived`` (``0.0``: never;
        at most ``arrived`` itself when it arrived stale)."""
        if self.forever:
            return 0.0
        return arrived + max(0.0, self.lifetime - self.age)

    def must_revalidate_each_use(self) -> bool:
        """Whether every use needs a revalidation first (``no-cache``, a lifetime of zero)."""
        return self.revalidate or (not self.forever and self.lifetime <= 0)

    def stale_on_arrival(self) -> bool:
        """Whether it was stale the moment it arrived."""
        return not self.forever and self.lifetime <= self.age


def _explicit_lifetime(facts: HeaderFacts, arrived: float) -> tuple[LifetimeRule, float] | None:
    """The response's own lifetime and the rule that gave it, or ``None`` when it states none."""
    directives = facts.directives
    if facts.targeted:
        for name in ("s-maxage", "max-age"):
            seconds = directives.seconds(name)
            if seconds is not None:
                return "cdn-cache-control", float(seconds)
        return None
    for name in ("s-maxage", "max-age"):
        if directives.present(name):
            seconds = directives.seconds(name)
            # An invalid argument (max-age=-1, max-age=1a) makes the response stale.
            return ("s-maxage" if name == "s-maxage" else "max-age"), float(seconds or 0)
    if facts.has_expires:
        if facts.expires is None:  # not a date (``Expires: 0``): already expired
            return "expires", 0.0
        date = facts.date if facts.date is not None else arrived
        return "expires", float(min(max(0.0, facts.expires - date), MAX_DELTA_SECONDS))
    return None


def initial_age(facts: HeaderFacts, requested: float, arrived: float) -> float:
    """The corrected initial age of a response asked for at ``requested`` that arrived at
    ``arrived`` (RFC 9111 §4.2.3)."""
    apparent = max(0.0, arrived - facts.date) if facts.date is not None else 0.0
    corrected = facts.age + max(0.0, arrived - requested)
    return max(apparent, corrected)


def response_freshness(
    facts: HeaderFacts,
    status: int,
    *,
    requested: float,
    arrived: float,
    heuristic: Heuristic,
    max_age: int,
    cache_404: bool,
) -> Freshness:
    """The freshness of a response with ``status`` and these header facts, asked for at
    ``requested`` and arrived at ``arrived``, under the deployment's ``heuristic`` and the
    ``max_age`` and ``cache_404`` settings. A response no rule gives a lifetime gets rule
    ``none`` and a lifetime of zero."""
    directives = facts.directives
    age = initial_age(facts, requested, arrived)
    # PERF: most pages state no directive at all; nothing is looked up in them then.
    stated = directives is not EMPTY and bool(directives.values or directives.invalid)
    no_cache = stated and directives.fields("no-cache") == ()
    forbidden = no_cache or (
        stated
        and any(
            directives.present(name) for name in ("must-revalidate", "proxy-revalidate", "s-maxage")
        )
    )
    window = directives.seconds("stale-while-revalidate") if stated else None
    rule: LifetimeRule = "none"
    lifetime, forever = 0.0, False
    explicit = _explicit_lifetime(facts, arrived)
    if explicit is not None:
        rule, lifetime = explicit
    elif not no_cache:
        found = _heuristic(facts, status, arrived, heuristic, max_age, cache_404)
        if found is not None:
            rule, lifetime, forever = found
    return Freshness(
        rule,
        0.0 if no_cache else lifetime,
        age,
        forever=forever and not no_cache,
        stale_window=0 if forbidden else window,
        background=not forbidden and window is not None,
        error_window=0 if forbidden or not stated else directives.seconds("stale-if-error") or 0,
        revalidate=no_cache,
    )


def _heuristic(
    facts: HeaderFacts,
    status: int,
    arrived: float,
    heuristic: Heuristic,
    max_age: int,
    cache_404: bool,
) -> tuple[LifetimeRule, float, bool] | None:
    """``(rule, lifetime, forever)`` a heuristic gives a response stating no lifetime, or
    ``None``."""
    if status == 404 and not cache_404:
        return None
    if heuristic == "max_age":
        if status not in (200, 404):
            return None
        return "max_age", float(max_age), max_age == 0
    public = facts.directives.present("public")
    if status not in HEURISTIC_STATUSES and not public:
        return None
    if facts.last_modified is None:
        return None
    date = facts.date if facts.date is not None else arrived
    lifetime = max(0.0, date - facts.last_modified) * LAST_MODIFIED_FRACTION
    if max_age:
        lifetime = min(lifetime, float(max_age))
    return "last-modified", lifetime, False
