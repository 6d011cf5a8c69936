"""Schema ``pattern`` read as PCRE, as WordPress reads it (issue #11).

WordPress's ``rest_validate_json_schema_pattern`` escapes every ``#`` and runs
``preg_match('#' . $pattern . '#u', $value)``: PCRE2 in UTF mode with Unicode properties for
``\\d``, ``\\w`` and the POSIX classes (PHP sets ``PCRE2_UCP`` with ``/u``), unanchored and
case-sensitive. Rows pin what ``preg_match`` answers; a pattern PCRE refuses matches nothing and is
reported as misuse (PHP's compile warning).
"""

from __future__ import annotations

import pytest

from sitecache.schema import report_misuse_to, validate_value_from_schema
from sitecache.schema.patterns import compile_schema_pattern, pattern_matches, translate_pcre_u

# (pattern, subject, preg_match result)
MATCHING_ROWS = [
    # Unicode properties
    pytest.param(r"^\p{L}+$", "héllo", True, id="p-L-letters"),
    pytest.param(r"^\p{L}+$", "h3llo", False, id="p-L-not-a-digit"),
    pytest.param(r"^\pL\pL$", "ßé", True, id="p-L-single-letter-form"),
    pytest.param(r"^\p{Lu}", "Élan", True, id="p-Lu-uppercase"),
    pytest.param(r"^\p{Lu}", "élan", False, id="p-Lu-not-lowercase"),
    pytest.param(r"^\P{L}+$", "123-!", True, id="P-L-negated"),
    pytest.param(r"^\p{^L}+$", "123", True, id="p-caret-negated"),
    pytest.param(r"^\p{Greek}+$", "αβγ", True, id="script-greek"),
    pytest.param(r"^\p{N}+$", "٣3", True, id="p-N-any-digit"),
    pytest.param(r"^\p{L&}$", "a", True, id="p-L-amp-cased-letter"),
    pytest.param(r"^\p{L&}$", "ª", False, id="p-L-amp-not-other-letter"),
    pytest.param(r"^\P{L&}$", "ª", True, id="P-L-amp-negated"),
    pytest.param(r"^\p{Xan}+$", "a1é", True, id="p-Xan-alphanumeric"),
    pytest.param(r"^\p{Xwd}+$", "a_1", True, id="p-Xwd-word"),
    pytest.param(r"^[\p{Xsp}x]+$", " x\t", True, id="p-Xsp-in-a-class"),
    pytest.param(r"^\p{^Xan}$", "-", True, id="p-caret-Xan-negated"),
    # code points
    pytest.param(r"^caf\x{00e9}$", "café", True, id="x-braced-code-point"),
    pytest.param(r"^\x{1F600}$", "\U0001f600", True, id="x-braced-astral"),
    pytest.param(r"^[\x{e9}-\x{ff}]$", "ñ", True, id="x-braced-in-a-range"),
    pytest.param(r"^\xe9$", "é", True, id="x-two-digits"),
    pytest.param(r"^a\x0$", "a\x00", True, id="x-one-digit"),
    pytest.param(r"^\o{351}$", "é", True, id="o-braced-octal"),
    pytest.param(r"^\N{U+00e9}$", "é", True, id="N-U-plus-code-point"),
    pytest.param(r"^\e$", "\x1b", True, id="e-escape"),
    pytest.param(r"^\cA$", "\x01", True, id="c-control"),
    # possessive quantifiers and atomic groups
    pytest.param(r"^a++b", "aab", True, id="possessive-then-other"),
    pytest.param(r"^a++a", "aaa", False, id="possessive-gives-nothing-back"),
    pytest.param(r"^\d*+\d", "123", False, id="possessive-star"),
    pytest.param(r"^(?>a|ab)c", "abc", False, id="atomic-group-does-not-backtrack"),
    pytest.param(r"^(?:a|ab)c", "abc", True, id="plain-group-backtracks"),
    # anchors and newlines
    pytest.param(r"^abc$", "abc\n", True, id="dollar-before-final-newline"),
    pytest.param(r"^a\Z", "a\n", True, id="Z-before-final-newline"),
    pytest.param(r"^a\z", "a\n", False, id="z-very-end"),
    pytest.param(r"^a\Rb$", "a\r\nb", True, id="R-any-newline"),
    pytest.param(r"^\v$", "\u2028", True, id="v-vertical-space"),
    pytest.param(r"^\V$", "a", True, id="V-not-vertical-space"),
    pytest.param(r"^\h$", "\u00a0", True, id="h-no-break-space"),
    pytest.param(r"^\N$", "a", True, id="N-not-newline"),
    pytest.param(r"^\s$", "\u3000", True, id="s-ideographic-space"),
    pytest.param(r"^\s$", "\x1c", False, id="s-not-file-separator"),
    pytest.param(r"^\s$", "\x85", False, id="s-not-next-line"),
    pytest.param(r"^\S$", "\x85", True, id="S-next-line"),
    pytest.param(r"^[\s,]+$", " ,\t", True, id="s-in-a-class"),
    pytest.param(r"^[^\s]+$", "a\x1c", True, id="s-in-a-negated-class"),
    pytest.param(r"^\N{2}$", "ab", True, id="N-with-a-quantifier"),
    pytest.param(r"^\N$", "\n", False, id="N-refuses-newline"),
    # Unicode classes (UCP)
    pytest.param(r"^\d+$", "١٢", True, id="d-arabic-indic-digits"),
    pytest.param(r"^\w+$", "über", True, id="w-letters-with-accents"),
    pytest.param(r"^[[:alpha:]]+$", "éa", True, id="posix-alpha-unicode"),
    pytest.param(r"^[[:digit:]]$", "٣", True, id="posix-digit-unicode"),
    pytest.param(r"^[[:^digit:]]$", "a", True, id="posix-negated"),
    pytest.param(r"^[[:punct:]]$", "!", True, id="posix-punct"),
    pytest.param(r"^[[:upper:][:digit:]]+$", "A1É", True, id="two-posix-classes"),
    # quoting, names, delimiters
    pytest.param(r"^\Q.*\E$", ".*", True, id="Q-E-literal"),
    pytest.param(r"^\Q.*\E$", "ab", False, id="Q-E-not-a-wildcard"),
    pytest.param(r"^\Q#\E$", "#", True, id="Q-E-with-a-hash"),
    pytest.param(r"^(?<y>\d{4})-\k<y>$", "2020-2020", True, id="named-group-k-angle"),
    pytest.param(r"^(?'y'\d)\k{y}$", "11", True, id="quoted-name-k-brace"),
    pytest.param(r"^(?P<y>\d)(?P=y)$", "22", True, id="python-style-names"),
    pytest.param(r"^#[0-9]+$", "#12", True, id="hash-is-escaped-for-the-delimiter"),
    pytest.param(r"^\\#$", "\\#", True, id="escaped-backslash-then-hash"),
    pytest.param(r"^[]a]$", "]", True, id="bracket-first-in-class"),
    pytest.param(r"^[!--]$", "#", True, id="a-range-ending-at-a-hyphen"),
    pytest.param(r"^[\w-]+$", "a-b", True, id="class-escape-then-final-hyphen"),
    pytest.param(r"^[-\d]+$", "-1", True, id="leading-hyphen-then-class-escape"),
    pytest.param(r"^[^-\d]+$", "ab", True, id="negated-leading-hyphen-then-class-escape"),
    pytest.param(r"^[a&&b]$", "&", True, id="double-ampersand-in-class-is-literal"),
    pytest.param(r"(?<=a|bc)x", "bcx", True, id="lookbehind-alternatives-of-two-lengths"),
    pytest.param(r"a(?i)b", "aB", True, id="inline-flag-from-its-position-on"),
    pytest.param(r"a(?i)b", "AB", False, id="inline-flag-not-before-its-position"),
    pytest.param(r"[0-9]", "abc1def", True, id="unanchored"),
    pytest.param(r"^ABC$", "abc", False, id="case-sensitive"),
]


