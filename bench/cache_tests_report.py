"""Scores of cache-tests results, and the Markdown section `bench/cache_tests.py` writes.

A result file maps each test id to ``true`` or ``[error kind, message]``. A test is *graded*
when its kind is ``required`` or ``optimal`` (a ``check`` only records behaviour) and it is not
for browsers only. `score` counts the graded tests passed one by one, and under
cache-tests.fyi's rule: a test counts only when every test it depends on passed (or, for a
``check``, answered yes), recursively. Every failure of ours is listed with its reason from
`FAILURE_REASONS` (written here, in our words), or `TIMING` when it passed on another storage.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = [
    "BEGIN",
    "END",
    "FAILURE_REASONS",
    "TIMING",
    "Score",
    "Suite",
    "reason_for",
    "render_markdown",
    "replace_section",
    "score",
]

BEGIN: Final = "<!-- cache-tests results: written by bench/cache_tests.py --write -->"
END: Final = "<!-- end of cache-tests results -->"

#: Why a graded test still fails through PageCache: test id (or an id prefix ending in ``*``)
#: to the reason, a deliberate choice of a page cache or a limit of WSGI.
FAILURE_REASONS: Final[dict[str, str]] = {
    "headers-store-Set-Cookie": (
        "Deliberate (security): a response that sets a cookie belongs to one visitor and is "
        "never stored, whatever its Cache-Control says."
    ),
    "other-set-cookie": ("Deliberate (security): a response that sets a cookie is never stored."),
    "other-authorization-*": (
        "Deliberate (security): a request carrying Authorization is never looked up nor "
        "stored, even when the response says public, s-maxage or must-revalidate."
    ),
    "method-POST": (
        "Deliberate: only GET (and HEAD) answers are stored; a POST's answer is passed on, "
        "and a successful POST purges the URL it changed."
    ),
    "partial-store-partial-*": (
        "Deliberate: a 206 partial answer is never stored (ranges are cut from whole stored "
        "pages), and a Range request on a miss is passed to the application as it is."
    ),
    "interim-*": (
        "WSGI limit: a WSGI application cannot send interim (1xx) responses, so the 102 and "
        "103 the origin sends never reach the client (the reverse proxy reads and drops them)."
    ),
    "vary-normalise-lang-order": (
        "Deliberate: the order of the languages in Accept-Language is the visitor's order of "
        "preference, which an application may honour: they are not the same variant."
    ),
    "vary-normalise-lang-select": (
        "Not done: choosing a stored variant by content negotiation (matching Accept-Language "
        "against the stored Content-Language) is not modelled; variants are keyed by value."
    ),
    "conditional-lm-fresh-no-lm": (
        "The page has no Last-Modified: PageCache gives it the time it was stored, which is "
        "later than the date asked about, so the answer is a 200 (no cache in the published "
        "results passes this test)."
    ),
}

#: The reason of a test that failed on some of our storages and passed on others: the code is
#: the same on each, so it was the moment.
TIMING: Final = (
    "Timing: passed on {passed}. A purge caused by another test at that moment (the suite runs "
    "25 at once; its invalidation tests purge) refused the store of this test's page, which was "
    "being rendered then, so its next request was not a hit."
)


@dataclass(frozen=True, slots=True)
class Suite:
    """The suite's tests (dicts with ``id``, ``kind``, ``browser_only``, ``depends_on``,
    ``name``, ``suite``) and the published results of other caches (name, results)."""

    tests: Sequence[Mapping[str, Any]]
    published: Sequence[tuple[str, Mapping[str, Any]]] = ()

    def graded(self) -> list[Mapping[str, Any]]:
        """The tests that are scored."""
        return [
            test
            for test in self.tests
            if test["kind"] in ("required", "optimal") and not test["browser_only"]
        ]

    def by_id(self) -> dict[str, Mapping[str, Any]]:
        """Each test by its id."""
        return {str(test["id"]): test for test in self.tests}


@dataclass(frozen=True, slots=True)
class Score:
    """How one cache did on the graded tests."""

    graded: int
    passed: int
    passed_with_prerequisites: int
    failures: dict[str, str] = field(default_factory=dict)


def _outcome(
    tests: Mapping[str, Mapping[str, Any]],
    results: Mapping[str, Any],
    test_id: str,
    honour_prerequisites: bool,
) -> str:
    """``pass``, ``yes``, ``no``, ``fail``, ``optional_fail``, ``setup_fail``, ``retry``,
    ``harness_fail``, ``dependency_fail`` or ``untested`` (the suite's own result types)."""
    test = tests[test_id]
    result = results.get(test_id)
    if result is None:
        return "untested"
    if honour_prerequisites:
        for prerequisite in test.get("depends_on") or ():
            if _outcome(tests, results, prerequisite, True) not in ("pass", "yes"):
                return "dependency_fail"
    if isinstance(result, list) and result:
        if result[0] == "Setup":
            return "retry" if len(result) > 1 and result[1] == "retry" else "setup_fail"
        if result[0] == "AbortError":
            return "harness_fail"
    if test["kind"] == "check":
        return "yes" if result is True else "no"
    if result is True:
        return "pass"
    return "fail" if test["kind"] == "required" else "optional_fail"


def score(suite: Suite, results: Mapping[str, Any]) -> Score:
    """The score of ``results`` on ``suite``'s graded tests."""
    tests = suite.by_id()
    graded = suite.graded()
    passed = with_prerequisites = 0
    failures: dict[str, str] = {}
    for test in graded:
        test_id = str(test["id"])
        if _outcome(tests, results, test_id, False) == "pass":
            passed += 1
        else:
            found = results.get(test_id)
            message = found[1] if isinstance(found, list) and len(found) > 1 else str(found)
            failures[test_id] = str(message)
        if _outcome(tests, results, test_id, True) == "pass":
            with_prerequisites += 1
    return Score(len(graded), passed, with_prerequisites, failures)


def reason_for(test_id: str) -> str:
    """Our reason for a failing test (``""`` when none is written)."""
    if test_id in FAILURE_REASONS:
        return FAILURE_REASONS[test_id]
    for pattern, reason in FAILURE_REASONS.items():
        if pattern.endswith("*") and test_id.startswith(pattern[:-1]):
            return reason
    return ""


def _cell(text: str) -> str:
    """``text`` safe in a Markdown table cell."""
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip()


def render_markdown(
    suite: Suite,
    ours: Mapping[str, Score],
    *,
    heading: str = "",
    preamble: Sequence[str] = (),
) -> str:
    """The generated section: ``heading`` and ``preamble`` lines, the score table (ours,
    then the published peers, best first) and every graded test failing on any of our
    storages with its reason."""
    graded = len(suite.graded())
    rows = [
        f"| **sitecache PageCache, {kind}** | **{result.passed}** | "
        f"**{result.passed_with_prerequisites}** |"
        for kind, result in ours.items()
    ]
    peers = sorted(
        ((name, score(suite, results)) for name, results in suite.published),
        key=lambda item: (-item[1].passed, -item[1].passed_with_prerequisites),
    )
    rows += [
        f"| {name} (published) | {s.passed} | {s.passed_with_prerequisites} |" for name, s in peers
    ]
    lines = [BEGIN, ""]
    if heading:
        lines += [heading, ""]
    if preamble:
        lines += [*preamble, ""]
    lines += [
        f"| cache | passed of {graded} graded, one by one | under the cache-tests.fyi rule |",
        "|---|---:|---:|",
        *rows,
        "",
    ]
    failing: dict[str, dict[str, str]] = {}
    for kind, result in ours.items():
        for test_id, message in result.failures.items():
            failing.setdefault(test_id, {})[kind] = message
    tests = suite.by_id()
    if failing:
        lines += [
            "| test | kind | where | what the suite saw | why |",
            "|---|---|---|---|---|",
        ]
        for test_id in sorted(failing):
            where = ", ".join(failing[test_id]) if len(failing[test_id]) < len(ours) else "all"
            message = next(iter(failing[test_id].values()))
            passed = [kind for kind in ours if kind not in failing[test_id]]
            reason = reason_for(test_id) or (
                TIMING.format(passed=", ".join(passed)) if passed else "(not explained yet)"
            )
            lines.append(
                f"| `{test_id}` | {tests[test_id]['kind']} | {where} | {_cell(message)} | "
                f"{_cell(reason)} |"
            )
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def replace_section(path: Path, section: str) -> None:
    """Put ``section`` between the markers of ``path`` (appended when it has none)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    start, end = text.find(BEGIN), text.find(END)
    if start >= 0 and end > start:
        text = text[:start] + section + text[end + len(END) :]
    else:
        text = text.rstrip() + ("\n\n" if text else "") + section + "\n"
    path.write_text(text, encoding="utf-8")