@pytest.mark.parametrize(("pattern", "subject", "expected"), MATCHING_ROWS)
def test_a_pattern_matches_as_preg_match_with_u(pattern: str, subject: str, expected: bool) -> None:
    assert pattern_matches(pattern, subject) is expected


REFUSED_ROWS = [
    pytest.param(r"\u00e9", id="u-escape"),
    pytest.param(r"\U000000e9", id="U-escape"),
    pytest.param(r"\L", id="L-escape"),
    pytest.param(r"\lx", id="l-escape"),
    pytest.param(r"\N{LATIN SMALL LETTER E WITH ACUTE}", id="N-name"),
    pytest.param(r"^\#[0-9]+$", id="escaped-hash-closes-the-delimiter"),
    pytest.param("abc\\", id="trailing-backslash"),
    pytest.param(r"\x{110000}", id="beyond-unicode"),
    pytest.param(r"\x{zz}", id="x-braced-not-hex"),
    pytest.param(r"\cé", id="c-non-ascii"),
    pytest.param(r"(unclosed", id="unclosed-group"),
    pytest.param(r"[a-", id="unclosed-class"),
    pytest.param(r"a**", id="nothing-to-repeat"),
    pytest.param(r"\k<1a>", id="bad-group-name"),
    pytest.param(r"[\w-.]", id="range-from-a-class-escape"),
    pytest.param(r"[a-\d]", id="range-to-a-class-escape"),
]


@pytest.mark.parametrize("pattern", REFUSED_ROWS)
def test_a_pattern_pcre_refuses_matches_nothing(pattern: str) -> None:
    assert compile_schema_pattern(pattern) is None
    assert pattern_matches(pattern, "é") is None


@pytest.mark.parametrize("pattern", REFUSED_ROWS)
def test_a_refused_pattern_fails_validation_with_a_misuse_notice(pattern: str) -> None:
    seen: list[tuple[str, str]] = []
    with report_misuse_to(lambda function, message: seen.append((function, message))):
        error = validate_value_from_schema("é", {"type": "string", "pattern": pattern}, "p")

    assert not isinstance(error, bool)
    assert error.code == "rest_invalid_pattern"
    assert error.message == f"p does not match pattern {pattern}."
    assert seen == [
        (
            "rest_validate_value_from_schema",
            f"The pattern {pattern} is not a valid regular expression.",
        )
    ]


def test_pattern_properties_use_the_same_pcre_reading() -> None:
    schema = {
        "type": "object",
        "patternProperties": {r"^\p{Lu}": {"type": "integer"}},
        "additionalProperties": False,
    }

    assert validate_value_from_schema({"Éa": 1}, schema, "p") is True
    error = validate_value_from_schema({"Éa": "x"}, schema, "p")
    assert not isinstance(error, bool)
    assert error.message == "p[Éa] is not of type integer."


def test_a_scalar_pattern_is_read_as_php_reads_it() -> None:
    assert pattern_matches(1, "a1") is True
    assert pattern_matches(True, "x1") is True  # (string) true is "1"


@pytest.mark.parametrize(
    ("pattern", "engine"),
    [
        pytest.param(r"^[a-z0-9-]+$", "re", id="plain-class"),
        pytest.param(r"^\S+\s\d+\.\d*$", "re", id="plain-escapes"),
        pytest.param(r"^a++(?>b)", "re", id="possessive-and-atomic"),
        pytest.param(r"^\p{L}", "regex", id="unicode-property"),
        pytest.param(r"^[[:alpha:]]", "regex", id="posix-class"),
        pytest.param(r"^a{,3}$", "regex", id="brace-comma"),
        pytest.param(r"^(?<n>a)", "regex", id="named-group"),
        pytest.param(r"^a\Z", "regex", id="Z-anchor"),
    ],
)
def test_plain_patterns_are_compiled_by_re_and_the_others_by_regex(
    pattern: str, engine: str
) -> None:
    compiled = compile_schema_pattern(pattern)
    assert compiled is not None
    assert type(compiled).__module__.lstrip("_") == engine


def test_compiled_patterns_are_cached() -> None:
    assert compile_schema_pattern(r"^\p{L}+$") is compile_schema_pattern(r"^\p{L}+$")


def test_the_translation_leaves_plain_patterns_alone() -> None:
    assert translate_pcre_u(r"^[a-z0-9_-]+(?:\.[a-z]+)?$") == r"^[a-z0-9_-]+(?:\.[a-z]+)?$"
